package symptom

import (
	"strings"
	"unicode/utf8"

	"github.com/socialwebcomputer/doctor/internal/text/lazyre"
)

// A message reaches doctor why wrapped: a terminal's or a web page's
// wrapping pasted with its line breaks ("secrets is forbidden: User
// \"system:serviceaccount:gitlab:default\"" / "cannot create resource
// \"secrets\" in API group \"\" in the namespace" / "\"gitlab\""), a
// kubectl describe or k9s table whose message column wraps into the next
// row, an error chain a page broke after its colon. Scan joins a line to
// the one before when its shape says it continues it, and keeps the join
// only when the whole names what neither half does.

// pending is the message being assembled: where it began, its last
// physical line (for the shape of the next), its text and verdict.
type pending struct {
	line int
	last string
	text string
	v    Verdict
}

// failureWords are in every message doctor why names: a join is tried
// only where one half holds one (a healthy log's wrapped output is not
// matched twice).
var failureWords = []string{"rror", "ERROR", "FATAL", "PANIC", "fail", "Fail", "forbidden", "Forbidden", "denied", "refused", "imeout",
	"timed out", "x509", "tls: ", "TLS", "nable to", "cannot", "Cannot", "not found", "Unauthorized", "credentials", "nodes are available",
	"invalid", "EOF", "reserved", "exceeded", "Insufficient", "unknown", "certificate"}

// MaxJoin bounds a message's length: a wrapped message is a few lines.
const MaxJoin = 4 << 10

// join continues p with the cleaned line clean, whose verdict alone is
// alone, when clean continues it.
func (m *Matcher) join(p *pending, clean string, alone Verdict) (*pending, bool) {
	if p == nil || len(p.text) > MaxJoin || !continues(p.last, clean) {
		return nil, false
	}
	cont := continuation(p.last, clean)
	if cont == "" || !containsAny(p.text, failureWords) && !containsAny(cont, failureWords) {
		return nil, false
	}
	joined := p.text + " " + cont
	vj := m.Verdict(joined)
	if !tellsMore(vj, p.v, alone) {
		return nil, false
	}
	return &pending{line: p.line, last: clean, text: joined, v: vj}, true
}

var (
	// recordStart is a line that begins a record of its own: a log
	// level, a timestamp, a journald stamp, a shell prompt, a section.
	recordStart = lazyre.MustCompile(`^(?:[A-Z]{4,7}: |[A-Z][a-z]{2} [ 0-9]?[0-9] [0-9:]{8} |[0-9]{4}-[0-9]{2}-[0-9]{2}[T ]|\$ |section_|time=|\{"|[IWEF][0-9]{4} )`)
	// tableBorder is a k9s or box-drawing table's column separator.
	tableBorder = lazyre.MustCompile(`[│┃|]`)
)

// continues says the shape of clean continues the line last: a table row
// whose leading cells are empty, an indented line under a message, or a
// line a wrap broke: after a colon, or mid-sentence into a line that
// starts in lower case, a quote or a bracket.
func continues(last, clean string) bool {
	t := strings.TrimSpace(clean)
	if t == "" || strings.TrimSpace(last) == "" || recordStart().MatchString(t) {
		return false
	}
	if isTableRow(last) && isTableRow(clean) {
		cells := tableCells(clean)
		for _, c := range cells[:len(cells)-1] {
			if strings.TrimSpace(c) != "" {
				return false
			}
		}
		return strings.TrimSpace(cells[len(cells)-1]) != ""
	}
	lt := strings.TrimRight(last, " \t")
	switch {
	case strings.HasSuffix(lt, ":") || strings.HasSuffix(lt, ","):
		return true
	case len(clean) > len(t): // indented
		return len(lt) >= 40
	case len(lt) < 40 || strings.HasSuffix(lt, ".") || strings.HasSuffix(lt, "!") || strings.HasSuffix(lt, "?"):
		return false
	}
	c := t[0]
	return c >= 'a' && c <= 'z' || c == '"' || c == '(' || c == '[' || c == '\''
}

// continuation is what clean adds to the message: its last cell, for a
// table row, else its text.
func continuation(last, clean string) string {
	if isTableRow(last) && isTableRow(clean) {
		cells := tableCells(clean)
		return strings.TrimSpace(cells[len(cells)-1])
	}
	return strings.TrimSpace(clean)
}

// rowText is a line without a table's borders: its cells joined by
// spaces, so a pattern reads the message across them.
func rowText(clean string) string {
	if !isTableRow(clean) {
		return clean
	}
	var cells []string
	for _, c := range tableCells(clean) {
		if c = strings.TrimSpace(c); c != "" {
			cells = append(cells, c)
		}
	}
	return strings.Join(cells, " ")
}

// isTableRow: a line drawn between table borders (k9s, a box-drawn
// kubectl paste), at least two of them.
func isTableRow(s string) bool {
	t := strings.TrimSpace(s)
	first, _ := utf8.DecodeRuneInString(t)
	last, _ := utf8.DecodeLastRuneInString(t)
	return len(t) > 1 && strings.ContainsRune("│┃|", first) && strings.ContainsRune("│┃|", last)
}

// tableCells are a row's cells, borders dropped.
func tableCells(s string) []string {
	cells := tableBorder().Split(strings.TrimSpace(s), -1)
	for len(cells) > 1 && strings.TrimSpace(cells[0]) == "" {
		cells = cells[1:]
	}
	for len(cells) > 1 && strings.TrimSpace(cells[len(cells)-1]) == "" {
		cells = cells[:len(cells)-1]
	}
	return cells
}

// tellsMore says the joined verdict names a check for sure that neither
// half does, or names anything where neither half named a thing, or
// decides a half's ambiguity.
func tellsMore(joined, prev, alone Verdict) bool {
	if len(joined.Checks) == 0 {
		return false
	}
	sure := func(v Verdict) map[string]bool {
		out := map[string]bool{}
		shared := map[string]bool{}
		for _, o := range v.OneOf {
			for _, c := range o.Causes {
				shared[c] = true
			}
		}
		for _, c := range v.Checks {
			if !shared[c] {
				out[c] = true
			}
		}
		return out
	}
	if len(prev.Checks) == 0 && len(alone.Checks) == 0 {
		return true
	}
	before := sure(prev)
	for c := range sure(alone) {
		before[c] = true
	}
	for c := range sure(joined) {
		if !before[c] {
			return true
		}
	}
	// The whole decides what a half left ambiguous.
	return len(joined.OneOf) < len(prev.OneOf)+len(alone.OneOf)
}
