package cli

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/all"
	"github.com/socialwebcomputer/doctor/cmd/doctor/app/symptom"
	"github.com/socialwebcomputer/doctor/internal/text/safetext"
	"github.com/socialwebcomputer/doctor/internal/text/wrap"
	"github.com/socialwebcomputer/doctor/report"
)

func (a *app) whyCommand() *cobra.Command {
	f := &runFlags{why: true, program: a.program()}
	cmd := &cobra.Command{
		Use:   "why [FILE|-|'LINE']",
		Short: "Name the checks a job log's or runner log's error lines point to, and run them",
		Long: `Read a job log or a runner log (a file, - for stdin, a line pasted in
quotes, or --journal for the runner service's journal) and match every line
against every check's documented symptoms. Print each line that names a
check (its number, the line without colours and section markers, secrets
redacted), the check, and its cause and fix; then run those checks, and what
they require, on this host, as doctor run would with --only, and report their
findings first. When a check the log names passes now, say so: what the log
shows is not happening at this moment. -o json lists each match as {source,
lineNumber, line, check}.

A line is pasted as the argument when no file of that name exists and it has
a space (and does not start with /, ./, ../ or ~/).

The file is read as given, not under --root: at most 64 MiB, each line up
to 64 KiB; a FIFO or a directory is refused (pipe a stream in with -).
A log with no known symptom names no check, runs none, and exits 3:
nothing was proved, healthy or not. Otherwise the exit code is doctor
run's for the checks that ran.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usageError("doctor why reads one log: a FILE, -, or one line in quotes (doctor why 'ERROR: Job failed …'), not %d arguments", len(args))
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
	if f.job != nil {
		rep.Job = f.job.found
	}
	switch f.output {
	case "json", "yaml":
		if err := report.RenderWith(a.io.Out, rep, f.output, report.Options{}); err != nil {
			return 0, usageError("%v", err)
		}
	default:
		md := f.output == "markdown" || f.output == "md"
		a.jobHeader(a.io.Out, f)
		p := para(a.io.Out, md, a.width())
		for _, s := range scans {
			if s.Lines == 1 {
				p("%s: no check explains this line.", logSource(md, s.Source))
				continue
			}
			p("%s: none of its %s matches a known symptom.", logSource(md, s.Source), plural(s.Lines, "line"))
		}
		p("doctor %s names no check and ran none (exit %d: nothing was proved). doctor run runs every check.", whyName(f), rep.Summary.ExitCode)
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
	width := a.width()
	if md {
		width = 0 // markdown's paragraphs are the reader's to wrap
	}
	a.jobHeader(w, f)
	p := para(w, md, width)
	byID := map[string]*checks.Check{}
	for _, c := range all.Checks() {
		byID[c.ID] = c
	}
	if !f.why {
		for _, s := range scans {
			if len(s.Checks) == 0 {
				p("%s: none of its %s matches a known symptom.", logSource(md, s.Source), plural(s.Lines, "line"))
				continue
			}
			p("%s: %s %s; their findings rank first.", logSource(md, s.Source),
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
		if n := len(s.Matches) + s.Omitted; s.Lines == 1 {
			p("%s names a check.\n", logSource(md, s.Source))
		} else {
			p("%s: %d of its %s %s a check.\n", logSource(md, s.Source), n, plural(s.Lines, "line"), nameVerb(n))
		}
		for _, x := range s.Matches {
			printMatch(w, md, width, a.docsURL(f.docsURL), x, byID, explained)
		}
		if s.Omitted > 0 {
			p("… and %s more that repeat these symptoms.\n", plural(s.Omitted, "line"))
		}
		if s.Truncated {
			p("Only the first %d MiB of %s were read.\n", symptom.MaxInput>>20, logSource(md, s.Source))
		}
	}
	what := "what they require"
	if len(named) == 1 {
		what = "what it requires"
	}
	where := "on this host"
	if f.job != nil && f.job.found != nil && f.job.found.Entry != nil {
		where = "for " + logSource(md, f.job.found.Entry.String()) + " on this host"
	}
	p("Running %s, and %s, %s:\n", strings.Join(named, ", "), what, where)
}

// whyName is the command that reads a log: why, or job.
func whyName(f *runFlags) string {
	if f.job != nil {
		return "job"
	}
	return "why"
}

// printPassing says which checks the logs name pass now: the symptom the
// log shows is not happening at this moment (it was when the log was
// written, or it happens elsewhere).
func (a *app) printPassing(f *runFlags, rep *report.Report, named []string) {
	if !f.why || f.output == "json" || f.output == "yaml" {
		return
	}
	p := para(a.io.Out, f.output == "markdown" || f.output == "md", a.width())
	for _, id := range passingNow(rep, named) {
		p("%s passes now: what the log shows is not happening at this moment.\n", id)
	}
}

// passingNow are the named checks that ran and passed, for every runner
// they ran for.
func passingNow(rep *report.Report, named []string) []string {
	var out []string
	for _, id := range named {
		ran, pass := false, true
		for _, c := range rep.Checks {
			if c.ID != id {
				continue
			}
			ran = true
			pass = pass && c.Status == checks.StatusPass
		}
		if ran && pass {
			out = append(out, id)
		}
	}
	return out
}

// para writes a paragraph (one line of format, and any blank lines it ends
// with) wrapped to width at spaces, a continuation indented by two; md, or
// width 0, leaves it whole.
func para(w io.Writer, md bool, width int) func(format string, a ...any) {
	if md {
		width = 0
	}
	return func(format string, a ...any) {
		s := fmt.Sprintf(format, a...)
		body := strings.TrimRight(s, "\n")
		for _, l := range wrap.Words(body, width, "", "  ") {
			fmt.Fprintln(w, l)
		}
		io.WriteString(w, s[len(body):])
	}
}

// hang writes a line laid out with columns, wrapped at width under rest
// (wrap.Hang).
func hang(w io.Writer, width int, rest, s string) {
	for _, l := range wrap.Hang(s, width, rest) {
		fmt.Fprintln(w, l)
	}
}

func printMatch(w io.Writer, md bool, width int, docs string, x symptom.Match, byID map[string]*checks.Check, explained map[string]bool) {
	if md {
		fmt.Fprintf(w, "- line %d: `%s`\n", x.Line, report.MarkdownCode(x.Text))
	} else {
		hang(w, width, "        ", fmt.Sprintf("%6d  %s", x.Line, safetext.Line(x.Text)))
	}
	shared := map[string]bool{}
	for _, o := range x.OneOf {
		for _, c := range o.Causes {
			shared[c] = true
		}
	}
	for _, id := range x.Checks {
		if !shared[id] {
			printCause(w, md, width, docs, "", id, byID, explained)
		}
	}
	// An ambiguous line names every cause and what tells them apart,
	// never one of them alone.
	for _, o := range x.OneOf {
		if md {
			fmt.Fprintf(w, "  - one of these causes; the line alone cannot tell which:\n")
		} else {
			hang(w, width, "          ", "        one of these causes; the line alone cannot tell which:")
		}
		for _, c := range o.Causes {
			printCause(w, md, width, docs, "  ", c, byID, explained)
		}
		if md {
			fmt.Fprintf(w, "    - To tell them apart: %s\n", o.Tell)
		} else {
			for _, l := range wrap.Words(o.Tell, width, "          To tell them apart: ", "            ") {
				fmt.Fprintln(w, l)
			}
		}
	}
	fmt.Fprintln(w)
}

// printCause is one cause of a matched line: a check with its title, and
// its cause and fix the first time it is named; or a cause no check probes,
// in words. indent nests the causes of an ambiguous verdict.
func printCause(w io.Writer, md bool, width int, docs, indent, id string, byID map[string]*checks.Check, explained map[string]bool) {
	c := byID[id]
	under := indent + "          "
	if c == nil {
		if md {
			fmt.Fprintf(w, "%s  - %s\n", indent, report.MarkdownText(id))
		} else {
			hang(w, width, under, fmt.Sprintf("%s        → %s", indent, id))
		}
		return
	}
	if md {
		// A link only to a published page: a README anchor is relative,
		// and broken in the ticket the markdown is pasted into.
		if docs != "" {
			fmt.Fprintf(w, "%s  - [%s](%s): %s\n", indent, id, docsLink(docs, id), c.Title)
		} else {
			fmt.Fprintf(w, "%s  - `%s`: %s\n", indent, id, c.Title)
		}
	} else {
		hang(w, width, under, fmt.Sprintf("%s        → %s: %s", indent, id, c.Title))
	}
	if explained[id] {
		return
	}
	explained[id] = true
	// The fix is the run's, with this host's values, in the report below:
	// never the catalog's generic one beside it.
	if md {
		fmt.Fprintf(w, "%s    - Cause: %s\n", indent, c.Doc.Cause)
		return
	}
	for _, l := range wrap.Words(c.Doc.Cause, width, under+"Cause: ", under+"  ") {
		fmt.Fprintln(w, l)
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
