package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/jedib0t/go-pretty/v6/table"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/internal/text/safetext"
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
	t.AppendRow(table.Row{"Host", "`" + mdCellCode(host) + "`"})
	t.AppendRow(table.Row{"Runners", mdCell(runnersLine(rep.Runners))})
	t.AppendRow(table.Row{"doctor", "`" + mdCellCode(rep.Doctor.Version) + "`"})
	t.AppendRow(table.Row{"Time", rep.StartedAt.UTC().Format("2006-01-02T15:04:05Z07:00")})
	if len(rep.Args) > 0 {
		t.AppendRow(table.Row{"Flags", "`" + mdCellCode(strings.Join(rep.Args, " ")) + "`"})
	}
	if rep.Bundle != nil {
		t.AppendRow(table.Row{"Bundle", fmt.Sprintf("`%s`, recorded by doctor %s, analyzed offline", mdCellCode(rep.Bundle.File), mdCell(rep.Bundle.Doctor))})
	}
	t.AppendRow(table.Row{"Checks", fmt.Sprintf("%d of %d ran: %d pass, %d fail, %d unknown, %d skipped", s.Ran, s.Checks, s.Pass, s.Fail, s.Unknown, s.Skipped)})
	t.AppendRow(table.Row{"Exit code", fmt.Sprint(s.ExitCode)})
	fmt.Fprintln(w, t.RenderMarkdown())
	for _, why := range s.Incomplete {
		fmt.Fprintf(w, "\n> **Incomplete:** %s.\n", mdText(why))
	}
	for _, o := range rep.Overrides {
		fmt.Fprintf(w, "\n> `%s` was used instead of %s.\n", mdCode(o.Flag+" "+o.Value), mdText(o.Replaces))
	}
	if len(rep.Findings) == 0 {
		fmt.Fprintln(w, "\n"+noFindings(rep))
	} else {
		// The findings at a glance, root causes first, as ranked.
		t := table.NewWriter()
		t.AppendHeader(table.Row{"#", "Severity", "Check", "Runner", "Finding", "Follows from"})
		for _, f := range rep.Findings {
			by := ""
			if f.CausedBy != nil {
				by = "`" + mdCellCode(*f.CausedBy) + "`"
			}
			t.AppendRow(table.Row{f.Rank, f.Severity.String(), "`" + mdCellCode(f.Check) + "`", mdCell(runnerCell(f.Runner)), mdCell(FindingTitle(f)), by})
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
			fmt.Fprintf(w, "- `%s`%s: %s\n", mdCode(c.ID), onRunner(c.Runner), mdText(c.Reason))
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
			t.AppendRow(table.Row{"`" + mdCellCode(c.ID) + "`", mdCell(runnerCell(c.Runner)), mdCell(c.Reason)})
		}
		fmt.Fprintln(w, t.RenderMarkdown())
		fmt.Fprintln(w, "\n</details>")
	}
	var tail strings.Builder
	renderTail(&tail, &Report{Summary: rep.Summary, Ignores: rep.Ignores, CleanupErrors: rep.CleanupErrors}, utf8Glyphs, 0)
	// Line by line: a backtick of one line never opens code on the next.
	lines := strings.Split(strings.TrimSuffix(tail.String(), "\n"), "\n")
	for i, l := range lines {
		lines[i] = mdLineStart(mdText(l))
	}
	fmt.Fprintf(w, "\n%s\n", strings.Join(lines, "\n"))
	return nil
}

