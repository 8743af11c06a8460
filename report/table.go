package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/jedib0t/go-pretty/v6/table"
	"github.com/jedib0t/go-pretty/v6/text"

	"github.com/socialwebcomputer/doctor/internal/text/wrap"
)

// The table fits the terminal. At StackedBelow columns and over, findings
// are rows of a borderless table whose FINDING column (and, -o wide,
// EVIDENCE) takes the width left; below it, or when that leaves too little,
// each finding is a block, as linkerd check prints them. Text wraps at
// spaces and never inside a token: a token longer than its column keeps a
// line of its own. Fixes and verify commands are never in a cell: they
// follow the findings, prose wrapped to the terminal, and every block line
// (a command, a snippet) whole, so that a copied line pastes as written.

const (
	maxFindingWidth  = 100 // a cause is prose; longer lines read badly
	minFindingWidth  = 40
	maxEvidenceWidth = 80
	minEvidenceWidth = 30
	colGap           = 2 // spaces between columns
)

func renderTable(w io.Writer, rep *Report, opt Options, wide bool) error {
	g := glyphsFor(opt)
	var b strings.Builder
	if len(rep.Findings) == 0 {
		fmt.Fprintln(&b, noFindings(rep))
	} else if !renderRows(&b, rep, opt, g, wide) {
		renderStacked(&b, rep, opt, g, wide)
	}
	renderFixes(&b, rep, opt.Width)
	renderTail(&b, rep, g, opt.Width)
	// go-pretty pads cells; a line's trailing spaces are nobody's to copy.
	for _, l := range strings.SplitAfter(b.String(), "\n") {
		nl := strings.HasSuffix(l, "\n")
		l = strings.TrimRight(l, " \n")
		if nl {
			l += "\n"
		}
		if _, err := io.WriteString(w, l); err != nil {
			return err
		}
	}
	return nil
}

// noFindings is what a report with no finding says: "No findings.", or
// in a --changes-only report what stands unchanged.
func noFindings(rep *Report) string {
	if rep.NoChanges != "" {
		return rep.NoChanges
	}
	return "No findings."
}

func (g glyphs) severityCell(f Finding, colour bool) string {
	if f.Change == ChangeResolved {
		return g.pass + " RESOLVED"
	}
	s := g.severity(f.Severity) + " " + strings.ToUpper(f.Severity.String())
	if colour {
		return severityColour[f.Severity].Sprint(s)
	}
	return s
}

// checkCell is the check, indented under its cause, and its runner.
func checkCell(f Finding, g glyphs) []string {
	indent := strings.Repeat("  ", f.depth)
	first := f.Check
	if f.depth > 0 {
		indent = strings.Repeat("  ", f.depth-1)
		first = indent + g.tree + f.Check
		indent += strings.Repeat(" ", text.StringWidthWithoutEscSequences(g.tree))
	}
	lines := []string{first}
	if f.Runner != nil {
		lines = append(lines, indent+runnerTag(f.Runner))
	}
	return lines
}

// docsPointer is where a finding's check is documented: the page a docs
// URL gave it (--docs-url), else doctor explain, which works wherever
// doctor does (a README anchor is not on the host).
func docsPointer(f Finding) string {
	if strings.HasPrefix(f.Docs, "https://") || strings.HasPrefix(f.Docs, "http://") {
		return f.Docs
	}
	return "doctor explain " + f.Check
}

// findingLines are a finding's cause, whom it follows from, and its docs.
func findingLines(f Finding) []string {
	lines := strings.Split(f.Cause, "\n")
	if f.CausedBy != nil {
		lines = append(lines, "(follows from "+*f.CausedBy+")")
	}
	lines = append(lines, "see "+docsPointer(f))
	return lines
}

func evidenceLines(f Finding) []string {
	var lines []string
	for _, e := range f.Evidence {
		lines = append(lines, e.Source+": "+e.Detail)
	}
	return lines
}

// renderRows lays the findings out as a table; false when the width leaves
// too little room for the text.
func renderRows(w io.Writer, rep *Report, opt Options, g glyphs, wide bool) bool {
	if opt.Width < StackedBelow {
		return false
	}
	rankW, sevW, checkW := len("#"), len("SEVERITY"), len("CHECK")
	for _, f := range rep.Findings {
		rankW = max(rankW, len(fmt.Sprint(f.Rank)))
		sevW = max(sevW, text.StringWidthWithoutEscSequences(g.severityCell(f, false)))
		for _, l := range checkCell(f, g) {
			checkW = max(checkW, text.StringWidthWithoutEscSequences(l))
		}
	}
	// A column is as wide as its longest token at least: the text wraps at
	// spaces, never inside a token.
	findTok, evTok := 0, 0
	for _, f := range rep.Findings {
		findTok = max(findTok, longestToken(findingLines(f)))
		evTok = max(evTok, longestToken(evidenceLines(f)))
	}
	fixed := rankW + sevW + checkW + 3*colGap
	left := opt.Width - fixed
	findingW, evidenceW := max(min(left, maxFindingWidth), findTok), 0
	if wide {
		left -= FingerprintLen + 2*colGap
		evidenceW = max(min(maxEvidenceWidth, left*2/5), evTok)
		findingW = max(min(maxFindingWidth, left-evidenceW), findTok)
		if evidenceW < minEvidenceWidth || findingW+evidenceW > left {
			return false
		}
	}
	if findingW < minFindingWidth || findingW > left {
		return false
	}

	t := table.NewWriter()
	t.SetOutputMirror(nil)
	style := table.StyleDefault
	style.Box = table.BoxStyle{
		PaddingLeft: "", PaddingRight: strings.Repeat(" ", colGap),
		// Rows are set apart by an empty line, columns by spaces: no box
		// character sits on a line someone copies from.
		MiddleHorizontal: " ",
	}
	style.Options = table.Options{SeparateRows: true}
	style.Format = table.FormatOptions{Header: text.FormatDefault}
	t.SetStyle(style)
	header := table.Row{"#", "SEVERITY", "CHECK", "FINDING"}
	configs := []table.ColumnConfig{
		{Number: 3, WidthMax: checkW, WidthMaxEnforcer: keepTokens},
		{Number: 4, WidthMax: findingW, WidthMaxEnforcer: keepTokens},
	}
	if wide {
		header = append(header, "EVIDENCE", "FINGERPRINT")
		configs = append(configs, table.ColumnConfig{Number: 5, WidthMax: evidenceW, WidthMaxEnforcer: hangTokens})
	}
	t.AppendHeader(header)
	t.SetColumnConfigs(configs)
	for _, f := range rep.Findings {
		row := table.Row{f.Rank, g.severityCell(f, opt.Colour), strings.Join(checkCell(f, g), "\n"),
			strings.Join(findingLines(f), "\n")}
		if wide {
			row = append(row, strings.Join(evidenceLines(f), "\n"), f.Fingerprint)
		}
		t.AppendRow(row)
	}
	out := t.Render()
	// A token longer than its column widens the column rather than being
	// cut; when that makes the table wider than the terminal, blocks it is.
	for _, l := range strings.Split(out, "\n") {
		if text.StringWidthWithoutEscSequences(strings.TrimRight(l, " ")) > opt.Width {
			return false
		}
	}
	fmt.Fprintln(w, out)
	return true
}

