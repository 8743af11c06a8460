package nodearch

import (
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/testkit/hostile"
	"github.com/socialwebcomputer/doctor/testkit/hostilefix"
)

// NodeSelector's TOML is one table with one key whatever the value: the
// runner's TOML library (BurntSushi/toml) reads back the value itself.
func TestNodeSelectorHoldsHostileValues(t *testing.T) {
	if got := NodeSelector("arm64"); got.Kind != checks.KindTOML || got.Text != "[runners.kubernetes.node_selector]\n\"kubernetes.io/arch\" = \"arm64\"" {
		t.Fatalf("%+v", got)
	}
	refused := []string{"nul\x00", "not-utf8\xff"}
	for _, v := range append([]string{"arm64"}, hostile.Values...) {
		if !hostilefix.InTOML(v) {
			refused = append(refused, v)
			continue
		}
		hostilefix.OneKeyTOML(t, v, NodeSelector(v), map[string]any{"runners": map[string]any{"kubernetes": map[string]any{"node_selector": map[string]any{ArchLabel: v}}}})
	}
	// A value no TOML string carries is refused: a sentence, never the value.
	for _, v := range refused {
		if st := NodeSelector(v); !hostilefix.WithheldStep(st) || strings.Contains(st.Text, v) {
			t.Errorf("%q: %+v", v, st)
		}
	}
}
