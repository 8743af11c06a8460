package fleetingconnector

import (
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts/hostfacts"
	"github.com/socialwebcomputer/doctor/checks/facts/kubefacts"
	"github.com/socialwebcomputer/doctor/testkit/hostilefix"
)

// key_path comes from config.toml and the user from /etc/passwd: every
// hostile value in them reaching ssh-keygen -p, chown, chmod is one word.
func TestFixesHoldHostileValues(t *testing.T) {
	scope := &kubefacts.FixScope{Roots: []string{"/etc/gitlab-runner", "/home/gitlab-runner"}}
	passphrase := func(v string) checks.Steps { return passphraseFix(scope, "/home/gitlab-runner/"+v+"/id_ed25519") }
	keyMode := func(v string) checks.Steps {
		file := "/home/gitlab-runner/" + v + "/id_ed25519"
		ra := &hostfacts.RunAs{UIDKnown: true, UID: 1001, GID: 1001, User: v}
		return keyModeFix(scope, file, ra, []hostfacts.Blocker{{Path: file}}, false)
	}
	dirs := func(v string) checks.Steps {
		file := "/home/gitlab-runner/" + v + "/id_ed25519"
		ra := &hostfacts.RunAs{UIDKnown: true, UID: 1001, GID: 1001, User: "gitlab-runner"}
		return keyModeFix(scope, file, ra, []hostfacts.Blocker{{Path: "/home/gitlab-runner/" + v}, {Path: "/home"}}, false)
	}
	values := hostilefix.PathValues(func(v string) string { return "/home/gitlab-runner/" + v + "/id_ed25519" })
	for name, build := range map[string]func(string) checks.Steps{"ssh-keygen -p": passphrase, "chown and chmod": keyMode, "chmod o+x": dirs} {
		if n := hostilefix.HoldsValues(t, values, build); n != len(values) {
			t.Errorf("%s: %d of %d hostile values printed: each is a path of the runner's own", name, n, len(values))
		}
	}
}

// A key outside the runner's own directories (a Secret's mount, root's
// .ssh), /home in the way, and a runner nobody installed get no command.
func TestFixesRefuse(t *testing.T) {
	scope := &kubefacts.FixScope{Roots: []string{"/etc/gitlab-runner", "/home/gitlab-runner"}}
	ra := &hostfacts.RunAs{UIDKnown: true, UID: 1001, GID: 1001, User: "gitlab-runner"}
	for _, file := range []string{"/ssh/id_ed25519", "/root/.ssh/id_ed25519", "/etc/ssh/ssh_host_ed25519_key", "/home/gitlab-runner/../alice/.ssh/id_ed25519", "id_ed25519"} {
		if got := passphraseFix(scope, file); !hostilefix.Withheld(got) {
			t.Errorf("ssh-keygen -p %s: %+v", file, got)
		}
		if got := keyModeFix(scope, file, ra, []hostfacts.Blocker{{Path: file}}, false); !hostilefix.Withheld(got) {
			t.Errorf("chown %s: %+v", file, got)
		}
	}
	got := keyModeFix(scope, "/home/gitlab-runner/.ssh/id", ra, []hostfacts.Blocker{{Path: "/home"}}, false)
	if !hostilefix.Withheld(got) || !strings.Contains(got.String(), "/home is a system path") {
		t.Errorf("chmod o+x /home: %+v", got)
	}
	refused := &kubefacts.FixScope{Refused: "pid 7 (uid 1000 mallory) runs gitlab-runner as neither root nor a systemd unit's user", Roots: scope.Roots}
	for _, got := range []checks.Steps{
		passphraseFix(refused, "/home/gitlab-runner/.ssh/id"),
		keyModeFix(refused, "/home/gitlab-runner/.ssh/id", ra, []hostfacts.Blocker{{Path: "/home/gitlab-runner/.ssh/id"}}, false),
	} {
		if !hostilefix.Withheld(got) || !strings.Contains(got.String(), "cannot vouch for") {
			t.Errorf("a refused runner got %+v", got)
		}
	}
}
