package wrap

import (
	"strings"
	"unicode"

	"github.com/jedib0t/go-pretty/v6/text"
)

// Break is a token a terminal cuts in two: the output's line (1-based), and
// the token with a | where the terminal folds it.
type Break struct {
	Line  int
	Token string
}

// Breaks says where a terminal of width columns breaks a word, command,
// path or URL of out. A terminal folds a line longer than its width at
// exactly the width (a wide character that does not fit goes whole to the
// next row); a fold is a break when it falls inside a token, that is, with
// no space on either side of it. A fold at a space splits nothing.
//
// Two kinds of line are printed whole by design, and their folds are not
// breaks: a line whole reports (a block's line: a command, a snippet of a
// file, which must paste exactly as written), and a line that is one token
// with no indent, or a shell comment's "# " and one token (a path longer
// than the terminal: nothing can shorten it; Words drops an indent, never
// a comment's mark). whole may be nil.
func Breaks(out string, width int, whole func(line string) bool) []Break {
	var breaks []Break
	for i, line := range strings.Split(out, "\n") {
		plain := text.StripEscape(line)
		if Width(plain) <= width {
			continue
		}
		if whole != nil && whole(line) {
			continue
		}
		if !strings.ContainsRune(strings.TrimPrefix(strings.TrimRightFunc(plain, unicode.IsSpace), "# "), ' ') {
			continue
		}
		rs := []rune(plain)
		col := 0
		for j, r := range rs {
			w := Width(string(r))
			if col+w <= width {
				col += w
				continue
			}
			// The row is full: r starts the next one.
			if j > 0 && !unicode.IsSpace(rs[j-1]) && !unicode.IsSpace(r) {
				breaks = append(breaks, Break{Line: i + 1, Token: tokenAround(rs, j)})
			}
			col = w
		}
	}
	return breaks
}

// tokenAround is the space-separated token of rs that contains the fold
// before rs[j], with a | at the fold.
func tokenAround(rs []rune, j int) string {
	a, b := j, j
	for a > 0 && !unicode.IsSpace(rs[a-1]) {
		a--
	}
	for b < len(rs) && !unicode.IsSpace(rs[b]) {
		b++
	}
	return string(rs[a:j]) + "|" + string(rs[j:b])
}
