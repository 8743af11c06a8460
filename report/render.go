package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/jedib0t/go-pretty/v6/table"
	"github.com/jedib0t/go-pretty/v6/text"

	"github.com/socialwebcomputer/doctor/checks"
)

// Formats lists the -o values.
var Formats = []string{"table", "json", "markdown"}

// Render writes the report in one format. colour applies to table only and
// is the caller's decision (a TTY, and NO_COLOR unset).
func Render(w io.Writer, rep *Report, format string, colour bool) error {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(rep)
	case "table":
		return renderTable(w, rep, colour)
	case "markdown", "md":
		return renderMarkdown(w, rep)
	}
	return fmt.Errorf("unknown output format %q (want one of %s)", format, strings.Join(Formats, ", "))
}

var severityColour = map[checks.Severity]text.Colors{
	checks.Critical: {text.FgHiRed, text.Bold},
	checks.Error:    {text.FgRed},
	checks.Warning:  {text.FgYellow},
	checks.Info:     {text.FgCyan},
}

func renderTable(w io.Writer, rep *Report, colour bool) error {
	paint := func(s checks.Severity, v string) string {
		if !colour {
			return v
		}
		return severityColour[s].Sprint(v)
	}
	if len(rep.Findings) == 0 {
		fmt.Fprintln(w, "No findings.")
	} else {
		t := table.NewWriter()
		t.SetOutputMirror(w)
		t.SetStyle(table.StyleLight)
		t.Style().Options.SeparateRows = true
		t.AppendHeader(table.Row{"#", "SEVERITY", "CHECK", "FINDING"})
		t.SetColumnConfigs([]table.ColumnConfig{{Number: 4, WidthMax: findingWidth}})
		for _, f := range rep.Findings {
			indent := strings.Repeat("  ", f.depth)
			check := f.Check
			if f.depth > 0 {
				check = indent + "└ " + f.Check
			}
			if f.Runner != nil {
				check += "\n" + indent + runnerTag(f.Runner)
			}
			t.AppendRow(table.Row{f.Rank, paint(f.Severity, strings.ToUpper(f.Severity.String())), check, wrap(findingText(f), findingWidth)})
		}
		t.Render()
	}
	renderTail(w, rep)
	return nil
}

// findingText is the body of one finding: the cause, its evidence, the fix.
// Consequences get the cause alone; their root carries the fix.
func findingText(f Finding) string {
	var b strings.Builder
	b.WriteString(f.Cause)
	for _, e := range f.Evidence {
		fmt.Fprintf(&b, "\n  %s: %s", e.Source, e.Detail)
	}
	if f.CausedBy != nil {
		fmt.Fprintf(&b, "\n(follows from %s)", *f.CausedBy)
	} else if f.Fix != "" {
		b.WriteString("\nFix: " + f.Fix)
	}
	b.WriteString("\nSee " + f.Docs)
	return b.String()
}

func renderTail(w io.Writer, rep *Report) {
	s := rep.Summary
	fmt.Fprintf(w, "%d of %s ran: %d pass, %d fail, %d unknown, %d skipped. Findings: %d critical, %d error, %d warning, %d info (%s). Exit %d.\n",
		s.Ran, plural(s.Checks, "check"), s.Pass, s.Fail, s.Unknown, s.Skipped, s.Critical, s.Error, s.Warning, s.Info,
		plural(s.Roots, "root cause"), s.ExitCode)
	for _, why := range s.Incomplete {
		fmt.Fprintf(w, "Incomplete: %s.\n", why)
	}
	for _, c := range rep.Checks {
		if c.Status == checks.StatusUnknown || rep.Verbose {
			id := c.ID
			if c.Runner != nil {
				id += " " + runnerTag(c.Runner)
			}
			line := fmt.Sprintf("%-8s %s (%dms)", c.Status, id, c.DurationMs)
			if c.Reason != "" {
				line += ": " + c.Reason
			}
			fmt.Fprintln(w, line)
		}
	}
	for _, e := range rep.CleanupErrors {
		fmt.Fprintf(w, "cleanup failed, remove by hand: %s\n", e)
	}
	for _, ig := range rep.Ignores {
		if ig.Matched == 0 {
			fmt.Fprintf(w, "--ignore %s matched nothing (%s): remove it\n", ig.Check, ig.Reason)
		} else {
			fmt.Fprintf(w, "--ignore %s hid %d finding(s): %s\n", ig.Check, ig.Matched, ig.Reason)
		}
	}
}

