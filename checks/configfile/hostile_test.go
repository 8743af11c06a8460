package configfile

import (
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts/kubefacts"
	"github.com/socialwebcomputer/doctor/testkit/hostilefix"
)

// Every hostile value reaching the fix of the file and of a directory in
// the way (its name, the user chown gives it to) is refused or arrives as
// one word; /etc in the way is never chmodded.
func TestChangeStepsHoldHostileValues(t *testing.T) {
	scope := &kubefacts.FixScope{Roots: []string{"/etc/gitlab-runner"}}
	build := func(v string) checks.Steps {
		steps := kubefacts.ChangeSteps(scope, v,
			kubefacts.Change{Path: "/etc/gitlab-runner/" + v + "/config.toml", Mode: "0600", Chown: true},
			kubefacts.Change{Path: "/etc/gitlab-runner/" + v, Mode: "o+x"},
			kubefacts.Change{Path: "/etc", Mode: "o+x"})
		if last := steps[len(steps)-1]; last.Kind != checks.KindText || !strings.Contains(last.Text, "/etc is a system path") {
			t.Errorf("%q: /etc got %+v", v, last)
		}
		return steps
	}
	values := hostilefix.PathValues(func(v string) string { return "/etc/gitlab-runner/" + v + "/config.toml" })
	if n := hostilefix.HoldsValues(t, values, build); n != len(values) {
		t.Errorf("%d of %d hostile values printed: each is a path of the runner's own", n, len(values))
	}
}

// A system directory in the way, a path outside the runner's own, a
// relative one, and any path of a runner nobody installed get no command.
func TestChangeStepsRefuse(t *testing.T) {
	scope := &kubefacts.FixScope{Roots: []string{"/etc/gitlab-runner"}}
	for _, p := range []string{"/etc", "/", "/usr/bin", "/etc/shadow", "/etc/gitlab-runner/../shadow", "config.toml"} {
		if got := kubefacts.ChangeSteps(scope, "", kubefacts.Change{Path: p, Mode: "o+x"}); !hostilefix.Withheld(got) {
			t.Errorf("%s: %+v", p, got)
		}
	}
	refused := &kubefacts.FixScope{Refused: "pid 7 (uid 1000 mallory) runs gitlab-runner as neither root nor a systemd unit's user"}
	got := kubefacts.ChangeSteps(refused, "mallory", kubefacts.Change{Path: "/etc/gitlab-runner/config.toml", Mode: "0600", Chown: true})
	if !hostilefix.Withheld(got) || !strings.Contains(got.String(), "cannot vouch for") {
		t.Errorf("a refused runner got %+v", got)
	}
}
