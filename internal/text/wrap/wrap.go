// Package wrap lays text out for a terminal of a given width: prose wraps
// at spaces, and nothing an operator copies is ever cut. A word, a path, a
// URL or a `quoted command` is a token that stays on one line; a block (a
// command, a config snippet) is printed as whole lines, each as it was
// written, for the terminal to fold if it is longer than the width.
package wrap

import (
	"strings"

	"github.com/jedib0t/go-pretty/v6/text"
)

// Width is the number of columns s takes on a terminal: escape sequences
// take none, East Asian wide characters two.
func Width(s string) int { return text.StringWidthWithoutEscSequences(s) }

// Tokens splits a line of prose at spaces, except inside a pair of
// backticks: a `quoted command` is one token, so it is never split across
// lines. A backtick with no partner on the line quotes nothing.
func Tokens(s string) []string {
	fields := strings.Fields(s)
	var out []string
	for i := 0; i < len(fields); i++ {
		tok := fields[i]
		// A field with an odd number of backticks opens a span that ends
		// in the next field that has an odd number too.
		if strings.Count(tok, "`")%2 == 1 {
			for j := i + 1; j < len(fields); j++ {
				if strings.Count(fields[j], "`")%2 == 1 {
					tok = strings.Join(fields[i:j+1], " ")
					i = j
					break
				}
			}
		}
		out = append(out, tok)
	}
	return out
}

// Words breaks a line of prose at spaces into lines of at most width
// columns, the first starting with first and the rest with rest. A token
// (Tokens) is never cut: one longer than the room has a line of its own,
// without its indent when the indent would push it past the width. A
// quoted command longer than the width breaks at its own spaces, which
// splits none of its words. width <= 0 does not wrap.
func Words(s string, width int, first, rest string) []string {
	var words []string
	for _, tok := range Tokens(s) {
		if width > 0 && Width(tok) > width && strings.Contains(tok, " ") {
			words = append(words, strings.Fields(tok)...)
			continue
		}
		words = append(words, tok)
	}
	if len(words) == 0 {
		return []string{strings.TrimRight(first, " ")}
	}
	if width <= 0 {
		return []string{first + strings.Join(words, " ")}
	}
	var out []string
	prefix := first
	cur, curW, empty := "", 0, true
	start := func(word string, ww int) {
		// Only an indent gives way: a prefix that says something (a
		// comment's #) stays.
		if Width(prefix)+ww > width && strings.TrimSpace(prefix) == "" {
			cur, curW = word, ww
		} else {
			cur, curW = prefix+word, Width(prefix)+ww
		}
		empty = false
	}
	for _, word := range words {
		ww := Width(word)
		switch {
		case empty:
			start(word, ww)
		case curW+1+ww > width:
			out = append(out, cur)
			prefix = rest
			start(word, ww)
		default:
			cur += " " + word
			curW += 1 + ww
		}
	}
	return append(out, cur)
}

// Paragraphs is Words for each line of s: a newline in s ends a line, and
// a line's own indent is kept (a snippet of YAML in a fix keeps its shape).
func Paragraphs(s string, width int, first, rest string) []string {
	var out []string
	for i, l := range strings.Split(s, "\n") {
		if i > 0 {
			first = rest
		}
		lead := l[:len(l)-len(strings.TrimLeft(l, " "))]
		out = append(out, Words(l, width, first+lead, rest+lead)...)
	}
	return out
}

// Segment is a piece of text to lay out: prose, which wraps, or a block,
// whose lines are printed whole and flush left, so that a copied command,
// heredoc or snippet is exactly what was written.
type Segment struct {
	Text string
	// Block is set for a command or a snippet of a file. Kind names it
	// (shell, caddyfile, systemd, toml, manifest) for renderers that say so
	// (markdown's fence); Layout prints every kind alike.
	Block bool
	Kind  string
}

// Prose is a Segment of prose.
func Prose(s string) Segment { return Segment{Text: s} }

// Block is a Segment of whole lines of the given kind.
func Block(kind, s string) Segment { return Segment{Text: s, Block: true, Kind: kind} }

// Layout lays segments out one after another: prose wrapped to width
// under indent, a block's lines as they are, flush left.
func Layout(segs []Segment, width int, indent string) []string {
	var out []string
	for _, s := range segs {
		text := strings.TrimRight(s.Text, "\n")
		if s.Block {
			out = append(out, strings.Split(text, "\n")...)
			continue
		}
		out = append(out, Paragraphs(strings.Trim(text, "\n"), width, indent, indent)...)
	}
	return out
}

// Hang wraps a line laid out by its writer (columns aligned with runs of
// spaces, a leading indent) only where it is longer than width: the line
// keeps its own spacing up to a space near the width, and the rest follows
// on lines that start with rest. A token (Tokens) is never cut, as in
// Words. width <= 0 does not wrap.
func Hang(s string, width int, rest string) []string {
	if width <= 0 || Width(s) <= width {
		return []string{s}
	}
	type piece struct{ sep, tok string }
	var pieces []piece
	for i := 0; i < len(s); {
		j := i
		for j < len(s) && s[j] == ' ' {
			j++
		}
		k := j
		for k < len(s) && s[k] != ' ' {
			k++
		}
		p := piece{s[i:j], s[j:k]}
		// A field with an odd number of backticks runs to the next one.
		if strings.Count(p.tok, "`")%2 == 1 {
			if end := strings.IndexByte(s[k:], '`'); end >= 0 {
				e := k + end + 1
				for e < len(s) && s[e] != ' ' {
					e++
				}
				p.tok = s[j:e]
				k = e
			}
		}
		if p.tok != "" || len(pieces) == 0 {
			pieces = append(pieces, p)
		}
		i = k
	}
	var out []string
	cur := ""
	for i, p := range pieces {
		switch {
		case i == 0:
			cur = p.sep + p.tok
		case Width(cur)+Width(p.sep)+Width(p.tok) <= width:
			cur += p.sep + p.tok
		default:
			lines := Words(p.tok, width, rest, rest)
			out = append(append(out, cur), lines[:len(lines)-1]...)
			cur = lines[len(lines)-1]
		}
	}
	return append(out, cur)
}
