package safetext

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"sigs.k8s.io/yaml"
)

// JSON is the output of encoding/json with the Unfit characters it leaves
// raw (DEL, the C1 controls, the bidi controls) written as \u escapes:
// the same document, byte for byte where it held none. encoding/json
// itself escapes the other C0 controls, U+2028 and U+2029, and writes
// U+FFFD for bytes that are not UTF-8. A character outside ASCII can only
// stand inside a string in JSON, where \uHHHH means that character, so
// nothing of the document changes but how it is spelled. Newline, tab and
// carriage return are left: encoding/json escapes them in strings, so a raw
// one is the encoder's own whitespace.
func JSON(b []byte) []byte {
	i := firstJSONEscape(b)
	if i < 0 {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	out = append(out, b[:i]...)
	for i < len(b) {
		r, size := utf8.DecodeRune(b[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			out = append(out, `\ufffd`...)
		case jsonEscapes(r):
			out = append(out, '\\', 'u', digit(r>>12), digit(r>>8), digit(r>>4), digit(r))
		default:
			out = append(out, b[i:i+size]...)
		}
		i += size
	}
	return out
}

// WriteJSON writes v to w as doctor's JSON outputs are written: indented
// by two spaces, <, > and & as they are, through JSON.
func WriteJSON(w io.Writer, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(JSON(b.Bytes()))
	return err
}

func jsonEscapes(r rune) bool { return Unfit(r) && r != '\n' && r != '\t' && r != '\r' }

func firstJSONEscape(b []byte) int {
	for i := 0; i < len(b); {
		if b[i] >= 0x20 && b[i] < 0x7f || b[i] == '\n' || b[i] == '\t' || b[i] == '\r' {
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 || jsonEscapes(r) {
			return i
		}
		i += size
	}
	return -1
}

func digit(r rune) byte { return "0123456789abcdef"[r&0xf] }

// YAML is v as sigs.k8s.io/yaml writes it (its JSON form, key for key),
// with the same data and no Unfit character raw but the emitter's own
// newlines. The YAML emitter escapes the C0 controls but writes the bidi
// and other format characters raw (YAML counts them printable), turns NEL
// into a line break, and the parser under it refuses DEL and the C1
// controls outright (yaml.Marshal fails: a pod name with one would make
// -o yaml print nothing). So every Unfit character of a string (newline
// and tab aside, which the emitter writes as YAML, in a block or as \t) is
// first replaced by a marker the emitter can only write in a double-quoted
// scalar, as escapes of its own, and those escapes are then rewritten as
// YAML's escape of the character (\x7f, \u200b, \U000e0041), which means
// that character: a reader of the YAML gets the string that was marshalled.
func YAML(v any) ([]byte, error) {
	j, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.UseNumber() // the numbers stay as they were written
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return nil, err
	}
	out, err := yaml.Marshal(markStrings(tree))
	if err != nil {
		return nil, err
	}
	return unmark(out), nil
}

// The marker of an Unfit rune r: markOpen, r's hex digits, markClose. Both
// are C0 controls, which the emitter writes only inside double quotes, as
// \x01 and \x02; the string's own C0 controls are Unfit and so marked
// themselves, so a \x01 in the output is always a marker's.
const (
	markOpen  = '\x01'
	markClose = '\x02'
)

// markStrings marks the Unfit runes of every string of a decoded JSON
// document, keys too.
func markStrings(v any) any {
	switch x := v.(type) {
	case string:
		return mark(x)
	case []any:
		for i := range x {
			x[i] = markStrings(x[i])
		}
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[mark(k)] = markStrings(e)
		}
		return out
	}
	return v
}

func mark(s string) string {
	if firstEscape(s, true) < 0 {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if !Unfit(r) || r == '\n' || r == '\t' {
			b.WriteRune(r)
			continue
		}
		b.WriteRune(markOpen)
		b.WriteString(strconv.FormatInt(int64(r), 16))
		b.WriteRune(markClose)
	}
	return b.String()
}

// unmark rewrites each marker the emitter wrote (\x01, hex digits, \x02,
// inside a double-quoted scalar) as YAML's escape of its rune.
func unmark(b []byte) []byte {
	open, close := []byte(`\x01`), []byte(`\x02`)
	if !bytes.Contains(b, open) {
		return b
	}
	out := make([]byte, 0, len(b))
	for {
		i := bytes.Index(b, open)
		if i < 0 {
			return append(out, b...)
		}
		out = append(out, b[:i]...)
		b = b[i+len(open):]
		j := bytes.Index(b, close)
		r, err := strconv.ParseInt(string(b[:max(j, 0)]), 16, 32)
		if j < 0 || err != nil {
			// Not a marker: cannot happen, as every \x01 of a string is
			// one; kept as the emitter wrote it.
			out = append(out, open...)
			continue
		}
		b = b[j+len(close):]
		switch {
		case r <= 0xff:
			out = fmt.Appendf(out, `\x%02x`, r)
		case r <= 0xffff:
			out = fmt.Appendf(out, `\u%04x`, r)
		default:
			out = fmt.Appendf(out, `\U%08x`, r)
		}
	}
}