func renderMarkdown(w io.Writer, rep *Report) error {
	fmt.Fprintf(w, "## doctor report\n\n")
	fmt.Fprintf(w, "doctor %s, started %s, exit code %d.\n\n", rep.Doctor.Version, rep.StartedAt.Format("2006-01-02T15:04:05Z07:00"), rep.Summary.ExitCode)
	if len(rep.Findings) == 0 {
		fmt.Fprintln(w, "No findings.")
	} else {
		t := table.NewWriter()
		t.AppendHeader(table.Row{"#", "Severity", "Check", "Runner", "Finding", "Caused by"})
		for _, f := range rep.Findings {
			by := ""
			if f.CausedBy != nil {
				by = *f.CausedBy
			}
			t.AppendRow(table.Row{f.Rank, f.Severity.String(), fmt.Sprintf("[%s](%s)", f.Check, f.Docs), runnerCell(f.Runner), mdCell(f.Title), by})
		}
		fmt.Fprintln(w, t.RenderMarkdown())
		for _, f := range rep.Findings {
			on := ""
			if f.Runner != nil {
				on = " for " + f.Runner.String()
			}
			fmt.Fprintf(w, "\n### %d. %s%s — %s (%s)\n\n%s\n", f.Rank, f.Check, on, f.Title, f.Severity, f.Cause)
			if len(f.Evidence) > 0 {
				fmt.Fprintln(w)
				for _, e := range f.Evidence {
					fmt.Fprintf(w, "- `%s`: %s\n", e.Source, e.Detail)
				}
			}
			if f.CausedBy != nil {
				fmt.Fprintf(w, "\nFollows from `%s`.\n", *f.CausedBy)
			} else if f.Fix != "" {
				fmt.Fprintf(w, "\n**Fix:** %s\n", f.Fix)
			}
		}
	}
	fmt.Fprint(w, "\n<details><summary>Checks</summary>\n\n")
	t := table.NewWriter()
	t.AppendHeader(table.Row{"Check", "Runner", "Status", "Reason"})
	for _, c := range rep.Checks {
		t.AppendRow(table.Row{c.ID, runnerCell(c.Runner), string(c.Status), mdCell(c.Reason)})
	}
	fmt.Fprintln(w, t.RenderMarkdown())
	fmt.Fprintln(w, "\n</details>")
	var tail strings.Builder
	renderTail(&tail, rep)
	fmt.Fprintf(w, "\n%s", tail.String())
	return nil
}

// runnerTag is the short form a table cell has room for: `#2 "b"`.
func runnerTag(r *checks.RunnerRef) string {
	if r.Name == "" {
		return fmt.Sprintf("#%d", r.Index)
	}
	return fmt.Sprintf("#%d %q", r.Index, r.Name)
}

func runnerCell(r *checks.RunnerRef) string {
	if r == nil {
		return "host"
	}
	return runnerTag(r)
}

// mdCell keeps a value on one line of its markdown table cell; go-pretty
// escapes the pipes itself, so escaping them here too would break the cell.
func mdCell(s string) string {
	return strings.ReplaceAll(s, "\n", " ")
}

// findingWidth keeps the table inside a 140-column terminal.
const findingWidth = 96

// wrap breaks each line at spaces so no line exceeds width; the table's own
// enforcer would cut words in half.
func wrap(s string, width int) string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		lead := line[:len(line)-len(strings.TrimLeft(line, " "))]
		cur := ""
		for _, w := range strings.Fields(line) {
			switch {
			case cur == "":
				cur = lead + w
			case len(cur)+1+len(w) > width:
				out = append(out, cur)
				cur = lead + "  " + w
			default:
				cur += " " + w
			}
		}
		out = append(out, cur)
	}
	return strings.Join(out, "\n")
}