func renderMarkdownFinding(w io.Writer, rep *Report, f Finding) {
	fmt.Fprintf(w, "\n### %d. %s\n\n", f.Rank, mdText(FindingTitle(f)))
	meta := []string{"**" + f.Severity.String() + "**", "`" + mdCode(f.Check) + "`"}
	if f.Runner != nil {
		meta = append(meta, mdText(f.Runner.String()))
	} else {
		meta = append(meta, "host")
	}
	if f.Change != "" {
		meta = append(meta, "**"+mdText(f.Change)+"**")
	}
	meta = append(meta, "fingerprint `"+mdCode(f.Fingerprint)+"`")
	fmt.Fprintf(w, "%s\n\n%s\n", strings.Join(meta, " · "), mdLineStart(mdText(f.Cause)))
	if len(f.Evidence) > 0 {
		fmt.Fprintln(w)
		for _, e := range f.Evidence {
			fmt.Fprintf(w, "- `%s`: %s\n", mdCode(e.Source), mdText(e.Detail))
		}
	}
	if f.CausedBy != nil {
		fmt.Fprintf(w, "\nFollows from `%s` above: its fix is this one's.\n", mdCode(*f.CausedBy))
	} else if len(f.FixSteps) > 0 {
		fmt.Fprintf(w, "\n**Fix:**\n\n%s\n\n**Verify:**\n\n%s\n", markdownSteps(f.FixSteps), fenceLang(indentQuickActions(verifyCommand(rep, f)), "sh"))
	}
	if p := docsPointer(f); !strings.HasPrefix(p, "doctor explain ") {
		fmt.Fprintf(w, "\nAbout this check: `doctor explain %s`, `%s`\n", mdCode(f.Check), mdCode(p))
	} else {
		fmt.Fprintf(w, "\nAbout this check: `doctor explain %s`\n", mdCode(f.Check))
	}
}

