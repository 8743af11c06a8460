package keep

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// The JSON cut is one pass over the answer's bytes: what is kept is copied
// (its strings in one canonical escaping, so a credential is found however
// the server escaped it), what is not is skipped by its syntax alone. No
// value is decoded into Go values; a skipped value is only scanned.

// maxDepth bounds the nesting of a JSON answer, kept or skipped: an API
// object nests a dozen levels.
const maxDepth = 200

type jsonCut struct {
	in  []byte
	pos int
	out []byte
	m   *meter
	sec *Secrets
}

// JSON cuts one JSON answer (an object of a kind doctor reads, or a list
// of them) down to its kept fields.
func JSON(body []byte, req Request) ([]byte, error) {
	m := newMeter(&req)
	c := &jsonCut{in: body, m: m, sec: req.Secrets, out: make([]byte, 0, len(body)/4+64)}
	if err := c.top(); err != nil {
		m.release()
		return nil, err
	}
	return c.out, nil
}

func (c *jsonCut) bad(why string, args ...any) error {
	return &ErrMalformed{URL: c.m.req.URL, Encoding: "JSON", Why: fmt.Sprintf(why, args...) + fmt.Sprintf(" at byte %d", c.pos)}
}

// top cuts the whole input: one object, and nothing after it but space.
func (c *jsonCut) top() error {
	c.ws()
	if err := c.object(); err != nil {
		return err
	}
	c.ws()
	if c.pos != len(c.in) {
		return c.bad("data after the object")
	}
	return nil
}

// object cuts the object at c.pos, whose kind it reads first.
func (c *jsonCut) object() error {
	apiVersion, kind, err := c.kindOf()
	if err != nil {
		return err
	}
	n := kindNode(apiVersion, kind)
	if n == nil {
		return &ErrNotRead{URL: c.m.req.URL, APIVersion: c.sec.ReplaceString(apiVersion), Kind: c.sec.ReplaceString(kind)}
	}
	if err := c.m.add(n.size()); err != nil {
		return err
	}
	return c.fields(n, true, 0)
}

// kindOf reads the object's apiVersion and kind without moving: an
// apiserver writes them first, but JSON does not promise it.
func (c *jsonCut) kindOf() (apiVersion, kind string, err error) {
	start := c.pos
	defer func() { c.pos = start }()
	if c.peek() != '{' {
		return "", "", c.bad("not an object")
	}
	c.pos++
	for {
		c.ws()
		switch c.peek() {
		case '}':
			return apiVersion, kind, nil
		case ',':
			c.pos++
			continue
		}
		name, err := c.key()
		if err != nil {
			return "", "", err
		}
		if name == "apiVersion" || name == "kind" {
			s, isStr, err := c.scalarString()
			if err != nil {
				return "", "", err
			}
			if isStr {
				if name == "kind" {
					kind = s
				} else {
					apiVersion = s
				}
			}
			continue
		}
		if err := c.skip(); err != nil {
			return "", "", err
		}
	}
}

// fields cuts the object at c.pos to n's fields. top keeps apiVersion and
// kind, which the decoder needs.
func (c *jsonCut) fields(n *node, top bool, depth int) error {
	if depth > maxDepth {
		return c.bad("nested deeper than %d", maxDepth)
	}
	wrote := false
	return c.members('{', func(int) error {
		name, err := c.key()
		if err != nil {
			return err
		}
		f := n.byJSON[name]
		typeMeta := top && (name == "apiVersion" || name == "kind")
		if f == nil && !typeMeta || f != nil && n.goType == nil && !c.fits(f) {
			// Not kept; or, in a schemaless kind, not the object or list
			// its path says, which unstructured access would not find.
			return c.skip()
		}
		c.member(&wrote, name)
		if typeMeta {
			return c.scalar(nil)
		}
		return c.value(f, n.goType == nil, depth)
	})
}

// members walks the object ('{') or list ('[') at c.pos, writing its
// brackets, and calls each for every member or element, after the comma
// before it: each reads the member and writes what it keeps, commas
// included (element and member write them).
func (c *jsonCut) members(open byte, each func(i int) error) error {
	close := open + 2 // '}' is '{'+2, ']' is '['+2
	if c.peek() != open {
		return c.bad("%q was expected", open)
	}
	c.pos++
	c.out = append(c.out, open)
	for i := 0; ; i++ {
		c.ws()
		if c.peek() == close {
			c.pos++
			c.out = append(c.out, close)
			return nil
		}
		if i > 0 {
			if c.peek() != ',' {
				return c.bad("a missing comma")
			}
			c.pos++
			c.ws()
		}
		if err := each(i); err != nil {
			return err
		}
	}
}

