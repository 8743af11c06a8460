package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/jedib0t/go-pretty/v6/table"

	"github.com/socialwebcomputer/doctor/checks"
)

// renderMarkdown is the report as a GitLab issue: a header saying which
// host, runners, doctor and flags; each finding a section titled by what
// was found (not by the check's healthy-state title); fixes in code
// fences; check docs by `doctor explain ID`, since a relative README link
// is dead in a ticket; passed and skipped checks collapsed at the end.
func renderMarkdown(w io.Writer, rep *Report) error {
	s := rep.Summary
	fmt.Fprintf(w, "## doctor: %s\n\n", headline(rep))
	t := table.NewWriter()
	t.AppendHeader(table.Row{"", ""})
	host := rep.Host
	if host == "" {
		host = "(unknown)"
	}
	t.AppendRow(table.Row{"Host", "`" + mdCode(host) + "`"})
	t.AppendRow(table.Row{"Runners", mdCell(runnersLine(rep.Runners))})
	t.AppendRow(table.Row{"doctor", "`" + mdCode(rep.Doctor.Version) + "`"})
	t.AppendRow(table.Row{"Time", rep.StartedAt.UTC().Format("2006-01-02T15:04:05Z07:00")})
	if len(rep.Args) > 0 {
		t.AppendRow(table.Row{"Flags", "`" + mdCode(strings.Join(rep.Args, " ")) + "`"})
	}
	if rep.Bundle != nil {
		t.AppendRow(table.Row{"Bundle", fmt.Sprintf("`%s`, recorded by doctor %s, analyzed offline", mdCode(rep.Bundle.File), mdCode(rep.Bundle.Doctor))})
	}
	t.AppendRow(table.Row{"Checks", fmt.Sprintf("%d of %d ran: %d pass, %d fail, %d unknown, %d skipped", s.Ran, s.Checks, s.Pass, s.Fail, s.Unknown, s.Skipped)})
	t.AppendRow(table.Row{"Exit code", fmt.Sprint(s.ExitCode)})
	fmt.Fprintln(w, t.RenderMarkdown())
	for _, why := range s.Incomplete {
		fmt.Fprintf(w, "\n> **Incomplete:** %s.\n", mdText(why))
	}
	for _, o := range rep.Overrides {
		fmt.Fprintf(w, "\n> `%s %s` was used instead of %s.\n", o.Flag, mdCode(o.Value), mdText(o.Replaces))
	}
	if len(rep.Findings) == 0 {
		fmt.Fprintln(w, "\nNo findings.")
	} else {
		// The findings at a glance, root causes first, as ranked.
		t := table.NewWriter()
		t.AppendHeader(table.Row{"#", "Severity", "Check", "Runner", "Finding", "Follows from"})
		for _, f := range rep.Findings {
			by := ""
			if f.CausedBy != nil {
				by = "`" + *f.CausedBy + "`"
			}
			t.AppendRow(table.Row{f.Rank, f.Severity.String(), "`" + f.Check + "`", runnerCell(f.Runner), mdCell(FindingTitle(f)), by})
		}
		fmt.Fprintf(w, "\n%s\n", t.RenderMarkdown())
	}
	for _, f := range rep.Findings {
		renderMarkdownFinding(w, rep, f)
	}
	var unknown []CheckStatus
	for _, c := range rep.Checks {
		if c.Status == checks.StatusUnknown {
			unknown = append(unknown, c)
		}
	}
	if len(unknown) > 0 {
		fmt.Fprintf(w, "\n### Could not check\n\n")
		for _, c := range unknown {
			fmt.Fprintf(w, "- `%s`%s: %s\n", c.ID, onRunner(c.Runner), mdText(c.Reason))
		}
	}
	for _, group := range []struct {
		status checks.Status
		title  string
	}{{checks.StatusPass, "Passed"}, {checks.StatusSkipped, "Skipped"}} {
		var rows []CheckStatus
		for _, c := range rep.Checks {
			if c.Status == group.status {
				rows = append(rows, c)
			}
		}
		if len(rows) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n<details><summary>%s: %d</summary>\n\n", group.title, len(rows))
		t := table.NewWriter()
		t.AppendHeader(table.Row{"Check", "Runner", "Reason"})
		for _, c := range rows {
			t.AppendRow(table.Row{"`" + c.ID + "`", runnerCell(c.Runner), mdCell(c.Reason)})
		}
		fmt.Fprintln(w, t.RenderMarkdown())
		fmt.Fprintln(w, "\n</details>")
	}
	var tail strings.Builder
	renderTail(&tail, &Report{Summary: rep.Summary, Ignores: rep.Ignores, CleanupErrors: rep.CleanupErrors}, utf8Glyphs, 0)
	fmt.Fprintf(w, "\n%s", mdText(tail.String()))
	return nil
}

