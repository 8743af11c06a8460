package runnerconfig

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/BurntSushi/toml"
)

// Occurrence is one place where a key is defined in config.toml text.
type Occurrence struct {
	// Key is the key that was looked for, as MetaData.Undecoded() gives it.
	Key toml.Key
	// Line is 1-based.
	Line int
	// Path is the key with the index of every array-of-tables element on the
	// way, for example runners[1].kubernetes.image_pull_policy. Components
	// that are not bare keys are quoted.
	Path string
}

// Locate returns the 1-based line on which key is defined in the TOML text
// data, or 0 when it is not found.
//
// key is a key as MetaData.Undecoded() returns it: its components carry no
// array indexes, so runners.kubernetes.image_pull_policy is found inside
// whichever [[runners]] element defines it first. A key counts as defined on
// the first line that names it or something below it: a key/value line
// (including dotted keys and keys of inline tables, which may span lines), or
// a [table] or [[array.of.tables]] header. LocateAll finds it in every
// element; Undecoded locates all of MetaData.Undecoded() at once.
//
// Locate scans the text itself, because BurntSushi/toml does not expose key
// positions. It understands comments, all four string forms (so "#", "=" or
// "[" inside a string, including a multi-line one, change nothing), quoted
// and dotted keys, inline tables and arrays across lines. It makes one pass
// over data, in time linear in len(data)+len(key), never panics, and on text
// that is not valid TOML resynchronises at the next line. Inline tables and
// arrays nested deeper than 64 levels are skipped.
func Locate(data []byte, key toml.Key) int {
	if len(key) == 0 {
		return 0
	}
	m := newMatcher([]toml.Key{key}, true)
	scan(data, m)
	if len(m.out) == 0 {
		return 0
	}
	return m.out[0].Line
}

// LocateAll returns one Occurrence for every distinct place key is defined:
// the first line of each array element (of tables, or of an inline array)
// that defines it, in file order. For example
// runners.kubernetes.image_pull_policy set in the first and third [[runners]]
// gives runners[0].kubernetes.image_pull_policy and
// runners[2].kubernetes.image_pull_policy. It returns nil when key is not
// found. It runs in one pass, in time linear in the size of data, key and
// the result.
func LocateAll(data []byte, key toml.Key) []Occurrence {
	if len(key) == 0 {
		return nil
	}
	m := newMatcher([]toml.Key{key}, false)
	scan(data, m)
	return m.out
}

// Undecoded returns where each key of md.Undecoded() is defined in data,
// the text md was decoded from: one Occurrence per array element that
// defines it (MetaData.Undecoded lists such a key once per element, without
// saying which), in file order. When a whole table is undecoded, the table
// and each key in it are listed. A key that cannot be located, which does
// not happen for text the decoder accepted, comes last with Line 0 and its
// dotted form as Path. Like LocateAll, it makes a single pass over data.
func Undecoded(data []byte, md toml.MetaData) []Occurrence {
	keys := md.Undecoded()
	if len(keys) == 0 {
		return nil
	}
	m := newMatcher(keys, false)
	scan(data, m)
	out := m.out
	for _, n := range m.terminals {
		if !n.found {
			out = append(out, Occurrence{Key: n.key, Path: n.key.String()})
		}
	}
	return out
}

// comp is one component of a key path; idx is the array element it refers
// to, or -1. inline marks an index into an inline array (key = [...]) as
// opposed to an array of tables ([[key]]).
type comp struct {
	name   string
	idx    int
	inline bool
}

func formatPath(path []comp) string {
	var sb strings.Builder
	for i, c := range path {
		if i > 0 {
			sb.WriteByte('.')
		}
		sb.WriteString(toml.Key{c.name}.String()) // quoted as the library quotes
		if c.idx >= 0 {
			sb.WriteByte('[')
			sb.WriteString(strconv.Itoa(c.idx))
			sb.WriteByte(']')
		}
	}
	return sb.String()
}