// element writes the comma before the i-th element of a list that keeps
// every element.
func (c *jsonCut) element(i int) {
	if i > 0 {
		c.out = append(c.out, ',')
	}
}

// member writes a kept member's name, after a comma when one was written
// before it.
func (c *jsonCut) member(wrote *bool, name string) {
	if *wrote {
		c.out = append(c.out, ',')
	}
	*wrote = true
	c.out = appendJSONString(c.out, []byte(name))
	c.out = append(c.out, ':')
}

// fits says whether the value at c.pos has the shape f's path gives it.
func (c *jsonCut) fits(f *field) bool {
	switch b := c.peek(); {
	case b == 'n':
		return true
	case f.repeated:
		return b == '['
	case f.shape == message:
		return b == '{'
	}
	return true
}

// value cuts one kept field's value; a typed kind's value of another shape
// than its field is an error, as decoding it would be.
func (c *jsonCut) value(f *field, schemaless bool, depth int) error {
	c.ws()
	if c.literal("null") {
		c.out = append(c.out, "null"...)
		return nil
	}
	if !f.repeated || f.shape == mapping {
		size := f.elemSize // a pointed-to struct or value
		if f.shape == mapping {
			size = schemaSize // the map; its entries count on their own
		}
		if err := c.m.add(size); err != nil {
			return err
		}
		return c.one(f, schemaless, depth)
	}
	if c.peek() != '[' {
		return c.bad("%s: a list was expected", f.json)
	}
	return c.members('[', func(i int) error {
		c.element(i)
		if err := c.m.elements(f, i+1); err != nil {
			return err
		}
		if err := c.m.add(f.elemSize); err != nil {
			return err
		}
		return c.one(f, schemaless, depth+1)
	})
}

// one cuts one value of f (one element, for a list).
func (c *jsonCut) one(f *field, schemaless bool, depth int) error {
	c.ws()
	switch f.shape {
	case message:
		if c.peek() != '{' && schemaless {
			// An element that is not an object reads as none (nil) to
			// unstructured access, as null does.
			c.out = append(c.out, "null"...)
			return c.skip()
		}
		if c.peek() != '{' {
			return c.bad("%s: an object was expected", f.json)
		}
		if schemaless {
			if err := c.m.add(schemaSize); err != nil {
				return err
			}
		}
		return c.fields(f.child, false, depth+1)
	case mapping:
		return c.mapping(f)
	case anyJSON:
		if f.transform != nil && c.peek() == '"' {
			return c.scalar(f) // a message of a schemaless kind
		}
		return c.any(depth)
	}
	return c.scalar(f)
}

// mapping cuts a map of strings or quantities: every entry kept, or only
// its key.
func (c *jsonCut) mapping(f *field) error {
	if c.peek() != '{' {
		return c.bad("%s: an object was expected", f.json)
	}
	return c.members('{', func(i int) error {
		c.element(i)
		if err := c.m.elements(f, i+1); err != nil {
			return err
		}
		kstart := c.pos
		n, err := c.str(nil)
		if err != nil {
			return err
		}
		// As the protobuf cut counts an entry: its slot, its key's bytes and
		// its value's (scalar counts a string's).
		if err := c.m.add(f.elemSize + int64(n)); err != nil {
			return err
		}
		key := c.in[kstart:c.pos]
		if err := c.colon(); err != nil {
			return err
		}
		if f.keysOnly || f.keepValue != nil && !f.keepValue(jsonText(key)) {
			c.out = append(c.out, `""`...)
			return c.skip()
		}
		return c.scalar(nil)
	})
}

// jsonText is the text of a JSON string as it was written (quotes
// included), unescaped.
func jsonText(raw []byte) string {
	if len(raw) >= 2 && bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1])
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// colon reads and writes the colon after a member's name.
func (c *jsonCut) colon() error {
	c.ws()
	if c.peek() != ':' {
		return c.bad("a missing colon")
	}
	c.pos++
	c.out = append(c.out, ':')
	c.ws()
	return nil
}

// scalar copies one string, number, boolean or null; f, when set, may
// transform a string.
func (c *jsonCut) scalar(f *field) error {
	c.ws()
	switch b := c.peek(); {
	case b == '"':
		n, err := c.str(f)
		if err != nil {
			return err
		}
		return c.m.add(int64(n)) // the kept string's bytes, as the protobuf cut counts them
	case b == 't':
		if !c.literal("true") {
			return c.bad("not a value")
		}
		c.out = append(c.out, "true"...)
	case b == 'f':
		if !c.literal("false") {
			return c.bad("not a value")
		}
		c.out = append(c.out, "false"...)
	case b == 'n':
		if !c.literal("null") {
			return c.bad("not a value")
		}
		c.out = append(c.out, "null"...)
	case b == '-' || b >= '0' && b <= '9':
		start := c.pos
		if err := c.number(); err != nil {
			return err
		}
		c.out = append(c.out, c.in[start:c.pos]...)
	default:
		return c.bad("a value was expected")
	}
	return nil
}

