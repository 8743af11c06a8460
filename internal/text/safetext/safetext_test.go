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
		// Every format character (Cf) is shown: the invisible ones a name
		// could hide in, the soft hyphen, the byte order mark, a tag.
		{"git\u200blab\u200c\u200d\u2060 soft\u00adhyphen \ufeffbom \U000e0041tag", `git\u200blab\u200c\u200d\u2060 soft\u00adhyphen \ufeffbom \U000e0041tag`, `git\u200blab\u200c\u200d\u2060 soft\u00adhyphen \ufeffbom \U000e0041tag`},
		{"arabic\u0600sign mongolian\u180e interlinear\ufff9", `arabic\u0600sign mongolian\u180e interlinear\ufff9`, `arabic\u0600sign mongolian\u180e interlinear\ufff9`},
		// Visible characters outside ASCII stay: a no-break space, an
		// ideographic space, an emoji (its ZWJ sequence is shown joined by
		// the escape).
		{"nbsp\u00a0ideo\u3000 ok \U0001F600", "nbsp\u00a0ideo\u3000 ok \U0001F600", "nbsp\u00a0ideo\u3000 ok \U0001F600"},
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
// bidi and other format characters raw; YAML writes every string fit, and
// it parses back to the same data, keys and values.
func TestYAMLOfUnfitStrings(t *testing.T) {
	in := map[string]any{"del": "a\x7f", "c1": "b\u009b[2J", "bidi": "c\u202ed", "nel": "e\u0085f", "esc": "g\x1b[31m",
		"zw": "gitlab\u200b-runner\u200d\u2060\ufeff", "shy": "soft\u00adhyphen", "tag": "t\U000e0041", "cr": "a\rb",
		"multi": "line one\nline two\tand a tab", "n": 3, "list": []string{"h\u2066i", "plain"}, "key\u200b": "v",
		"long": strings.Repeat("word ", 40) + "\u200b" + strings.Repeat(" word", 40)}
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
	want := map[string]any{}
	for k, v := range in {
		switch x := v.(type) {
		case int:
			want[k] = float64(x)
		case []string:
			want[k] = []any{x[0], x[1]}
		default:
			want[k] = v
		}
	}
	if wj, bj := mustJSON(t, want), mustJSON(t, back); !bytes.Equal(wj, bj) {
		t.Errorf("YAML changed the data:\n got %s\nwant %s\n%s", bj, wj, out)
	}
}
