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
	t.AppendRow(table.Row{"Time", "`" + rep.StartedAt.UTC().Format("2006-01-02T15:04:05Z07:00") + "`"})
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
// characters; what is left is what GitLab would form of it: markup, a
// quick action, and what its filters find in the rendered text. Those run
// on every text node that is not inside code, pre or a link (Banzai's
// reference filters, its emoji, autolink and table-of-contents filters),
// and no escape stops them: \#1 and &#35;1 both render to a #1 that the
// issue filter then finds. So a word of outside text that could form
// anything reaches GitLab only inside a code span:
//
//   - an autolink (http://…, www.…) or an e-mail address (a@b.c);
//   - a reference, in this project or across projects: #1 and !1 (issues
//     and merge requests; group/project#3 posts "mentioned in" on that
//     issue), $1 (snippets), &1 (epics), ~label, %milestone, @name (a
//     mention, anywhere: User.reference_pattern wants no word character
//     before the @), *iteration:…, [vulnerability:…], a commit (6 to 40
//     hex digits, Commit.reference_pattern), an external tracker's ABC-123;
//   - [[_TOC_]], :emoji:, markup (links, emphasis, HTML and entities,
//     table pipes), and backslashes and backticks.
//
// The rest are plain words: letters, digits and symbols outside ASCII,
// ASCII letters and digits joined by . , ; ' " ( ) ? = + - and ending in
// at most one colon; none of GitLab's
// syntaxes forms from them (safetexttest.Markdown checks it, with goldmark's
// Linkify and GitLab's reference patterns, FuzzMarkdown over every
// renderer). A word is what spaces delimit, so the text reads as it was.
// Backticks are read as CommonMark reads them: a code span a check wrote
// (`namespaces "x" not found`) stays code, and a backtick that closes no
// span is part of its word, in a code span of a longer run.
//
// A quick action (/close, /label ~x, /assign @me) is a line that starts
// with /, and GitLab reads it from the raw text, before markdown
// (lib/gitlab/quick_actions/extractor.rb: ^\/(?<cmd>…) on each line,
// skipping only ``` blocks). Text from outside never holds a newline, so
// it starts a line only where the renderer puts it first (a cause's
// paragraph, a line of the summary); a word there that is not plain
// starts with a backtick, and mdLineStart escapes what else could open a
// block.

// mdText is text from outside as inline markdown in prose: a heading, a
// list item, a paragraph.
func mdText(s string) string { return mdInline(s, false) }

// mdCell is text from outside as one markdown table cell. go-pretty
// escapes the pipes itself (| to \|), inside code spans too, where GitLab's
// table parser reads \| as a pipe of the cell's text.
func mdCell(s string) string { return mdInline(s, true) }

// mdInline is s made one line of fit characters, its code spans kept and
// every word of its prose that is not plain put in a code span. A word
// that touches a code span (`x`:#1) joins it, so that no two delimiters run
// together into a longer one.
func mdInline(s string, cell bool) string {
	type seg struct {
		code bool
		text string
		n    int // a check's span, as it was delimited; 0: delimit anew
	}
	spans, runs := codeSpans(safetext.Line(s))
	var segs []seg
	for k, sp := range spans {
		if k%2 == 1 {
			segs = append(segs, seg{code: true, text: sp, n: runs[k/2]})
			continue
		}
		for _, w := range splitSpaces(sp) {
			if w[0] == ' ' || plainWord(w) {
				segs = append(segs, seg{text: w})
				continue
			}
			// The punctuation around a word stays prose: "(CN=x:y)," is
			// ( `CN=x:y` ),
			lead, core, trail := aroundWord(w)
			if lead != "" {
				segs = append(segs, seg{text: lead})
			}
			segs = append(segs, seg{code: true, text: core})
			if trail != "" {
				segs = append(segs, seg{text: trail})
			}
		}
	}
	var b strings.Builder
	for i := 0; i < len(segs); i++ {
		g := segs[i]
		for i+1 < len(segs) && g.code && segs[i+1].code {
			g = seg{code: true, text: g.text + segs[i+1].text}
			i++
		}
		var out string
		switch {
		case !g.code:
			out = g.text
		case g.n > 0:
			d := strings.Repeat("`", g.n)
			out = d + g.text + d
		default:
			out = codeSpan(g.text)
		}
		if g.code && cell {
			out = pipeSafe(out)
		}
		b.WriteString(out)
	}
	return b.String()
}

