package fleetingstate

import (
	"path"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts/hostfacts"
	"github.com/socialwebcomputer/doctor/checks/facts/kubefacts"
	"github.com/socialwebcomputer/doctor/testkit/hostile"
	"github.com/socialwebcomputer/doctor/testkit/hostilefix"
)

// state_storage.dir comes from config.toml: every hostile value in it
// reaching chown and chmod is one word.
func TestOwnFixHoldsHostileValues(t *testing.T) {
	scope := &kubefacts.FixScope{Roots: []string{"/home/gitlab-runner"}}
	ra := &hostfacts.RunAs{UIDKnown: true, UID: 1001, GID: 1001}
	build := func(v string) checks.Steps { return ownFix(scope, ra, "/home/gitlab-runner/"+v+"/state") }
	values := hostilefix.PathValues(func(v string) string { return "/home/gitlab-runner/" + v + "/state" })
	if n := hostilefix.HoldsValues(t, values, build); n != len(values) {
		t.Errorf("%d of %d hostile values printed: each is a path of the runner's own", n, len(values))
	}
	refused := &kubefacts.FixScope{Refused: "pid 7 (uid 1000 mallory) runs gitlab-runner as neither root nor a systemd unit's user", Roots: scope.Roots}
	for _, got := range []checks.Steps{ownFix(refused, ra, "/home/gitlab-runner/state"), ownFix(scope, ra, "/var/lib"), ownFix(scope, ra, "/etc/shadow"), ownFix(scope, ra, "state")} {
		if !hostilefix.Withheld(got) {
			t.Errorf("chown without scope: %+v", got)
		}
	}
}

// HOME comes from the runner's environment: the state_storage table the
// fix prints is that one table, whatever HOME holds, its dir HOME/state.
func TestEnableFixHoldsHostileValues(t *testing.T) {
	for _, v := range append([]string{"plain"}, hostile.Values...) {
		home := "/home/" + v
		steps := enableFix(&hostfacts.RunAs{HomeSet: true, Home: home})
		var blocks checks.Steps
		for _, st := range steps {
			if st.Kind != checks.KindText {
				blocks = append(blocks, st)
			}
		}
		if len(blocks) != 1 {
			if !hostilefix.Withheld(steps) {
				t.Errorf("%q: %+v", v, steps)
			}
			continue
		}
		if blocks[0].Kind != checks.KindTOML {
			t.Fatalf("%q: a %s block", v, blocks[0].Kind)
		}
		var got map[string]any
		md, err := toml.Decode(blocks[0].Text, &got)
		if err != nil {
			t.Errorf("%q: the block does not parse: %v\n%s", v, err, blocks[0].Text)
			continue
		}
		want := []string{"runners.autoscaler.state_storage", "runners.autoscaler.state_storage.enabled",
			"runners.autoscaler.state_storage.dir", "runners.autoscaler.state_storage.keep_instance_with_acquisitions"}
		var keys []string
		for _, k := range md.Keys() {
			keys = append(keys, k.String())
		}
		if strings.Join(keys, " ") != strings.Join(want, " ") {
			t.Errorf("%q: keys %q, want %q\n%s", v, keys, want, blocks[0].Text)
			continue
		}
		ss := got["runners"].(map[string]any)["autoscaler"].(map[string]any)["state_storage"].(map[string]any)
		if ss["dir"] != path.Join(home, "state") || ss["enabled"] != true || ss["keep_instance_with_acquisitions"] != true {
			t.Errorf("%q: %v\n%s", v, ss, blocks[0].Text)
		}
	}
}
