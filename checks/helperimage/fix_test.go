package helperimage

import (
	"reflect"
	"strings"
	"testing"
	"unicode"

	"github.com/BurntSushi/toml"

	"github.com/socialwebcomputer/doctor/checks"
)

// hostile are values an attacker puts where a fix takes a host value
// (config.toml's helper_image or node_selector): what ends a string, a
// line, a table or a document, and what a terminal hides.
var hostile = []string{
	"registry.example.invalid/helper:v19.3.1", DeckhouseHelper + ":v${CI_RUNNER_VERSION}", "two words", "new\nline",
	`quote"d`, `back\slash`, "it's", "x\n[runners]\nexecutor = \"shell\"", "img\"\n[[runners]]\nname = \"evil\"",
	"$(id)", "`id`", "EOF", "---", "x\n---\napiVersion: v1", "bidi\u202ereversed", "zero\u200bwidth", "tab\there",
	"#comment", "a = b", "]", "[x]", "ünïcödé", "",
}

// decodes checks that st is TOML that the runner's library reads back as
// want, on two lines, with no character a terminal hides.
func decodes(t *testing.T, v string, st checks.Step, want map[string]any) {
	t.Helper()
	if st.Kind != checks.KindTOML {
		t.Errorf("%q: %+v", v, st)
		return
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
	} else if !reflect.DeepEqual(got, want) {
		t.Errorf("%q: decodes as %#v\n%s", v, got, st.Text)
	}
}

// The helper image's fixes are one table with one key whatever the image
// or the architecture holds.
func TestFixesHoldHostileValues(t *testing.T) {
	if got := helperImageTOML("docker", DeckhouseHelper+":v19.3.1"); got.Text != "[runners.docker]\nhelper_image = \""+DeckhouseHelper+":v19.3.1\"" {
		t.Errorf("%+v", got)
	}
	if got := archSelector("amd64"); got.Text != "[runners.kubernetes.node_selector]\n\"kubernetes.io/arch\" = \"amd64\"" {
		t.Errorf("%+v", got)
	}
	for _, v := range hostile {
		for _, table := range []string{"docker", "kubernetes"} {
			decodes(t, v, helperImageTOML(table, v), map[string]any{"runners": map[string]any{table: map[string]any{"helper_image": v}}})
		}
		decodes(t, v, archSelector(v), map[string]any{"runners": map[string]any{"kubernetes": map[string]any{"node_selector": map[string]any{"kubernetes.io/arch": v}}}})
		// retag keeps a hostile reference's text: it stays one string.
		decodes(t, v, helperImageTOML("kubernetes", retag(v+":v19.2.0", "19.2.0", "19.3.1")),
			map[string]any{"runners": map[string]any{"kubernetes": map[string]any{"helper_image": retag(v+":v19.2.0", "19.2.0", "19.3.1")}}})
	}
	// What no TOML string carries, or what looks like a secret, is refused:
	// a sentence, never the value.
	for _, v := range []string{"nul\x00", "not-utf8\xff", "https://user:hunter2secret@registry.example.invalid/helper:v1"} {
		if st := helperImageTOML("docker", v); st.Kind != checks.KindText || !strings.HasPrefix(st.Text, "doctor prints no command here: ") || strings.Contains(st.Text, v) {
			t.Errorf("%q: %+v", v, st)
		}
	}
}