func renderMarkdownFinding(w io.Writer, rep *Report, f Finding) {
	fmt.Fprintf(w, "\n### %d. %s\n\n", f.Rank, mdText(FindingTitle(f)))
	meta := []string{"**" + f.Severity.String() + "**", "`" + f.Check + "`"}
	if f.Runner != nil {
		meta = append(meta, mdText(f.Runner.String()))
	} else {
		meta = append(meta, "host")
	}
	if f.Change != "" {
		meta = append(meta, "**"+f.Change+"**")
	}
	meta = append(meta, "fingerprint `"+f.Fingerprint+"`")
	fmt.Fprintf(w, "%s\n\n%s\n", strings.Join(meta, " · "), mdText(f.Cause))
	if len(f.Evidence) > 0 {
		fmt.Fprintln(w)
		for _, e := range f.Evidence {
			fmt.Fprintf(w, "- `%s`: %s\n", mdCode(e.Source), mdText(e.Detail))
		}
	}
	if f.CausedBy != nil {
		fmt.Fprintf(w, "\nFollows from `%s` above: its fix is this one's.\n", *f.CausedBy)
	} else if f.Fix != "" {
		fmt.Fprintf(w, "\n**Fix:**\n\n%s\n\n**Verify:**\n\n%s\n", fence(f.Fix), fence(verifyCommand(rep, f)))
	}
	fmt.Fprintf(w, "\nAbout this check: `doctor explain %s`\n", f.Check)
}

// FindingTitle is what was found, in a line: the cause's first clause,
// without the runner's label (the section says which runner).
func FindingTitle(f Finding) string {
	s := strings.Join(strings.Fields(f.Cause), " ")
	if f.Runner != nil {
		s = strings.TrimPrefix(s, "[[runners]] "+runnerTag(f.Runner)+": ")
		s = strings.TrimPrefix(s, f.Runner.String()+": ")
	}
	cut := len(s)
	for _, sep := range []string{": ", ". ", "; "} {
		if i := strings.Index(s, sep); i >= 20 && i < cut {
			cut = i
		}
	}
	s = strings.TrimSuffix(s[:cut], ".")
	if r := []rune(s); len(r) > 160 {
		cut := string(r[:159])
		if i := strings.LastIndex(cut, " "); i > 80 {
			cut = cut[:i]
		}
		s = cut + "…"
	}
	if s != "" {
		s = strings.ToUpper(s[:1]) + s[1:]
	}
	return s
}

func headline(rep *Report) string {
	s := rep.Summary
	if len(rep.Findings) == 0 {
		return "no findings"
	}
	var parts []string
	for _, c := range []struct {
		n    int
		name string
	}{{s.Critical, "critical"}, {s.Error, "error"}, {s.Warning, "warning"}, {s.Info, "info"}} {
		if c.n > 0 {
			if c.name == "critical" || c.name == "info" {
				parts = append(parts, fmt.Sprintf("%d %s", c.n, c.name))
			} else {
				parts = append(parts, plural(c.n, c.name))
			}
		}
	}
	h := strings.Join(parts, ", ")
	if rep.Host != "" {
		h += " on " + rep.Host
	}
	return mdText(h)
}

func runnersLine(rs []Runner) string {
	if len(rs) == 0 {
		return "none configured"
	}
	var out []string
	for _, r := range rs {
		out = append(out, fmt.Sprintf("#%d %q (%s)", r.Index, r.Name, r.Executor))
	}
	return strings.Join(out, ", ")
}

func onRunner(r *checks.RunnerRef) string {
	if r == nil {
		return ""
	}
	return " for " + mdText(r.String())
}

// fence puts s in a code fence longer than any backtick run inside it.
func fence(s string) string {
	n := 3
	for run, i := 0, 0; i < len(s); i++ {
		if s[i] == '`' {
			if run++; run >= n {
				n = run + 1
			}
		} else {
			run = 0
		}
	}
	f := strings.Repeat("`", n)
	return f + "\n" + strings.TrimRight(s, "\n") + "\n" + f
}

// mdText escapes what GitLab's markdown would take for markup in a line of
// prose: links, emphasis, HTML and references.
var mdEscaper = strings.NewReplacer(`\`, `\\`, "[", `\[`, "]", `\]`, "<", `&lt;`, ">", `&gt;`, "*", `\*`, "_", `\_`, "#", `\#`, "|", `\|`)

func mdText(s string) string {
	// Backtick spans in causes (`namespaces "x" not found`) stay code.
	parts := strings.Split(s, "`")
	for i := range parts {
		if i%2 == 0 {
			parts[i] = mdEscaper.Replace(parts[i])
		}
	}
	if len(parts)%2 == 0 { // an unpaired backtick: escape it
		return strings.Join(parts[:len(parts)-1], "`") + "\\`" + parts[len(parts)-1]
	}
	return strings.Join(parts, "`")
}

// mdCode is s made safe inside a single-backtick code span.
func mdCode(s string) string { return strings.ReplaceAll(s, "`", "'") }
