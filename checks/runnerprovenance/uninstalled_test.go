package runnerprovenance_test

import (
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/checktest"
	"github.com/socialwebcomputer/doctor/checks/runnerprovenance"
	"github.com/socialwebcomputer/doctor/testkit/testroot"
)

// host is alice's (uid 1000) gitlab-runner process as pid, with root's
// config.toml, on a host whose gitlab-runner.service runs as unitUser
// ("" for no unit).
func host(t *testing.T, pid int, unitUser string) *testroot.Root {
	t.Helper()
	r := testroot.New(t)
	r.Write("/etc/passwd", "root:x:0:0:root:/root:/bin/bash\ngitlab-runner:x:999:999::/home/gitlab-runner:/bin/bash\nalice:x:1000:1000::/home/alice:/bin/bash\n", 0o644)
	r.Write("/etc/gitlab-runner/config.toml", "concurrent = 1\n", 0o644)
	r.Runner(pid, 1000, map[string]string{"HOME": "/home/alice"}, "/home/alice/bin/gitlab-runner", "run", "--config", "/etc/gitlab-runner/config.toml")
	r.Status(pid, 1000, 1000)
	if unitUser != "" {
		user := "User=" + unitUser + "\n"
		if unitUser == "root" {
			user = ""
		}
		r.Write("/etc/systemd/system/gitlab-runner.service", "[Service]\n"+user+"ExecStart=/usr/bin/gitlab-runner run --config /etc/gitlab-runner/config.toml\n", 0o644)
	}
	return r
}

func nobodyInstalled(r checks.CheckResult) bool {
	return strings.Contains(checktest.Text(r), "doctor cannot vouch for")
}

// A process its unit does not name is a runner nobody installed: an error
// naming the pid, the uid and the unit's user, whose fix only reads.
func TestRunnerNobodyInstalled(t *testing.T) {
	for unitUser, says := range map[string]string{
		"":              "pid 4242 (uid 1000 alice) runs gitlab-runner as neither root nor a systemd unit's user",
		"root":          "pid 4242 (uid 1000 alice) runs gitlab-runner, but gitlab-runner.service runs it as root",
		"gitlab-runner": "pid 4242 (uid 1000 alice) runs gitlab-runner, but gitlab-runner.service runs it as gitlab-runner",
	} {
		res := checktest.Run(t, host(t, 4242, unitUser).Dir, runnerprovenance.Check)
		checktest.WantSays(t, res, checks.StatusFail, says, "/proc/4242/status: Uid 1000 (alice)",
			"ps -o user,pid,ppid,lstart,args -p 4242\nsystemctl status --no-pager 4242")
		if len(res.Findings) != 1 || res.Findings[0].Severity != checks.Error {
			t.Errorf("unit user %q: %+v", unitUser, res.Findings)
		}
		for _, f := range res.Findings {
			if strings.Contains(f.Fix.String(), "sudo") || strings.Contains(f.Fix.String(), "/etc/gitlab-runner") {
				t.Errorf("unit user %q: the fix acts for it: %s", unitUser, f.Fix)
			}
		}
	}
}

// The runner its unit names, a container's main process, a user's own
// runner (its config.toml its own), and a process whose uid is unknown
// are no finding of runner-process.
func TestRunnersSomeoneInstalled(t *testing.T) {
	r := host(t, 4242, "alice")
	checktest.WantSays(t, checktest.Run(t, r.Dir, runnerprovenance.Check), checks.StatusPass)

	r = host(t, 1, "")
	checktest.WantSays(t, checktest.Run(t, r.Dir, runnerprovenance.Check), checks.StatusPass)

	r = host(t, 4242, "")
	r.Chown("/etc/gitlab-runner/config.toml", 1000, 1000)
	checktest.WantSays(t, checktest.Run(t, r.Dir, runnerprovenance.Check), checks.StatusPass)

	r = host(t, 4242, "")
	r.Write("/proc/4242/status", "Name:\tgitlab-runner\nUid:\t1000\t10", 0o444) // cut inside the Uid line
	if res := checktest.Run(t, r.Dir, runnerprovenance.Check); nobodyInstalled(res) {
		t.Errorf("an unknown uid is a finding:\n%s", checktest.Text(res))
	}
}
