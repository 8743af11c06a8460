package fixcode

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// constText is code doctor wrote: its type is unexported, so a string
// constant converts to it and a string variable does not compile. Host
// values reach a block only through Data and the encoders.
type constText string

// wordPart is one piece of a Word.
type wordPart struct {
	kind partKind
	text string // data, a variable's name, or constant code
	cmd  *Cmd   // the command of an output part
}

type partKind int

const (
	partData   partKind = iota // a value: quoted by Quote
	partVar                    // "$NAME"
	partOutput                 // "$(cmd)"
	partCode                   // constant code, as written
)

// Word is one shell word: the parts are joined without a space and the
// shell sees one argument.
type Word struct{ parts []wordPart }

// Data is a value as one word, whatever it holds: a path, a name, a URL.
func Data(value string) Word { return Word{[]wordPart{{kind: partData, text: value}}} }

// Var is "$NAME", a variable an earlier line of the same fix (or the
// catalog's TargetVars) sets. The name must be a shell identifier.
func Var(name constText) Word { return Word{[]wordPart{{kind: partVar, text: string(name)}}} }

// Output is "$(cmd)": the output of a command doctor built, as one word.
func Output(c Cmd) Word { return Word{[]wordPart{{kind: partOutput, cmd: &c}}} }

// Code is constant shell code as a word or part of one
// (`jsonpath='{.items[*].metadata.name}'`).
func Code(code constText) Word { return Word{[]wordPart{{kind: partCode, text: string(code)}}} }

// Join is one word made of the parts of ws, in order: "--from-file=" and
// a variable, say.
func Join(ws ...Word) Word {
	var out Word
	for _, w := range ws {
		out.parts = append(out.parts, w.parts...)
	}
	return out
}

// Datas is each value as one word.
func Datas(values ...string) []Word {
	out := make([]Word, len(values))
	for i, v := range values {
		out[i] = Data(v)
	}
	return out
}

type assign struct {
	name  string
	value Word
}

// Cmd is one simple command: assignments, words, redirections, and a
// document on its standard input.
type Cmd struct {
	env    []assign
	words  []Word
	redirs []redirect
	stdin  *Doc
	err    error // why no command is printed (Refuse)
}

type redirect struct {
	op     string
	target *Word
}

// Command is the command name with its arguments, each one word.
func Command(name string, args ...string) Cmd {
	return Cmd{words: Datas(append([]string{name}, args...)...)}
}

// Arg is c with more arguments, each one word.
func (c Cmd) Arg(args ...string) Cmd { return c.Words(Datas(args...)...) }

// Words is c with more words.
func (c Cmd) Words(ws ...Word) Cmd {
	c.words = append(append([]Word(nil), c.words...), ws...)
	return c
}

// Env is c run with NAME=value in its environment (`KUBECONFIG=… kubectl`).
func (c Cmd) Env(name constText, value Word) Cmd {
	c.env = append(append([]assign(nil), c.env...), assign{string(name), value})
	return c
}

// Sudo is c run by sudo. sudo resets the environment, so c's assignments
// are passed through env(1) as words.
func (c Cmd) Sudo() Cmd {
	words := []Word{Data("sudo")}
	if len(c.env) > 0 {
		words = append(words, Data("env"))
		for _, a := range c.env {
			words = append(words, Join(Data(a.name+"="), a.value))
		}
	}
	return Cmd{words: append(words, c.words...), redirs: c.redirs, stdin: c.stdin, err: c.err}
}

// Refuse makes c a command that is never printed: a script holding it
// renders to err. A fact that builds a command prefix (kubectl aimed at
// the runner's cluster) refuses it where running it would be unsafe.
func (c Cmd) Refuse(err error) Cmd {
	if c.err == nil {
		c.err = err
	}
	return c
}

// Redirect is c with a redirection doctor wrote (">/dev/null", "2>&1").
func (c Cmd) Redirect(r constText) Cmd {
	c.redirs = append(append([]redirect(nil), c.redirs...), redirect{op: string(r)})
	return c
}

// To is c with a redirection to a file: op (">", ">>", "<") and the
// file's path as one word.
func (c Cmd) To(op constText, file Word) Cmd {
	c.redirs = append(append([]redirect(nil), c.redirs...), redirect{op: string(op), target: &file})
	return c
}

// Quiet is c with its standard output discarded.
func (c Cmd) Quiet() Cmd { return c.Redirect(">/dev/null") }

// Stdin is c reading d from a heredoc.
func (c Cmd) Stdin(d Doc) Cmd {
	c.stdin = &d
	return c
}

// Line is one line of a script: commands joined by && or |, an
// assignment, or constant code.
type Line struct {
	cmds []Cmd
	ops  []string // between cmds[i] and cmds[i+1]
	set  *assign
	code string
}

// Run is a line of one command.
func Run(c Cmd) Line { return Line{cmds: []Cmd{c}} }

// And is l && c: c runs only when l succeeded.
func (l Line) And(c Cmd) Line { return l.join("&&", c) }

// Pipe is l | c.
func (l Line) Pipe(c Cmd) Line { return l.join("|", c) }

func (l Line) join(op string, c Cmd) Line {
	if l.set != nil || l.code != "" || len(l.cmds) == 0 {
		panic("fixcode: " + op + " after a line that is not a command")
	}
	l.cmds = append(append([]Cmd(nil), l.cmds...), c)
	l.ops = append(append([]string(nil), l.ops...), op)
	return l
}

