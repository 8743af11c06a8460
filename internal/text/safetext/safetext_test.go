package safetext

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"sigs.k8s.io/yaml"
)

func TestLineEscapes(t *testing.T) {
	for _, c := range []struct{ in, line, lines string }{
		{"plain text, ünïcode √ …", "plain text, ünïcode √ …", "plain text, ünïcode √ …"},
		{`C:\path\x1b`, `C:\path\x1b`, `C:\path\x1b`}, // a backslash stays
		{"title\x1b]0;pwned\x07", `title\x1b]0;pwned\x07`, `title\x1b]0;pwned\x07`},
		{"a\nb\tc\rd", `a\nb\tc\rd`, "a\nb\tc\\rd"},
		{"nul\x00del\x7f", `nul\x00del\x7f`, `nul\x00del\x7f`},
		{"csi\u009b31m nel\u0085", `csi\u009b31m nel\u0085`, `csi\u009b31m nel\u0085`},
		{"abc\u202edcba\u2066x\u2069", `abc\u202edcba\u2066x\u2069`, `abc\u202edcba\u2066x\u2069`},
		{"lrm\u200e alm\u061c ls\u2028ps\u2029", `lrm\u200e alm\u061c ls\u2028ps\u2029`, `lrm\u200e alm\u061c ls\u2028ps\u2029`},
		{"bad\xff\xc3(", `bad\xff\xc3(`, `bad\xff\xc3(`},
		{"surrogate\xed\xa0\x80", `surrogate\xed\xa0\x80`, `surrogate\xed\xa0\x80`},
		{"replacement \uFFFD stays", "replacement \uFFFD stays", "replacement \uFFFD stays"},
	} {
		if got := Line(c.in); got != c.line {
			t.Errorf("Line(%q) = %q, want %q", c.in, got, c.line)
		}
		if got := Lines(c.in); got != c.lines {
			t.Errorf("Lines(%q) = %q, want %q", c.in, got, c.lines)
		}
	}
}

// TestBadFindsWhatLineEscapes: Bad is the property, Line the cure.
func TestBadFindsWhatLineEscapes(t *testing.T) {
	for _, c := range []struct {
		in, keep string
		want     int
	}{
		{"clean", "", -1},
		{"a\nb", "", 1},
		{"a\nb", "\n", -1},
		{"ab\x1b", "\n\t", 2},
		{"é\xff", "", 2},
		{"x\u202e", "", 1},
	} {
		if got := Bad(c.in, c.keep); got != c.want {
			t.Errorf("Bad(%q, %q) = %d, want %d", c.in, c.keep, got, c.want)
		}
	}
}

// FuzzLine: whatever the input, Line's output has no Unfit character and is
// valid UTF-8, Lines' has none but newline and tab, text that was fit comes
// back unchanged, and nothing is lost: every input byte is in the output
// itself or as its escape, so the output is never shorter.
func FuzzLine(f *testing.F) {
	for _, s := range []string{"", "plain", "\x1b[2J\x1b[H", "a\nb", "\u202e", "\xff", "\u0085", "tab\there", `back\slash`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		line, lines := Line(s), Lines(s)
		if i := Bad(line, ""); i >= 0 {
			t.Fatalf("Line(%q) = %q: unfit at %d", s, line, i)
		}
		if i := Bad(lines, "\n\t"); i >= 0 {
			t.Fatalf("Lines(%q) = %q: unfit at %d", s, lines, i)
		}
		if !utf8.ValidString(line) || !utf8.ValidString(lines) {
			t.Fatalf("not UTF-8: %q %q", line, lines)
		}
		if Bad(s, "") < 0 && line != s {
			t.Fatalf("fit text changed: %q -> %q", s, line)
		}
		if Bad(s, "\n\t") < 0 && lines != s {
			t.Fatalf("fit text changed by Lines: %q -> %q", s, lines)
		}
		if len(line) < len(s) || len(lines) < len(s) || strings.Count(lines, "\n") != strings.Count(s, "\n") {
			t.Fatalf("text lost: %q -> %q / %q", s, line, lines)
		}
		if Line(line) != line {
			t.Fatalf("Line is not idempotent on %q", s)
		}
	})
}

// FuzzJSON: a string encoded by encoding/json and passed through JSON has
// no Unfit character (not even the DEL, C1 and bidi controls encoding/json
// leaves raw) and decodes to what encoding/json's own output decodes to.
func FuzzJSON(f *testing.F) {
	for _, s := range []string{"", "plain", "del\x7f", "c1\u009b", "bidi\u202e", "\xff", "nl\n\x1b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		raw, err := json.MarshalIndent(map[string]any{"k": s, "list": []string{s}}, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		out := JSON(raw)
		if i := Bad(string(out), "\n"); i >= 0 {
			t.Fatalf("JSON of %q: unfit at %d: %q", s, i, out)
		}
		var a, b any
		if err := json.Unmarshal(raw, &a); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(out, &b); err != nil {
			t.Fatalf("JSON broke the document: %v: %q", err, out)
		}
		if ja, jb := mustJSON(t, a), mustJSON(t, b); !bytes.Equal(ja, jb) {
			t.Fatalf("JSON changed the data of %q: %s != %s", s, ja, jb)
		}
		if Bad(string(raw), "\n") < 0 && !bytes.Equal(out, raw) {
			t.Fatalf("fit JSON changed: %q -> %q", raw, out)
		}
	})
}

func mustJSON(t *testing.T, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestYAMLOfUnfitStrings: sigs.k8s.io/yaml fails on DEL and C1 and writes
// bidi controls raw; YAML writes every string fit, and still parses back
// to the same keys, with the values Lines made of them.
func TestYAMLOfUnfitStrings(t *testing.T) {
	in := map[string]any{"del": "a\x7f", "c1": "b\u009b[2J", "bidi": "c\u202ed", "nel": "e\u0085f", "esc": "g\x1b[31m",
		"multi": "line one\nline two\tand a tab", "n": 3, "list": []string{"h\u2066i", "plain"}}
	if _, err := yaml.Marshal(in); err == nil {
		t.Log("sigs.k8s.io/yaml now marshals DEL and C1; YAML still must escape them")
	}
	out, err := YAML(in)
	if err != nil {
		t.Fatal(err)
	}
	if i := Bad(string(out), "\n"); i >= 0 {
		t.Fatalf("unfit at %d:\n%s", i, out)
	}
	var back map[string]any
	if err := yaml.Unmarshal(out, &back); err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]any{"del": `a\x7f`, "c1": `b\u009b[2J`, "bidi": `c\u202ed`, "nel": `e\u0085f`, "esc": `g\x1b[31m`,
		"multi": "line one\nline two\tand a tab", "n": float64(3)} {
		if back[k] != v {
			t.Errorf("%s = %#v, want %#v", k, back[k], v)
		}
	}
}
