package runnerconfig

import "github.com/BurntSushi/toml"

// A Span is where one scalar value or one comment is written in
// config.toml text: what a writer needs to replace a value in place,
// keeping every line where it was (findings cite config.toml:9).
type Span struct {
	// Key is the key the value is set under, without array indexes (an
	// element of environment = [...] is under environment); nil for a
	// comment.
	Key        toml.Key
	Kind       SpanKind
	Start, End int // byte offsets into the text: quotes included, a comment from its '#'
}

// SpanKind is how a value is written.
type SpanKind int

const (
	Comment          SpanKind = iota
	BasicString               // "…"
	LiteralString             // '…'
	MultilineBasic            // """…"""
	MultilineLiteral          // '''…'''
	Bare                      // a number, a boolean, a date or time
)

// IsString says the span is a string, in any of TOML's four forms.
func (k SpanKind) IsString() bool { return k >= BasicString && k <= MultilineLiteral }

// Spans lists every scalar value (each element of an array, each value of
// an inline table) and every comment of data, in file order, found by the
// one-pass scanner Locate uses: linear in len(data), never a panic. On text
// that is not valid TOML the spans of the lines it resynchronises past are
// missing; a caller that rewrites text by them decodes it first.
func Spans(data []byte) []Span {
	var out []Span
	s := &scanner{data: data, line: 1, m: newMatcher(nil, false), nodes: map[tableKey]*tableNode{}, spans: &out}
	s.run()
	return out
}
