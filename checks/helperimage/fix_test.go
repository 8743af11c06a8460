package helperimage

import (
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/testkit/hostile"
	"github.com/socialwebcomputer/doctor/testkit/hostilefix"
)

// The helper image's fixes are one table with one key whatever the image
// or the architecture holds.
func TestFixesHoldHostileValues(t *testing.T) {
	if got := helperImageTOML("docker", DeckhouseHelper+":v19.3.1"); got.Text != "[runners.docker]\nhelper_image = \""+DeckhouseHelper+":v19.3.1\"" {
		t.Errorf("%+v", got)
	}
	if got := archSelector("amd64"); got.Text != "[runners.kubernetes.node_selector]\n\"kubernetes.io/arch\" = \"amd64\"" {
		t.Errorf("%+v", got)
	}
	for _, v := range append([]string{"registry.example.invalid/helper:v19.3.1", DeckhouseHelper + ":v${CI_RUNNER_VERSION}"}, hostile.Values...) {
		if !hostilefix.InTOML(v) {
			continue // below
		}
		for _, table := range []string{"docker", "kubernetes"} {
			hostilefix.OneKeyTOML(t, v, helperImageTOML(table, v), map[string]any{"runners": map[string]any{table: map[string]any{"helper_image": v}}})
		}
		hostilefix.OneKeyTOML(t, v, archSelector(v), map[string]any{"runners": map[string]any{"kubernetes": map[string]any{"node_selector": map[string]any{"kubernetes.io/arch": v}}}})
		// retag keeps a hostile reference's text: it stays one string.
		hostilefix.OneKeyTOML(t, v, helperImageTOML("kubernetes", retag(v+":v19.2.0", "19.2.0", "19.3.1")),
			map[string]any{"runners": map[string]any{"kubernetes": map[string]any{"helper_image": retag(v+":v19.2.0", "19.2.0", "19.3.1")}}})
	}
	// What no TOML string carries, or what looks like a secret, is refused:
	// a sentence, never the value.
	refused := []string{"nul\x00", "not-utf8\xff", "https://user:hunter2secret@registry.example.invalid/helper:v1"}
	for _, v := range hostile.Values {
		if !hostilefix.InTOML(v) {
			refused = append(refused, v)
		}
	}
	for _, v := range refused {
		if st := helperImageTOML("docker", v); !hostilefix.WithheldStep(st) || strings.Contains(st.Text, v) {
			t.Errorf("%q: %+v", v, st)
		}
	}
}
