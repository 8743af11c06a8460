package cli

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/all"
	"github.com/socialwebcomputer/doctor/internal/app/symptom"
	"github.com/socialwebcomputer/doctor/internal/text/safetext"
	"github.com/socialwebcomputer/doctor/report"
)

func (a *app) whyCommand() *cobra.Command {
	f := &runFlags{why: true}
	cmd := &cobra.Command{
		Use:   "why [FILE|-]",
		Short: "Name the checks a job log's or runner log's error lines point to, and run them",
		Long: `Read a job log or a runner log (a file, - for stdin, or --journal for the
runner service's journal) and match every line against every check's
documented symptoms. Print each line that names a check (its number, the
line without colours and section markers, secrets redacted), the check,
and its cause and fix; then run those checks, and what they require, on
this host, as doctor run would with --only, and report their findings
first. -o json lists each match as {source, lineNumber, line, check}.

The file is read as given, not under --root: at most 64 MiB, each line up
to 64 KiB; a FIFO or a directory is refused (pipe a stream in with -).
A log with no known symptom names no check, runs none, and exits 3:
nothing was proved, healthy or not. Otherwise the exit code is doctor
run's for the checks that ran.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usageError("doctor why reads one log: %s", strings.Join(args, " "))
			}
			if len(args) == 0 && !f.journal {
				return usageError("doctor why needs a log: a FILE, - for standard input, or --journal")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				f.whyArg = args[0]
			}
			code, err := a.run(cmd, f)
			a.code = code
			return err
		},
	}
	registerRunFlags(cmd, f)
	return cmd
}

// noSymptom ends a doctor why whose logs name no check: nothing runs, and
// the exit code says nothing was proved (a healthy-looking log is not a
// healthy runner).
func (a *app) noSymptom(f *runFlags, scans []*symptom.Scan, started time.Time) (int, error) {
	rep := report.Build(&checks.Result{StartedAt: started}, nil, resolvedVersion(), started)
	rep.Summary.Incomplete = append([]string{"no line of the log matches a known symptom"}, rep.Summary.Incomplete...)
	logReport(rep, scans)
	switch f.output {
	case "json", "yaml":
		if err := report.RenderWith(a.io.Out, rep, f.output, report.Options{}); err != nil {
			return 0, usageError("%v", err)
		}
	default:
		md := f.output == "markdown" || f.output == "md"
		for _, s := range scans {
			if s.Lines == 1 {
				fmt.Fprintf(a.io.Out, "%s: no check explains this line.\n", logSource(md, s.Source))
				continue
			}
			fmt.Fprintf(a.io.Out, "%s: none of its %s matches a known symptom.\n", logSource(md, s.Source), plural(s.Lines, "line"))
		}
		fmt.Fprintf(a.io.Out, "doctor why names no check and ran none (exit %d: nothing was proved). doctor run runs every check.\n", rep.Summary.ExitCode)
	}
	return rep.Summary.ExitCode, nil
}

// printMatches is what the logs said, before the report of a table,
// wide or markdown output: each matched line with the checks it names
// (doctor why: with their cause and fix), or one line per log for
// doctor run --log.
func (a *app) printMatches(f *runFlags, scans []*symptom.Scan, named []string) {
	if len(scans) == 0 || f.output == "json" || f.output == "yaml" {
		return
	}
	w := a.io.Out
	md := f.output == "markdown" || f.output == "md"
	byID := map[string]*checks.Check{}
	for _, c := range all.Checks() {
		byID[c.ID] = c
	}
	if !f.why {
		for _, s := range scans {
			if len(s.Checks) == 0 {
				fmt.Fprintf(w, "%s: none of its %s matches a known symptom.\n", logSource(md, s.Source), plural(s.Lines, "line"))
				continue
			}
			fmt.Fprintf(w, "%s: %s %s; their findings rank first.\n", logSource(md, s.Source),
				plural(len(s.Matches)+s.Omitted, "line"), nameVerb(len(s.Matches)+s.Omitted)+" "+strings.Join(s.Checks, ", "))
		}
		fmt.Fprintln(w)
		return
	}
	explained := map[string]bool{}
	for _, s := range scans {
		if md {
			fmt.Fprintf(w, "## %s\n\n", report.MarkdownText(s.Source))
		}
		fmt.Fprintf(w, "%s: %d of its %s name a check.\n\n", logSource(md, s.Source), len(s.Matches)+s.Omitted, plural(s.Lines, "line"))
		for _, x := range s.Matches {
			printMatch(w, md, x, byID, explained)
		}
		if s.Omitted > 0 {
			fmt.Fprintf(w, "… and %s more that repeat these symptoms.\n\n", plural(s.Omitted, "line"))
		}
		if s.Truncated {
			fmt.Fprintf(w, "Only the first %d MiB of %s were read.\n\n", symptom.MaxInput>>20, logSource(md, s.Source))
		}
	}
	fmt.Fprintf(w, "Running %s, and what they require, on this host:\n\n", strings.Join(named, ", "))
}

func printMatch(w io.Writer, md bool, x symptom.Match, byID map[string]*checks.Check, explained map[string]bool) {
	if md {
		fmt.Fprintf(w, "- line %d: `%s`\n", x.Line, report.MarkdownCode(x.Text))
	} else {
		fmt.Fprintf(w, "%6d  %s\n", x.Line, safetext.Line(x.Text))
	}
	shared := map[string]bool{}
	for _, o := range x.OneOf {
		for _, c := range o.Causes {
			shared[c] = true
		}
	}
	for _, id := range x.Checks {
		if !shared[id] {
			printCause(w, md, "", id, byID, explained)
		}
	}
	// An ambiguous line names every cause and what tells them apart,
	// never one of them alone.
	for _, o := range x.OneOf {
		if md {
			fmt.Fprintf(w, "  - one of these causes; the line alone cannot tell which:\n")
		} else {
			fmt.Fprintf(w, "        one of these causes; the line alone cannot tell which:\n")
		}
		for _, c := range o.Causes {
			printCause(w, md, "  ", c, byID, explained)
		}
		if md {
			fmt.Fprintf(w, "    - To tell them apart: %s\n", o.Tell)
		} else {
			fmt.Fprintf(w, "          To tell them apart: %s\n", o.Tell)
		}
	}
	fmt.Fprintln(w)
}

// printCause is one cause of a matched line: a check with its title, and
// its cause and fix the first time it is named; or a cause no check probes,
// in words. indent nests the causes of an ambiguous verdict.
func printCause(w io.Writer, md bool, indent, id string, byID map[string]*checks.Check, explained map[string]bool) {
	c := byID[id]
	if c == nil {
		if md {
			fmt.Fprintf(w, "%s  - %s\n", indent, report.MarkdownText(id))
		} else {
			fmt.Fprintf(w, "%s        → %s\n", indent, id)
		}
		return
	}
	if md {
		fmt.Fprintf(w, "%s  - [%s](%s): %s\n", indent, id, checks.DocsAnchor(id), c.Title)
	} else {
		fmt.Fprintf(w, "%s        → %s: %s\n", indent, id, c.Title)
	}
	if explained[id] {
		return
	}
	explained[id] = true
	// The fix is the run's, with this host's values, in the report below:
	// never the catalog's generic one beside it.
	if md {
		fmt.Fprintf(w, "%s    - Cause: %s\n", indent, c.Doc.Cause)
	} else {
		fmt.Fprintf(w, "%s          Cause: %s\n", indent, c.Doc.Cause)
	}
}

// logSource is a log's name (a path the operator gave, the runner's unit)
// as a line of the output begins with it: escaped, as markdown or as text.
func logSource(md bool, source string) string {
	if md {
		return report.MarkdownLine(source)
	}
	return safetext.Line(source)
}

// plural is "1 line", "2 lines".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func nameVerb(n int) string {
	if n == 1 {
		return "names"
	}
	return "name"
}
