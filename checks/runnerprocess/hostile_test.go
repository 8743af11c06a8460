package runnerprocess

import (
	"testing"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/testkit/hostile"
	"github.com/socialwebcomputer/doctor/testkit/hostilefix"
)

// The unit's name comes from the process's --service flag: every hostile
// value in it is one word of systemctl and journalctl, or refused.
func TestStartAndReadHoldsHostileValues(t *testing.T) {
	printed := hostilefix.HoldsValues(t, append([]string{"-H", "--now"}, hostile.Values...), func(v string) checks.Steps {
		return checks.Steps{startAndRead(v + ".service")}
	})
	if printed == 0 {
		t.Error("no unit name was printed")
	}
	for _, v := range []string{"-H.service", "--now.service", "a;b.service", "x\nEOF.service", "gitlab-runner"} {
		if got := (checks.Steps{startAndRead(v)}); !hostilefix.Withheld(got) {
			t.Errorf("%q: %s", v, got)
		}
	}
	if got := startAndRead("gitlab-runner.service").Text; got != "sudo systemctl start gitlab-runner.service\nsudo journalctl -u gitlab-runner.service -n 50 --no-pager" {
		t.Errorf("the fix reads %q", got)
	}
}