// verbatimWord says a title's first word is written as it must be read: a
// URL, a path, a file or a key (https://…, /etc/…, config.toml,
// run_untagged), which a capital would misspell.
func verbatimWord(w string) bool {
	return strings.ContainsAny(w, "/._:")
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
	if s != "" && !verbatimWord(strings.Fields(s)[0]) {
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
func fence(s string) string { return fenceLang(s, "") }

// fenceLang is fence with an info string, the block's language.
func fenceLang(s, lang string) string {
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
	return f + lang + "\n" + strings.TrimRight(s, "\n") + "\n" + f
}

// Text from outside in markdown. printable has made it one line of fit
// characters; what is left is what GitLab's markdown would take for
// markup, a quick action or a mention:
//
//   - markup: links and images, emphasis, HTML and entities, headings,
//     table pipes. Backslash escapes (and &lt; &amp; for HTML) keep them
//     text. Backticks are read as CommonMark reads them: a code span a
//     check wrote (`namespaces "x" not found`) stays code, and a backtick
//     that closes no span is escaped.
//   - a quick action (/close, /label ~x, /assign @me) is a line that starts
//     with /, and GitLab reads it from the raw text, before markdown
//     (lib/gitlab/quick_actions/extractor.rb: ^\/(?<cmd>…) on each line,
//     skipping only ``` blocks). Text from outside never holds a newline,
//     so it starts a line only where the renderer puts it first (a cause's
//     paragraph, a line of the summary); there mdLineStart escapes a
//     leading / and whatever else could open a block.
//   - a mention (@all, @group) is found anywhere in the rendered text, not
//     only at a line's start, by a pattern that wants no word character
//     before the @ (User.reference_pattern, (?<!\w)@name). A backslash or
//     &#64; would not stop it: both render to a plain @ that the pattern
//     then finds. GitLab skips text inside code, so an @ that starts a
//     name, unless a letter or digit comes right before it (an e-mail
//     address, image@sha256:…), is put in a code span with its name:
//     `@all`.
var (
	mdEscaper   = strings.NewReplacer(`\`, `\\`, "[", `\[`, "]", `\]`, "<", `&lt;`, ">", `&gt;`, "&", `&amp;`, "*", `\*`, "_", `\_`, "#", `\#`, "|", `\|`, "`", "\\`")
	cellEscaper = strings.NewReplacer(`\`, `\\`, "<", `&lt;`, "&", `&amp;`, "](", `\](`, "`", "\\`")
)

// mdText is text from outside as inline markdown in prose: a heading, a
// list item, a paragraph.
func mdText(s string) string { return mdInline(s, mdEscaper, false) }

// mdCell is text from outside as one markdown table cell. go-pretty
// escapes the pipes itself (| to \|), so they are not escaped here. Fewer
// characters are escaped than in prose, so that a cell of ordinary text
// reads as it did (run_untagged, [[runners]]): brackets make a link only
// with a parenthesis after them (the report defines no link reference),
// and emphasis is not structure.
func mdCell(s string) string { return mdInline(s, cellEscaper, true) }

// mdInline is s made one line of fit characters, its code spans kept, its
// prose escaped with esc and its mentions put in code.
func mdInline(s string, esc *strings.Replacer, cell bool) string {
	spans, runs := codeSpans(safetext.Line(s))
	prose := make([]string, len(spans))
	for k := 0; k < len(spans); k += 2 {
		ps := mentionPieces(spans[k])
		// A code span of its own next to a check's would merge with it
		// into a longer backtick run: the name joins the check's span.
		for k > 0 && len(ps) > 0 && ps[0].mention {
			spans[k-1] += ps[0].text
			ps = ps[1:]
		}
		for k+1 < len(spans) && len(ps) > 0 && ps[len(ps)-1].mention {
			spans[k+1] = ps[len(ps)-1].text + spans[k+1]
			ps = ps[:len(ps)-1]
		}
		var b strings.Builder
		for _, p := range ps {
			if p.mention {
				b.WriteString("`" + p.text + "`")
			} else {
				b.WriteString(esc.Replace(p.text))
			}
		}
		prose[k] = b.String()
	}
	var b strings.Builder
	for k, sp := range spans {
		if k%2 == 0 {
			b.WriteString(prose[k])
			continue
		}
		delim := strings.Repeat("`", runs[k/2])
		if cell {
			sp = pipeSafe(sp)
		}
		b.WriteString(delim + sp + delim)
	}
	return b.String()
}

// codeSpans splits s into prose and code spans as CommonMark reads
// backticks: a run of n opens a code span that the next run of exactly n
// closes; a run that nothing closes is text. spans alternate prose and
// code, prose first and last; runs[i] is the length of the backtick runs
// around spans[2i+1].
func codeSpans(s string) (spans []string, runs []int) {
	from := 0
	for i := 0; i < len(s); {
		if s[i] != '`' {
			i++
			continue
		}
		n := backtickRun(s[i:])
		end := -1
		for j := i + n; j < len(s); {
			if s[j] != '`' {
				j++
				continue
			}
			m := backtickRun(s[j:])
			if m == n {
				end = j
				break
			}
			j += m
		}
		if end < 0 {
			i += n
			continue
		}
		spans = append(spans, s[from:i], s[i+n:end])
		runs = append(runs, n)
		i = end + n
		from = i
	}
	return append(spans, s[from:]), runs
}

func backtickRun(s string) int {
	n := 0
	for n < len(s) && s[n] == '`' {
		n++
	}
	return n
}

// piece is part of a prose span: text, or a name a mention would take.
type piece struct {
	mention bool
	text    string
}

// mentionPieces cuts s at each @name mentionAt finds.
func mentionPieces(s string) []piece {
	var out []piece
	for {
		i := mentionAt(s)
		if i < 0 {
			if s != "" {
				out = append(out, piece{text: s})
			}
			return out
		}
		end := i + 1
		for end < len(s) && isNameByte(s[end]) {
			end++
		}
		if i > 0 {
			out = append(out, piece{text: s[:i]})
		}
		out = append(out, piece{mention: true, text: s[i:end]})
		s = s[end:]
	}
}

// mentionAt is the offset of the first @ of s that starts a name and has
// no letter or digit right before it, or -1. An @ that ends s counts: what
// the report writes after the text (a full stop, a name) may start a name.
func mentionAt(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] != '@' {
			continue
		}
		if i+1 < len(s) && (!isNameByte(s[i+1]) || s[i+1] == '-' || s[i+1] == '/') {
			continue
		}
		if i > 0 && isAlnum(s[i-1]) {
			continue
		}
		return i
	}
	return -1
}

// isNameByte is a byte of a GitLab user, group or project path (and the /
// between a group and its subgroup).
func isNameByte(c byte) bool { return isAlnum(c) || c == '_' || c == '.' || c == '-' || c == '/' }

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// mdLineStart makes inline markdown that begins a line begin it as text: a
// leading / (a quick action), a character that would open a block (a list
// item, a thematic break, a fence, a setext underline, GitLab's $$ math, a
// table row) or an ordered list's number is escaped, and leading spaces
// (an indented code block) are dropped, as markdown drops them anyway.
func mdLineStart(s string) string {
	s = strings.TrimLeft(s, " ")
	if s == "" {
		return s
	}
	switch c := s[0]; {
	case c == '\\' || c == '&' || c == '`':
		// an escape mdText made, or a code span: "```x```" opens no
		// fence, whose info string may hold no backtick
	case c < 0x80 && strings.IndexByte("!\"#$%'()*+,-./:;<=>?@[]^_{|}~", c) >= 0:
		return "\\" + s
	case '0' <= c && c <= '9':
		i := strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' })
		if i > 0 && (s[i] == '.' || s[i] == ')') {
			return s[:i] + "\\" + s[i:]
		}
	}
	return s
}

// indentQuickActions puts a space before each line of a code block's text
// that starts with / or @. Inside the fence neither is a quick action nor a
// mention as GitLab renders it, but its quick-action reader knows only
// fences of exactly three backticks (a fix that holds ``` gets a longer
// one), and no line of the report starting with either is the simpler
// promise. No check writes such a line; one comes only from a value.
func indentQuickActions(s string) string {
	if !strings.HasPrefix(s, "/") && !strings.HasPrefix(s, "@") && !strings.Contains(s, "\n/") && !strings.Contains(s, "\n@") {
		return s
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "/") || strings.HasPrefix(l, "@") {
			lines[i] = " " + l
		}
	}
	return strings.Join(lines, "\n")
}