// any copies a schemaless leaf whole: its strings canonical, its lists and
// objects bounded and counted as an unstructured object holds them.
func (c *jsonCut) any(depth int) error {
	if depth > maxDepth {
		return c.bad("nested deeper than %d", maxDepth)
	}
	c.ws()
	switch c.peek() {
	case '{':
		return c.members('{', func(i int) error {
			c.element(i)
			if i >= MaxRepeated {
				return &ErrTooMuch{URL: c.m.req.URL, What: "members of an object", Limit: MaxRepeated}
			}
			if err := c.m.add(16 + mapEntryOverhead); err != nil {
				return err
			}
			if _, err := c.str(nil); err != nil {
				return err
			}
			if err := c.colon(); err != nil {
				return err
			}
			return c.any(depth + 1)
		})
	case '[':
		return c.members('[', func(i int) error {
			c.element(i)
			if i >= MaxRepeated {
				return &ErrTooMuch{URL: c.m.req.URL, What: "elements of a list", Limit: MaxRepeated}
			}
			if err := c.m.add(16); err != nil {
				return err
			}
			return c.any(depth + 1)
		})
	}
	return c.scalar(nil)
}

// key reads one member name and its colon.
func (c *jsonCut) key() (string, error) {
	if c.peek() != '"' {
		return "", c.bad("a member name was expected")
	}
	start := c.pos
	escaped, err := c.scanString()
	if err != nil {
		return "", err
	}
	raw := c.in[start:c.pos]
	name := string(raw[1 : len(raw)-1])
	if escaped {
		if err := json.Unmarshal(raw, &name); err != nil {
			return "", c.bad("a member name does not decode")
		}
	}
	c.ws()
	if c.peek() != ':' {
		return "", c.bad("a missing colon")
	}
	c.pos++
	c.ws()
	return name, nil
}

// scalarString reads a string value without copying it; isStr is false for
// any other value, which is skipped.
func (c *jsonCut) scalarString() (s string, isStr bool, err error) {
	if c.peek() != '"' {
		return "", false, c.skip()
	}
	start := c.pos
	escaped, err := c.scanString()
	if err != nil {
		return "", false, err
	}
	raw := c.in[start:c.pos]
	s = string(raw[1 : len(raw)-1])
	if escaped {
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", false, c.bad("a string does not decode")
		}
	}
	return s, true, nil
}

// str copies one string: its escapes made canonical, the request's
// credential replaced, f's transform applied. n is the length of the kept
// string, unescaped.
func (c *jsonCut) str(f *field) (n int, err error) {
	start := c.pos
	escaped, err := c.scanString()
	if err != nil {
		return 0, err
	}
	raw := c.in[start:c.pos]
	content := raw[1 : len(raw)-1]
	least := len(content)
	if escaped {
		least = (least + 5) / 6 // no escape is longer than six bytes: at least this long
	}
	if err := c.m.str(least); err != nil {
		return 0, err
	}
	if !escaped && (f == nil || f.transform == nil) && !c.sec.In(content) {
		c.out = append(c.out, raw...)
		return len(content), nil
	}
	if escaped {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return 0, c.bad("a string does not decode")
		}
		if err := c.m.str(len(s)); err != nil {
			return 0, err
		}
		content = []byte(s)
	}
	if f != nil && f.transform != nil {
		content = []byte(f.transform(string(content)))
	}
	content = c.sec.Replace(content)
	c.out = appendJSONString(c.out, content)
	return len(content), nil
}

// scanString moves past the string at c.pos, checking its escapes; escaped
// says it has any.
func (c *jsonCut) scanString() (escaped bool, err error) {
	c.pos++ // the opening quote
	for c.pos < len(c.in) {
		b := c.in[c.pos]
		switch {
		case b == '"':
			c.pos++
			return escaped, nil
		case b == '\\':
			escaped = true
			if c.pos+1 >= len(c.in) {
				return false, c.bad("a string ends in an escape")
			}
			switch c.in[c.pos+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				c.pos += 2
			case 'u':
				if c.pos+6 > len(c.in) || !isHex4(c.in[c.pos+2:c.pos+6]) {
					return false, c.bad("a bad \\u escape")
				}
				c.pos += 6
			default:
				return false, c.bad("a bad escape")
			}
		case b < 0x20:
			return false, c.bad("a control character in a string")
		case b >= utf8.RuneSelf:
			// Invalid UTF-8 is kept as it is: the decoder replaces it with
			// U+FFFD on every path alike.
			c.pos++
		default:
			c.pos++
		}
	}
	return false, c.bad("a string does not end")
}

