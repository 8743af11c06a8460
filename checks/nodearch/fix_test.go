package nodearch

import (
	"reflect"
	"strings"
	"testing"
	"unicode"

	"github.com/BurntSushi/toml"

	"github.com/socialwebcomputer/doctor/checks"
)

// hostile are values an attacker puts where a fix takes a host value (a
// node's label, config.toml's node_selector): what ends a string, a line,
// a table or a document, and what a terminal hides.
var hostile = []string{
	"arm64", "two words", "new\nline", `quote"d`, `back\slash`, "it's", "x\n[runners]\nexecutor = \"shell\"",
	"arm64\"\n[[runners]]\nname = \"evil\"", "$(id)", "`id`", "EOF", "---", "x\n---\napiVersion: v1",
	"bidi\u202ereversed", "zero\u200bwidth", "tab\there", "#comment", "a = b", "]", "[x]", "ünïcödé", "",
}

// NodeSelector's TOML is one table with one key whatever the value: the
// runner's TOML library (BurntSushi/toml) reads back the value itself.
func TestNodeSelectorHoldsHostileValues(t *testing.T) {
	if got := NodeSelector("arm64"); got.Kind != checks.KindTOML || got.Text != "[runners.kubernetes.node_selector]\n\"kubernetes.io/arch\" = \"arm64\"" {
		t.Fatalf("%+v", got)
	}
	for _, v := range hostile {
		st := NodeSelector(v)
		if st.Kind != checks.KindTOML {
			t.Errorf("%q: %+v", v, st)
			continue
		}
		if n := strings.Count(st.Text, "\n"); n != 1 {
			t.Errorf("%q: %d lines:\n%s", v, n+1, st.Text)
		}
		for _, r := range st.Text {
			if r != '\n' && !unicode.IsPrint(r) {
				t.Errorf("%q: %U written raw:\n%s", v, r, st.Text)
			}
		}
		var got map[string]any
		if _, err := toml.Decode(st.Text, &got); err != nil {
			t.Errorf("%q: does not decode: %v\n%s", v, err, st.Text)
			continue
		}
		want := map[string]any{"runners": map[string]any{"kubernetes": map[string]any{"node_selector": map[string]any{ArchLabel: v}}}}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%q: decodes as %#v\n%s", v, got, st.Text)
		}
	}
	// A value no TOML string carries is refused: a sentence, never the value.
	for _, v := range []string{"nul\x00", "not-utf8\xff"} {
		if st := NodeSelector(v); st.Kind != checks.KindText || !strings.HasPrefix(st.Text, "doctor prints no command here: ") || strings.Contains(st.Text, v) {
			t.Errorf("%q: %+v", v, st)
		}
	}
}
