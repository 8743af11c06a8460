package runnerservice

import (
	"testing"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/checktest"
	"github.com/socialwebcomputer/doctor/checks/facts/hostfacts"
	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/internal/source/systemd"
	"github.com/socialwebcomputer/doctor/testkit/testroot"
)

// withSystemd is the service fact of root's gitlab-runner.service as a live
// host's manager answered for it (systemd.Unit.UseSystemd).
func withSystemd(t *testing.T, root *testroot.Root, show *systemd.Show) checktest.Option {
	t.Helper()
	env := &hostio.Env{Root: root.Dir}
	u, err := systemd.Load(env, "gitlab-runner.service")
	if err != nil {
		t.Fatal(err)
	}
	u.UseSystemd(env, show)
	enabled, wants := systemd.Enabled(env, "gitlab-runner.service")
	return checktest.Fact(hostfacts.ServiceFact, &hostfacts.Service{Name: "gitlab-runner.service", Unit: u, Enabled: enabled, Wants: wants})
}

// A unit file written after the last daemon-reload: systemd does not know
// the unit, and `systemctl start` says so.
func TestUnitSystemdHasNotLoaded(t *testing.T) {
	root := world(t, map[string]string{"KUBECONFIG": "/etc/gitlab-runner/tenant-ci/kubeconfig.yaml"}, true)
	r := checktest.One(t, Check, checktest.Root(root.Dir), withSystemd(t, root, &systemd.Show{LoadState: "not-found"}))
	checktest.WantSays(t, r, checks.StatusFail, "the running systemd has not loaded it", "LoadState=not-found",
		"sudo systemctl daemon-reload\nsudo systemctl enable --now gitlab-runner.service")
}

// A drop-in that resets Environment= written without daemon-reload: the
// files say no KUBECONFIG, systemd still runs the unit with it, and doctor
// diagnoses systemd's: the process agrees with it, so the only finding is
// the reload systemd is waiting for.
func TestNeedDaemonReload(t *testing.T) {
	root := world(t, map[string]string{"KUBECONFIG": "/etc/gitlab-runner/tenant-ci/kubeconfig.yaml"}, true)
	root.Write("/etc/systemd/system/gitlab-runner.service.d/zz-reset.conf", "[Service]\nEnvironment=\n", 0o644)
	show := &systemd.Show{LoadState: "loaded", FragmentPath: "/etc/systemd/system/gitlab-runner.service",
		DropInPaths: []string{"/etc/systemd/system/gitlab-runner.service.d/override.conf"},
		Environment: []string{"KUBECONFIG=/etc/gitlab-runner/tenant-ci/kubeconfig.yaml"},
		ExecStart: []systemd.ShowExec{{Path: "/usr/bin/gitlab-runner",
			Argv: "/usr/bin/gitlab-runner run --config /etc/gitlab-runner/config.toml --service gitlab-runner"}},
		ActiveState: "active", SubState: "running", NeedDaemonReload: true}
	r := checktest.One(t, Check, checktest.Root(root.Dir), withSystemd(t, root, show))
	checktest.WantSays(t, r, checks.StatusFail, "changed after systemd loaded them (NeedDaemonReload=yes)",
		"differs from the files in DropInPaths, Environment", "sudo systemctl daemon-reload\nsudo systemctl restart gitlab-runner.service")
	if len(r.Findings) != 1 {
		t.Errorf("want the reload alone:\n%s", checktest.Text(r))
	}
}

// A runner that is down, whose last start systemd recorded as failed.
func TestSystemdSaysTheStartFailed(t *testing.T) {
	root := testroot.New(t)
	root.Write("/etc/systemd/system/gitlab-runner.service", unit, 0o644)
	root.Write("/usr/bin/gitlab-runner", "#!/bin/sh\n", 0o755)
	show := &systemd.Show{LoadState: "loaded", FragmentPath: "/etc/systemd/system/gitlab-runner.service",
		ExecStart: []systemd.ShowExec{{Path: "/usr/bin/gitlab-runner",
			Argv: "/usr/bin/gitlab-runner run --config /etc/gitlab-runner/config.toml --service gitlab-runner"}},
		ActiveState: "failed", SubState: "failed", Result: "exit-code", ExecMainStatus: 1}
	r := checktest.One(t, Check, checktest.Root(root.Dir), withSystemd(t, root, show))
	checktest.WantSays(t, r, checks.StatusFail, "systemd says gitlab-runner.service failed (Result=exit-code, ExecMainStatus=1)",
		"sudo journalctl --unit gitlab-runner.service --lines 50 --no-pager")
}