func isBareByte(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// trieNode is one component of the keys looked for.
type trieNode struct {
	children map[string]*trieNode
	key      toml.Key // set when a key looked for ends here
	found    bool
}

// matcher follows the scanner's current key path down a trie of the keys
// looked for, one component at a time, so each step costs O(len(name)).
type matcher struct {
	root      *trieNode
	terminals []*trieNode // in the order the keys were given
	first     bool        // stop at the first hit (Locate)
	done      bool

	// Aligned with the scanner's path.
	nodes []*trieNode // nil once off the trie
	gid   []int       // identity of the indexed path up to here
	gidNI []int       // the same without an inline-array index here

	intern map[internKey]int
	seen   map[seenKey]bool
	out    []Occurrence
}

type internKey struct {
	parent int
	name   string
	idx    int
}

type seenKey struct {
	node *trieNode
	gid  int
}

func newMatcher(keys []toml.Key, first bool) *matcher {
	m := &matcher{root: &trieNode{}, first: first, intern: map[internKey]int{}, seen: map[seenKey]bool{}}
	for _, k := range keys {
		if len(k) == 0 {
			continue
		}
		n := m.root
		for _, name := range k {
			c := n.children[name]
			if c == nil {
				if n.children == nil {
					n.children = map[string]*trieNode{}
				}
				c = &trieNode{}
				n.children[name] = c
			}
			n = c
		}
		if n.key == nil {
			n.key = k
			m.terminals = append(m.terminals, n)
		}
	}
	return m
}

func (m *matcher) id(parent int, name string, idx int) int {
	k := internKey{parent, name, idx}
	v, ok := m.intern[k]
	if !ok {
		v = len(m.intern) + 1
		m.intern[k] = v
	}
	return v
}

func (m *matcher) truncate(n int) {
	if n < len(m.nodes) {
		m.nodes, m.gid, m.gidNI = m.nodes[:n], m.gid[:n], m.gidNI[:n]
	}
}

// push follows path[len(path)-1], just appended by the scanner, defined on
// line.
func (m *matcher) push(path []comp, line int) {
	d := len(path) - 1
	c := path[d]
	parent, pgid := m.root, 0
	if d > 0 {
		parent, pgid = m.nodes[d-1], m.gid[d-1]
	}
	var n *trieNode
	if parent != nil {
		n = parent.children[c.name]
	}
	g, gNI := 0, 0
	if !m.first {
		g = m.id(pgid, c.name, c.idx)
		gNI = g
		if c.inline {
			gNI = m.id(pgid, c.name, -1)
		}
	}
	m.nodes, m.gid, m.gidNI = append(m.nodes, n), append(m.gid, g), append(m.gidNI, gNI)

	if m.done || n == nil || n.key == nil {
		return
	}
	if !m.first {
		// The elements of an inline array belong to the definition of the
		// array's key: they are not further occurrences of it.
		sk := seenKey{n, gNI}
		if m.seen[sk] {
			return
		}
		m.seen[sk] = true
	}
	n.found = true
	m.out = append(m.out, Occurrence{Key: n.key, Line: line, Path: formatPath(path)})
	if m.first {
		m.done = true
	}
}

// reindex notes that path[d] now refers to another inline-array element.
func (m *matcher) reindex(path []comp, d int) {
	if m.first || d >= len(m.gid) {
		return
	}
	pgid := 0
	if d > 0 {
		pgid = m.gid[d-1]
	}
	m.gid[d] = m.id(pgid, path[d].name, path[d].idx)
}

// maxDepth bounds the nesting of inline tables and arrays the scanner
// follows. Deeper values are treated as garbage (the scanner skips to the
// next line). Real config files nest a handful of levels.
const maxDepth = 64

// tableKey identifies a table or array of tables by its parent node and
// name, for tracking array-of-tables indexes.
type tableKey struct {
	parent int
	name   string
}

// tableNode is what is known about a header-defined table. For an array of
// tables, id is the node of its current (last) element.
type tableNode struct {
	id    int
	aot   bool
	count int
}

// scanner is a one-pass TOML tokenizer that keeps the key path being
// defined and hands every component pushed onto it to a matcher. Each byte
// is consumed once; recovery from garbage skips to the next line, so the
// whole scan is linear in len(data).
type scanner struct {
	data []byte
	pos  int
	line int
	m    *matcher

	// path is the current table header's components (the first ntable)
	// followed by those of the key being scanned.
	path   []comp
	ntable int

	nodes  map[tableKey]*tableNode
	nextID int

	// spans, when set, receives every scalar value and comment (Spans).
	spans *[]Span
}

func scan(data []byte, m *matcher) {
	s := &scanner{data: data, line: 1, m: m, nodes: map[tableKey]*tableNode{}}
	s.run()
}

func (s *scanner) stopped() bool { return s.m.done }

func (s *scanner) push(c comp, line int) {
	s.path = append(s.path, c)
	s.m.push(s.path, line)
}

func (s *scanner) truncate(n int) {
	if n < len(s.path) {
		s.path = s.path[:n]
		s.m.truncate(n)
	}
}

func (s *scanner) pushKey(names []string, line int) {
	for _, n := range names {
		s.push(comp{name: n, idx: -1}, line)
	}
}

func (s *scanner) peek() byte {
	if s.pos < len(s.data) {
		return s.data[s.pos]
	}
	return 0
}

func (s *scanner) peekAt(off int) byte {
	if p := s.pos + off; p >= 0 && p < len(s.data) {
		return s.data[p]
	}
	return 0
}

func (s *scanner) eof() bool { return s.pos >= len(s.data) }

// advance consumes one byte, counting lines.
func (s *scanner) advance() {
	if s.pos < len(s.data) {
		if s.data[s.pos] == '\n' {
			s.line++
		}
		s.pos++
	}
}

// skipSpace skips spaces and tabs (and a stray \r), not newlines.
func (s *scanner) skipSpace() {
	for !s.eof() {
		switch s.data[s.pos] {
		case ' ', '\t', '\r':
			s.pos++
		default:
			return
		}
	}
}

// skipComment skips from '#' up to (not including) the newline.
func (s *scanner) skipComment() {
	for !s.eof() && s.data[s.pos] != '\n' {
		s.pos++
	}
}

// skipLine skips the rest of the line, including its newline.
func (s *scanner) skipLine() {
	s.skipComment()
	s.advance()
}

// skipBlank skips whitespace, newlines and comments (inside arrays and
// inline tables).
func (s *scanner) skipBlank() {
	for !s.eof() {
		switch s.data[s.pos] {
		case ' ', '\t', '\r', '\n':
			s.advance()
		case '#':
			s.comment()
		default:
			return
		}
	}
}

// comment skips a comment at '#', noting its span.
func (s *scanner) comment() {
	start := s.pos
	s.skipComment()
	s.note(Comment, start)
}

// note records the span from start to here, under the current key path.
func (s *scanner) note(kind SpanKind, start int) {
	if s.spans == nil {
		return
	}
	var key toml.Key
	if kind != Comment {
		key = make(toml.Key, len(s.path))
		for i, c := range s.path {
			key[i] = c.name
		}
	}
	*s.spans = append(*s.spans, Span{Key: key, Kind: kind, Start: start, End: s.pos})
}

func (s *scanner) run() {
	// A UTF-8 byte order mark is not part of the document.
	if len(s.data) >= 3 && s.data[0] == 0xEF && s.data[1] == 0xBB && s.data[2] == 0xBF {
		s.pos = 3
	}
	for !s.eof() && !s.stopped() {
		s.skipSpace()
		switch c := s.peek(); {
		case s.eof():
			return
		case c == '\n':
			s.advance()
			continue
		case c == '#':
			s.comment()
			continue
		case c == '[':
			if !s.header() {
				s.skipLine()
				continue
			}
		default:
			start := s.pos
			if !s.keyValue() {
				if s.pos == start {
					s.pos++ // make progress on a byte that starts nothing
				}
				s.skipLine()
				continue
			}
		}
		// After a statement only a comment may follow on the line.
		s.skipSpace()
		if s.peek() == '#' {
			s.comment()
		}
		if !s.eof() && s.peek() != '\n' {
			s.skipLine()
		}
	}
}

// header scans [a.b] or [[a.b]] and makes it the current table.
func (s *scanner) header() bool {
	line := s.line
	s.pos++ // '['
	aot := false
	if s.peek() == '[' {
		aot = true
		s.pos++
	}
	names, ok := s.key()
	if !ok {
		return false
	}
	s.skipSpace()
	if s.peek() != ']' {
		return false
	}
	s.pos++
	if aot {
		if s.peek() != ']' {
			return false
		}
		s.pos++
	}

	s.truncate(0)
	parent := 0
	for i, name := range names {
		k := tableKey{parent, name}
		n := s.nodes[k]
		last := i == len(names)-1
		if n == nil {
			n = &tableNode{}
			if !(aot && last) {
				s.nextID++
				n.id = s.nextID
			}
			s.nodes[k] = n
		}
		if aot && last {
			n.aot = true
			n.count++
			s.nextID++
			n.id = s.nextID // a new element: its sub-tables start afresh
		}
		idx := -1
		if n.aot {
			idx = n.count - 1
		}
		parent = n.id
		s.push(comp{name: name, idx: idx}, line)
	}
	s.ntable = len(names)
	return true
}

// keyValue scans key = value at the top level of a table.
func (s *scanner) keyValue() bool {
	if !s.assignment(s.ntable) {
		return false
	}
	ok := s.value(0)
	s.truncate(s.ntable)
	return ok
}

// assignment scans `key =` and records the key below the first base
// components of the current path; the value follows it.
func (s *scanner) assignment(base int) bool {
	line := s.line
	names, ok := s.key()
	if !ok {
		return false
	}
	s.skipSpace()
	if s.peek() != '=' {
		return false
	}
	s.pos++
	s.skipSpace()
	s.truncate(base)
	s.pushKey(names, line)
	return true
}

// key scans a possibly dotted key: bare, "basic" or 'literal' components
// separated by dots, with optional spaces around the dots.
func (s *scanner) key() ([]string, bool) {
	var names []string
	for {
		s.skipSpace()
		var name string
		switch c := s.peek(); {
		case c == '"':
			v, ok := s.basicString(true)
			if !ok {
				return nil, false
			}
			name = v
		case c == '\'':
			v, ok := s.literalString(true)
			if !ok {
				return nil, false
			}
			name = v
		case isBareByte(c):
			start := s.pos
			for !s.eof() && isBareByte(s.data[s.pos]) {
				s.pos++
			}
			name = string(s.data[start:s.pos])
		default:
			return nil, false
		}
		names = append(names, name)
		s.skipSpace()
		if s.peek() != '.' {
			return names, true
		}
		s.pos++
	}
}

// value scans one value. Keys of inline tables inside it are pushed onto
// s.path.
func (s *scanner) value(depth int) bool {
	if depth > maxDepth {
		return false
	}
	start := s.pos
	switch c := s.peek(); c {
	case '"':
		if s.peekAt(1) == '"' && s.peekAt(2) == '"' {
			return s.noted(MultilineBasic, start, s.multiline('"'))
		}
		_, ok := s.basicString(false)
		return s.noted(BasicString, start, ok)
	case '\'':
		if s.peekAt(1) == '\'' && s.peekAt(2) == '\'' {
			return s.noted(MultilineLiteral, start, s.multiline('\''))
		}
		_, ok := s.literalString(false)
		return s.noted(LiteralString, start, ok)
	case '{':
		return s.inlineTable(depth)
	case '[':
		return s.array(depth)
	case 0:
		return false
	default:
		// Numbers, booleans, dates and times (which may contain a space).
		for !s.eof() {
			switch s.data[s.pos] {
			case ',', ']', '}', '#', '\n', '\r':
				return s.noted(Bare, start, s.pos > start)
			}
			s.pos++
		}
		return s.noted(Bare, start, s.pos > start)
	}
}

// noted notes the value from start when it scanned, and passes ok on.
func (s *scanner) noted(kind SpanKind, start int, ok bool) bool {
	if ok {
		s.note(kind, start)
	}
	return ok
}

func (s *scanner) inlineTable(depth int) bool {
	s.pos++ // '{'
	base := len(s.path)
	defer s.truncate(base)
	for {
		s.skipBlank()
		switch s.peek() {
		case '}':
			s.pos++
			return true
		case ',':
			s.pos++
			continue
		}
		if s.eof() {
			return false
		}
		if !s.assignment(base) {
			return false
		}
		if !s.value(depth + 1) {
			return false
		}
		s.truncate(base)
	}
}

func (s *scanner) array(depth int) bool {
	s.pos++ // '['
	// Keys of inline tables in the array get the array's key, indexed. In an
	// array of arrays only the outer index is kept.
	last := len(s.path) - 1
	if last >= s.ntable && s.path[last].idx < 0 {
		defer func() {
			if last < len(s.path) {
				s.path[last].idx, s.path[last].inline = -1, false
				s.m.reindex(s.path, last)
			}
		}()
		s.path[last].inline = true
	} else {
		last = -1
	}
	for i := 0; ; {
		s.skipBlank()
		switch s.peek() {
		case ']':
			s.pos++
			return true
		case ',':
			s.pos++
			continue
		}
		if s.eof() {
			return false
		}
		if last >= 0 {
			s.truncate(last + 1)
			s.path[last].idx = i
			s.m.reindex(s.path, last)
		}
		if !s.value(depth + 1) {
			return false
		}
		i++
	}
}

// basicString scans "..." on one line and returns its unescaped content
// (computed only for keys).
func (s *scanner) basicString(want bool) (string, bool) {
	s.pos++ // '"'
	var sb strings.Builder
	for !s.eof() {
		c := s.data[s.pos]
		switch c {
		case '"':
			s.pos++
			return sb.String(), true
		case '\n':
			return "", false
		case '\\':
			s.pos++
			if s.eof() || s.data[s.pos] == '\n' {
				return "", false
			}
			if want {
				s.unescape(&sb)
			} else {
				s.pos++
			}
		default:
			if want {
				sb.WriteByte(c)
			}
			s.pos++
		}
	}
	return "", false
}

// unescape decodes the escape after a backslash (already consumed).
func (s *scanner) unescape(sb *strings.Builder) {
	c := s.data[s.pos]
	s.pos++
	hex := func(n int) {
		if s.pos+n > len(s.data) {
			sb.WriteByte('\\')
			sb.WriteByte(c)
			return
		}
		v, err := strconv.ParseUint(string(s.data[s.pos:s.pos+n]), 16, 32)
		if err != nil || !utf8.ValidRune(rune(v)) {
			sb.WriteByte('\\')
			sb.WriteByte(c)
			return
		}
		sb.WriteRune(rune(v))
		s.pos += n
	}
	switch c {
	case 'b':
		sb.WriteByte('\b')
	case 't':
		sb.WriteByte('\t')
	case 'n':
		sb.WriteByte('\n')
	case 'f':
		sb.WriteByte('\f')
	case 'r':
		sb.WriteByte('\r')
	case 'e':
		sb.WriteByte(0x1b)
	case '"', '\\':
		sb.WriteByte(c)
	case 'x':
		hex(2)
	case 'u':
		hex(4)
	case 'U':
		hex(8)
	default:
		sb.WriteByte('\\')
		sb.WriteByte(c)
	}
}

// literalString scans '...' on one line.
func (s *scanner) literalString(want bool) (string, bool) {
	s.pos++ // '\''
	start := s.pos
	for !s.eof() {
		switch s.data[s.pos] {
		case '\'':
			v := ""
			if want {
				v = string(s.data[start:s.pos])
			}
			s.pos++
			return v, true
		case '\n':
			return "", false
		}
		s.pos++
	}
	return "", false
}

// multiline scans """...""" or ”'...”'. Up to two quotes may directly
// precede the closing three; in """ a backslash escapes the next byte.
func (s *scanner) multiline(q byte) bool {
	s.pos += 3
	for !s.eof() {
		c := s.data[s.pos]
		switch {
		case c == '\\' && q == '"':
			s.pos++
			s.advance() // the escaped byte, which may be a newline
		case c == q:
			n := 0
			for !s.eof() && s.data[s.pos] == q {
				n++
				s.pos++
			}
			if n >= 3 {
				return true
			}
		default:
			s.advance()
		}
	}
	return false
}