// mdCode is text from outside made safe inside a single-backtick code span:
// one line of fit characters, its backticks turned into quotes. Empty, it
// is a space: two backticks in a row would open a longer code span.
func mdCode(s string) string {
	if s == "" {
		return " "
	}
	return strings.ReplaceAll(safetext.Line(s), "`", "'")
}

// mdCellCode is mdCode inside a table cell. go-pretty writes each | as \|;
// a backslash before it would make that \\| (GitHub's and GitLab's table
// parsers, cmark-gfm and comrak, read a backslash pair and then a pipe that
// ends the cell), so a run of backslashes before a pipe is doubled: the
// cell holds, showing one backslash more than the value has.
func mdCellCode(s string) string { return pipeSafe(mdCode(s)) }

func pipeSafe(s string) string {
	if !strings.Contains(s, "\\|") {
		return s
	}
	var b strings.Builder
	run := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			run++
			continue
		case '|':
			b.WriteString(strings.Repeat("\\", 2*run))
		default:
			b.WriteString(strings.Repeat("\\", run))
		}
		run = 0
		b.WriteByte(s[i])
	}
	b.WriteString(strings.Repeat("\\", run))
	return b.String()
}

// MarkdownText is text from outside as inline markdown in prose, for the
// markdown other commands print (doctor why's matched lines).
func MarkdownText(s string) string { return mdText(s) }

// MarkdownLine is MarkdownText that begins a line.
func MarkdownLine(s string) string { return mdLineStart(mdText(s)) }

// MarkdownCode is text from outside made safe inside a `code span`.
func MarkdownCode(s string) string { return mdCode(s) }
