// Package shellshape says what a shell block is, as a shell parser reads
// it (mvdan.cc/sh/v3/syntax, bash dialect): its statements, the commands
// of each, every word's value, the heredocs and what they feed, the
// redirections. Two blocks with the same Shape run the same commands with
// the same arguments; the hostile-value tests compare the Shape of a fix
// rendered with benign values and with hostile ones.
package shellshape

import (
	"bytes"
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Shape is a block as the parser reads it: one line per statement, each
// command's words as their values, in Go's quoting.
type Shape struct {
	Stmts []string
	// Words are every word's value, in order (heredoc bodies included),
	// for a test that looks for a value arriving whole.
	Words []string
	// Heredocs are the bodies of the heredocs, in order.
	Heredocs []string
	// Calls are the simple commands, each its words' values, in order
	// (those of command substitutions included).
	Calls [][]string

	f func(string) string
}

// Parse reads block as bash does. A word whose value depends on the shell
// (a variable, a command substitution) is shown as its source inside ⟨⟩;
// a heredoc as its number (its body is in Heredocs).
func Parse(block string) (*Shape, error) { return ParseWith(block, nil) }

// ParseWith is Parse with every word's value passed through f before it
// is written into Stmts (a test strips its hostile marker with it); Words
// keep the values as they are.
func ParseWith(block string, f func(string) string) (*Shape, error) {
	file, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(block), "")
	if err != nil {
		return nil, err
	}
	if f == nil {
		f = func(s string) string { return s }
	}
	s := &Shape{f: f}
	for _, st := range file.Stmts {
		s.Stmts = append(s.Stmts, s.stmt(st))
	}
	return s, nil
}

func (s *Shape) String() string { return strings.Join(s.Stmts, "\n") }

func (s *Shape) stmt(st *syntax.Stmt) string {
	var b strings.Builder
	if st.Negated {
		b.WriteString("! ")
	}
	b.WriteString(s.command(st.Cmd))
	for _, r := range st.Redirs {
		b.WriteString(" " + s.redirect(r))
	}
	if st.Background {
		b.WriteString(" &")
	}
	return b.String()
}

func (s *Shape) command(c syntax.Command) string {
	switch c := c.(type) {
	case nil:
		return "<none>"
	case *syntax.CallExpr:
		var parts, call []string
		for _, a := range c.Assigns {
			parts = append(parts, "assign "+a.Name.Value+"="+s.word(a.Value))
			call = append(call, a.Name.Value+"="+s.Words[len(s.Words)-1])
		}
		for _, w := range c.Args {
			parts = append(parts, s.word(w))
			call = append(call, s.Words[len(s.Words)-1])
		}
		s.Calls = append(s.Calls, call)
		return "call(" + strings.Join(parts, ", ") + ")"
	case *syntax.BinaryCmd:
		return "(" + s.stmt(c.X) + " " + c.Op.String() + " " + s.stmt(c.Y) + ")"
	default:
		var buf bytes.Buffer
		syntax.NewPrinter().Print(&buf, c)
		return fmt.Sprintf("%T{%s}", c, buf.String())
	}
}

func (s *Shape) redirect(r *syntax.Redirect) string {
	out := r.Op.String()
	if r.N != nil {
		out = r.N.Value + out
	}
	if r.Word != nil && r.Hdoc == nil {
		out += " " + s.word(r.Word)
	}
	if r.Hdoc != nil {
		s.Heredocs = append(s.Heredocs, literal(r.Hdoc))
		out += fmt.Sprintf(" heredoc#%d", len(s.Heredocs))
	}
	return out
}

// word is the value of w in Go's quoting, recorded in Words.
func (s *Shape) word(w *syntax.Word) string {
	if w == nil {
		s.Words = append(s.Words, "")
		return `""`
	}
	v := s.value(w.Parts)
	s.Words = append(s.Words, v)
	return fmt.Sprintf("%q", s.f(v))
}

func (s *Shape) value(parts []syntax.WordPart) string {
	var b strings.Builder
	for _, p := range parts {
		switch p := p.(type) {
		case *syntax.Lit:
			b.WriteString(unescapeLit(p.Value))
		case *syntax.SglQuoted:
			if p.Dollar {
				b.WriteString(ansiC(p.Value))
			} else {
				b.WriteString(p.Value)
			}
		case *syntax.DblQuoted:
			b.WriteString(s.value(p.Parts))
		default:
			var buf bytes.Buffer
			syntax.NewPrinter().Print(&buf, p)
			if cs, ok := p.(*syntax.CmdSubst); ok {
				var inner []string
				for _, st := range cs.Stmts {
					inner = append(inner, s.stmt(st))
				}
				b.WriteString("⟨$(" + strings.Join(inner, "; ") + ")⟩")
				continue
			}
			b.WriteString("⟨" + buf.String() + "⟩")
		}
	}
	return b.String()
}

// literal is a heredoc body's text (a quoted delimiter leaves it as is).
func literal(w *syntax.Word) string {
	var b strings.Builder
	for _, p := range w.Parts {
		if l, ok := p.(*syntax.Lit); ok {
			b.WriteString(l.Value)
		} else {
			var buf bytes.Buffer
			syntax.NewPrinter().Print(&buf, p)
			b.WriteString("⟨" + buf.String() + "⟩")
		}
	}
	return b.String()
}

// unescapeLit removes the backslashes of an unquoted literal, as bash's
// quote removal does (a backslash-newline is a line continuation).
func unescapeLit(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// ansiC decodes the body of a $'…' word as bash does.
func ansiC(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch e := s[i]; e {
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'e', 'E':
			b.WriteByte(0x1b)
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case '\\', '\'', '"', '?':
			b.WriteByte(e)
		case 'x', 'u', 'U':
			max := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
			j := i + 1
			var n rune
			for j < len(s) && j-i-1 < max && isHex(s[j]) {
				n = n*16 + rune(hexVal(s[j]))
				j++
			}
			if j == i+1 {
				b.WriteByte('\\')
				b.WriteByte(e)
				continue
			}
			if e == 'x' {
				b.WriteByte(byte(n))
			} else {
				b.WriteRune(n)
			}
			i = j - 1
		default:
			if '0' <= e && e <= '7' {
				j, n := i, 0
				for j < len(s) && j-i < 3 && '0' <= s[j] && s[j] <= '7' {
					n = n*8 + int(s[j]-'0')
					j++
				}
				b.WriteByte(byte(n))
				i = j - 1
				continue
			}
			b.WriteByte('\\')
			b.WriteByte(e)
		}
	}
	return b.String()
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func hexVal(c byte) int {
	switch {
	case c <= '9':
		return int(c - '0')
	case c >= 'a':
		return int(c-'a') + 10
	}
	return int(c-'A') + 10
}
