package safetext

import (
	"bytes"
	"encoding/json"
	"io"
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
// with every string passed through Lines first. The YAML emitter escapes
// the C0 controls but writes the bidi controls raw, turns NEL into a line
// break, and the parser under it refuses DEL and the C1 controls outright
// (yaml.Marshal fails: a pod name with one would make -o yaml print
// nothing), so its strings are made fit before it sees them. Newlines and
// tabs stay: the emitter writes them as YAML, in a block or as \t.
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
	return yaml.Marshal(fitStrings(tree))
}

// fitStrings passes every string of a decoded JSON document, keys too,
// through Lines.
func fitStrings(v any) any {
	switch x := v.(type) {
	case string:
		return Lines(x)
	case []any:
		for i := range x {
			x[i] = fitStrings(x[i])
		}
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[Lines(k)] = fitStrings(e)
		}
		return out
	}
	return v
}