// longestToken is the width of the longest space-separated token of lines.
func longestToken(lines []string) int {
	n := 0
	for _, l := range lines {
		for _, tok := range strings.Fields(l) {
			n = max(n, text.StringWidthWithoutEscSequences(tok))
		}
	}
	return n
}

// keepTokens is a go-pretty WidthMaxEnforcer that wraps at spaces and never
// cuts a token: the column grows for a token longer than max.
func keepTokens(s string, max int) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		lead := l[:len(l)-len(strings.TrimLeft(l, " "))]
		out = append(out, wrap.Words(l, max, lead, lead)...)
	}
	return strings.Join(out, "\n")
}

// hangTokens is keepTokens with a hanging indent, for evidence lines.
func hangTokens(s string, max int) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		out = append(out, wrap.Words(l, max, "", "  ")...)
	}
	return strings.Join(out, "\n")
}

// renderStacked writes one block per finding: its status line, then its
// text indented under it.
func renderStacked(w io.Writer, rep *Report, opt Options, g glyphs, wide bool) {
	for i, f := range rep.Findings {
		if i > 0 {
			fmt.Fprintln(w)
		}
		lead := ""
		if f.depth > 0 {
			lead = strings.Repeat("  ", f.depth-1) + g.tree
		}
		head := fmt.Sprintf("%s%s  %d. %s", lead, g.severityCell(f, opt.Colour), f.Rank, f.Check)
		if f.Runner != nil {
			head += "  " + runnerTag(f.Runner)
		}
		body := strings.Repeat(" ", text.StringWidthWithoutEscSequences(lead)+4)
		for _, l := range wrap.Words(head, opt.Width, "", body) {
			fmt.Fprintln(w, l)
		}
		for _, para := range findingLines(f) {
			for _, l := range wrap.Words(para, opt.Width, body, body) {
				fmt.Fprintln(w, l)
			}
		}
		if wide {
			if ev := evidenceLines(f); len(ev) > 0 {
				fmt.Fprintf(w, "%sevidence:\n", body)
				for _, e := range ev {
					for _, l := range wrap.Words(e, opt.Width, body+"  ", body+"    ") {
						fmt.Fprintln(w, l)
					}
				}
			}
			fmt.Fprintf(w, "%sfingerprint %s\n", body, f.Fingerprint)
		}
	}
}

// renderFixes writes each root cause's fix and the command that verifies
// it: a shell comment names the finding, its sentences are comments and
// its blocks lines of their own (StepLines), so a block copied whole
// pastes without harm.
func renderFixes(w io.Writer, rep *Report, width int) {
	// One verify command for a check and runner, after its last fix.
	type key struct {
		check  string
		runner int
	}
	keyOf := func(f Finding) key {
		if f.Runner == nil {
			return key{f.Check, -1}
		}
		return key{f.Check, f.Runner.Index}
	}
	last := map[key]int{}
	for i, f := range rep.Findings {
		if f.CausedBy == nil && len(f.FixSteps) > 0 {
			last[keyOf(f)] = i
		}
	}
	first := true
	for i, f := range rep.Findings {
		if f.CausedBy != nil || len(f.FixSteps) == 0 {
			continue
		}
		if first {
			fmt.Fprintln(w)
			first = false
		} else {
			fmt.Fprintln(w)
		}
		on := ""
		if f.Runner != nil {
			on = ", " + runnerTag(f.Runner)
		}
		for _, l := range wrap.Words(fmt.Sprintf("# %d. %s%s: fix", f.Rank, f.Check, on), width, "", "#   ") {
			fmt.Fprintln(w, l)
		}
		for _, l := range StepLines(f.FixSteps, width, "# ") {
			fmt.Fprintln(w, l)
		}
		if last[keyOf(f)] == i {
			fmt.Fprintln(w, "# verify")
			fmt.Fprintln(w, verifyCommand(rep, f))
		}
	}
	if !first {
		fmt.Fprintln(w)
	}
}