// Set is NAME=value on a line of its own, for the lines after it.
func Set(name constText, value Word) Line { return Line{set: &assign{string(name), value}} }

// Raw is a line of constant code (`read -rs GLRT_TOKEN`).
func Raw(code constText) Line { return Line{code: string(code)} }

// Script is the lines of a shell block.
type Script struct{ lines []Line }

// Lines is a script of these lines.
func Lines(ls ...Line) Script { return Script{append([]Line(nil), ls...)} }

// Commands is a script of one command a line.
func Commands(cs ...Cmd) Script {
	s := Script{}
	for _, c := range cs {
		s.lines = append(s.lines, Run(c))
	}
	return s
}

// Add is s with more lines.
func (s Script) Add(ls ...Line) Script {
	return Script{append(append([]Line(nil), s.lines...), ls...)}
}

// Then is s with more commands, one a line.
func (s Script) Then(cs ...Cmd) Script { return s.Add(Commands(cs...).lines...) }

// Append is s followed by the lines of t.
func (s Script) Append(t Script) Script { return s.Add(t.lines...) }

// Empty says whether s has no line.
func (s Script) Empty() bool { return len(s.lines) == 0 }

// Render is the script as bash reads it: each value one word, each
// document a heredoc that ends where it should. An error says which value
// the script cannot carry; no text is returned with it.
func (s Script) Render() (string, error) {
	var b strings.Builder
	for i, l := range s.lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		if err := l.render(&b); err != nil {
			return "", err
		}
	}
	out := b.String()
	if err := printable(out, "\n"); err != nil {
		return "", err
	}
	return out, nil
}

func (l Line) render(b *strings.Builder) error {
	switch {
	case l.code != "":
		b.WriteString(l.code)
		return nil
	case l.set != nil:
		return renderAssign(b, *l.set)
	}
	var docs []*heredoc
	for i, c := range l.cmds {
		if i > 0 {
			b.WriteString(" " + l.ops[i-1] + " ")
		}
		d, err := c.render(b)
		if err != nil {
			return err
		}
		if d != nil {
			docs = append(docs, d)
		}
	}
	for _, d := range docs {
		b.WriteString("\n" + d.body + "\n" + d.delim)
	}
	return nil
}

type heredoc struct{ delim, body string }

var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func renderAssign(b *strings.Builder, a assign) error {
	if !identifier.MatchString(a.name) {
		return fmt.Errorf("%q is not a shell variable name", a.name)
	}
	b.WriteString(a.name + "=")
	return a.value.render(b, false)
}

// render writes c and returns the heredoc its standard input reads.
func (c Cmd) render(b *strings.Builder) (*heredoc, error) {
	if c.err != nil {
		return nil, c.err
	}
	if len(c.words) == 0 {
		return nil, errors.New("a command without a name")
	}
	for _, a := range c.env {
		if err := renderAssign(b, a); err != nil {
			return nil, err
		}
		b.WriteByte(' ')
	}
	for i, w := range c.words {
		if i > 0 {
			b.WriteByte(' ')
		}
		if err := w.render(b, i == 0); err != nil {
			return nil, err
		}
	}
	for _, r := range c.redirs {
		b.WriteString(" " + r.op)
		if r.target != nil {
			if err := r.target.render(b, false); err != nil {
				return nil, err
			}
		}
	}
	if c.stdin == nil {
		return nil, nil
	}
	body, err := c.stdin.Text()
	if err != nil {
		return nil, err
	}
	delim := Delimiter(body)
	b.WriteString(" <<'" + delim + "'")
	return &heredoc{delim, strings.TrimSuffix(body, "\n")}, nil
}

// render writes w; first says it is a command's name, where a keyword or
// an = would mean something else.
func (w Word) render(b *strings.Builder, first bool) error {
	if len(w.parts) == 0 {
		b.WriteString("''")
		return nil
	}
	for i, p := range w.parts {
		switch p.kind {
		case partData:
			v, err := value(p.text)
			if err != nil {
				return err
			}
			if len(w.parts) > 1 && v == "" {
				continue // an empty piece of a longer word adds nothing
			}
			b.WriteString(quote(v, first && i == 0))
		case partVar:
			if !identifier.MatchString(p.text) {
				return fmt.Errorf("%q is not a shell variable name", p.text)
			}
			b.WriteString(`"$` + p.text + `"`)
		case partOutput:
			var inner strings.Builder
			d, err := p.cmd.render(&inner)
			if err != nil {
				return err
			}
			if d != nil {
				return errors.New("a command substitution with a heredoc")
			}
			b.WriteString(`"$(` + inner.String() + `)"`)
		case partCode:
			b.WriteString(p.text)
		}
	}
	return nil
}

// Delimiter is a heredoc delimiter no line of body is: EOF, else EOF_1,
// EOF_2, ... A quoted delimiter makes bash read the body as it is, and
// only a line equal to it ends the body.
func Delimiter(body string) string {
	lines := map[string]bool{}
	for _, l := range strings.Split(body, "\n") {
		lines[l] = true
	}
	d := "EOF"
	for i := 1; lines[d]; i++ {
		d = fmt.Sprintf("EOF_%d", i)
	}
	return d
}