// aroundWord splits off a word's leading ( " ' and trailing . , ; : ) " '
// ?, which are plain, keeping a core of at least one byte.
func aroundWord(w string) (lead, core, trail string) {
	i, j := 0, len(w)
	for i < j-1 && strings.IndexByte(`("'`, w[i]) >= 0 {
		i++
	}
	for j > i+1 && strings.IndexByte(`.,;:)"'?`, w[j-1]) >= 0 {
		j--
	}
	return w[:i], w[i:j], w[j:]
}

// splitSpaces cuts s into words and the runs of spaces between them, in
// order.
func splitSpaces(s string) []string {
	var out []string
	for s != "" {
		i := 0
		space := s[0] == ' '
		for i < len(s) && (s[i] == ' ') == space {
			i++
		}
		out = append(out, s[:i])
		s = s[i:]
	}
	return out
}

// codeSpan is w, a word with no space, as a code span: delimited by a run
// of backticks longer than any in it, padded with a space on each side
// when it starts or ends with a backtick (CommonMark strips one of each).
func codeSpan(w string) string {
	longest := 0
	for i := 0; i < len(w); {
		if w[i] != '`' {
			i++
			continue
		}
		r := backtickRun(w[i:])
		longest = max(longest, r)
		i += r
	}
	d := strings.Repeat("`", longest+1)
	if strings.HasPrefix(w, "`") || strings.HasSuffix(w, "`") {
		return d + " " + w + " " + d
	}
	return d + w + d
}

// plainWord says w, a word with no space, forms nothing in GitLab (see
// above): letters and digits, the joining punctuation, at most a final
// colon; no run of 6 or more hex digits alone (a commit), no ABC-123 (an
// external tracker's issue), no www.
func plainWord(w string) bool {
	for i, r := range w {
		switch {
		case r >= 0x80:
			// Letters, digits and symbols of any script (×, →, …): every
			// syntax of GitLab's is ASCII, and safetext.Line has shown the
			// invisible ones as escapes.
		case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', '0' <= r && r <= '9':
		case strings.ContainsRune(".,;'\"()?=+-", r):
		case r == ':' && i == len(w)-1 && i > 0:
		default:
			return false
		}
	}
	lower := strings.ToLower(w)
	return !strings.Contains(lower, "www.") && !hexWord(w) && !trackerIssue(w)
}

// hexWord says w holds a run of 6 to 40 or more hex digits with no letter,
// digit or underscore on either side: what Commit.reference_pattern
// (\h{6,40}) finds, a commit when the project has one of that prefix.
func hexWord(w string) bool {
	run, start := 0, 0
	for i := 0; i <= len(w); i++ {
		if i < len(w) && isHex(w[i]) {
			if run == 0 {
				start = i
			}
			run++
			continue
		}
		if run >= 6 && (start == 0 || !isWordByte(w[start-1])) && (i == len(w) || !isWordByte(w[i])) {
			return true
		}
		run = 0
	}
	return false
}

// trackerIssue says w holds an external tracker's issue key, ABC-123
// (Jira's, which its integration comments on): capitals, a dash, digits.
func trackerIssue(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] != '-' || i == 0 || i+1 >= len(w) || !isDigit(w[i+1]) {
			continue
		}
		j := i - 1
		for j >= 0 && ('A' <= w[j] && w[j] <= 'Z' || isDigit(w[j]) || w[j] == '_') {
			j--
		}
		if j+1 < i && 'A' <= w[j+1] && w[j+1] <= 'Z' && i-(j+1) >= 2 {
			return true
		}
	}
	return false
}

func isHex(c byte) bool { return isDigit(c) || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isWordByte(c byte) bool {
	return isDigit(c) || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_'
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