func isHex4(b []byte) bool {
	for _, x := range b {
		if !('0' <= x && x <= '9' || 'a' <= x && x <= 'f' || 'A' <= x && x <= 'F') {
			return false
		}
	}
	return true
}

// number moves past a number, checking its grammar.
func (c *jsonCut) number() error {
	start := c.pos
	if c.peek() == '-' {
		c.pos++
	}
	switch {
	case c.peek() == '0':
		c.pos++
	case c.peek() >= '1' && c.peek() <= '9':
		for c.peek() >= '0' && c.peek() <= '9' {
			c.pos++
		}
	default:
		return c.bad("a bad number")
	}
	if c.peek() == '.' {
		c.pos++
		if !(c.peek() >= '0' && c.peek() <= '9') {
			return c.bad("a bad number")
		}
		for c.peek() >= '0' && c.peek() <= '9' {
			c.pos++
		}
	}
	if c.peek() == 'e' || c.peek() == 'E' {
		c.pos++
		if c.peek() == '+' || c.peek() == '-' {
			c.pos++
		}
		if !(c.peek() >= '0' && c.peek() <= '9') {
			return c.bad("a bad number")
		}
		for c.peek() >= '0' && c.peek() <= '9' {
			c.pos++
		}
	}
	if c.pos-start > 64 {
		return c.bad("a number longer than 64 characters")
	}
	return nil
}

// skip moves past one value, checking its syntax, without keeping it. It
// keeps a stack of the open containers, not a recursion.
func (c *jsonCut) skip() error {
	var stack []byte // '{' or '['
	expectValue := true
	for {
		c.ws()
		if expectValue {
			switch b := c.peek(); {
			case b == '{' || b == '[':
				if len(stack) >= maxDepth {
					return c.bad("nested deeper than %d", maxDepth)
				}
				stack = append(stack, b)
				c.pos++
				c.ws()
				if close := b + 2; c.peek() == close { // '}' is '{'+2, ']' is '['+2
					c.pos++
					stack = stack[:len(stack)-1]
					expectValue = false
					break
				}
				if b == '{' {
					if _, err := c.key(); err != nil {
						return err
					}
				}
				continue
			case b == '"':
				if _, err := c.scanString(); err != nil {
					return err
				}
			case b == '-' || b >= '0' && b <= '9':
				if err := c.number(); err != nil {
					return err
				}
			case c.literal("true"), c.literal("false"), c.literal("null"):
			default:
				return c.bad("a value was expected")
			}
			expectValue = false
		}
		if len(stack) == 0 {
			return nil
		}
		c.ws()
		top := stack[len(stack)-1]
		switch b := c.peek(); {
		case b == ',':
			c.pos++
			c.ws()
			if top == '{' {
				if _, err := c.key(); err != nil {
					return err
				}
			}
			expectValue = true
		case top == '{' && b == '}', top == '[' && b == ']':
			c.pos++
			stack = stack[:len(stack)-1]
		default:
			return c.bad("a missing comma or end")
		}
	}
}

// literal moves past word when it is next.
func (c *jsonCut) literal(word string) bool {
	if bytes.HasPrefix(c.in[c.pos:], []byte(word)) {
		c.pos += len(word)
		return true
	}
	return false
}

func (c *jsonCut) peek() byte {
	if c.pos < len(c.in) {
		return c.in[c.pos]
	}
	return 0
}

func (c *jsonCut) ws() {
	for c.pos < len(c.in) {
		switch c.in[c.pos] {
		case ' ', '\t', '\n', '\r':
			c.pos++
		default:
			return
		}
	}
}

// appendJSONString appends s as a JSON string, escaping only what JSON
// requires: the quote, the backslash and control characters.
func appendJSONString(out, s []byte) []byte {
	const hex = "0123456789abcdef"
	out = append(out, '"')
	last := 0
	for i, b := range s {
		if b >= 0x20 && b != '"' && b != '\\' {
			continue
		}
		out = append(out, s[last:i]...)
		switch b {
		case '"', '\\':
			out = append(out, '\\', b)
		case '\n':
			out = append(out, '\\', 'n')
		case '\r':
			out = append(out, '\\', 'r')
		case '\t':
			out = append(out, '\\', 't')
		default:
			out = append(out, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xf])
		}
		last = i + 1
	}
	out = append(out, s[last:]...)
	return append(out, '"')
}
