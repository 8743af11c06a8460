package runnerservice

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/checktest"
	"github.com/socialwebcomputer/doctor/internal/testing/testroot"
)

const unit = `[Unit]
Description=GitLab Runner
[Service]
ExecStart=/usr/bin/gitlab-runner "run" "--config" "/etc/gitlab-runner/config.toml" "--service" "gitlab-runner"
Restart=always
[Install]
WantedBy=multi-user.target
`

// world is a root with a running runner (its environ as given) and the
// unit, enabled or not, with a drop-in setting KUBECONFIG.
func world(t *testing.T, env map[string]string, enabled bool) *testroot.Root {
	t.Helper()
	r := testroot.New(t)
	r.Runner(4242, 0, env)
	r.Write("/etc/systemd/system/gitlab-runner.service", unit, 0o644)
	r.Write("/etc/systemd/system/gitlab-runner.service.d/override.conf",
		"[Service]\nEnvironment=KUBECONFIG=/etc/gitlab-runner/tenant-ci/kubeconfig.yaml\n", 0o644)
	if enabled {
		link := filepath.Join(r.Dir, "etc/systemd/system/multi-user.target.wants/gitlab-runner.service")
		if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("/etc/systemd/system/gitlab-runner.service", link); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

func runCheck(t *testing.T, r *testroot.Root) checks.CheckResult {
	t.Helper()
	return checktest.Run(t, r.Dir, Check)
}

func TestDropInThatTheProcessPredates(t *testing.T) {
	r := runCheck(t, world(t, map[string]string{"PATH": "/usr/bin"}, true))
	checktest.WantSays(t, r, checks.StatusFail, "sets KUBECONFIG", "the running process predates the drop-in",
		"sudo systemctl daemon-reload\nsudo systemctl restart gitlab-runner.service", "override.conf:2")
	for _, f := range r.Findings {
		if f.Severity != checks.Error {
			t.Errorf("a KUBECONFIG the process lacks is an error, got %s: %s", f.Severity, f.Cause)
		}
	}
}

func TestProcessMatchingItsEnabledUnitPasses(t *testing.T) {
	r := runCheck(t, world(t, map[string]string{"KUBECONFIG": "/etc/gitlab-runner/tenant-ci/kubeconfig.yaml"}, true))
	checktest.WantSays(t, r, checks.StatusPass)
}

func TestUnitNotEnabled(t *testing.T) {
	r := runCheck(t, world(t, map[string]string{"KUBECONFIG": "/etc/gitlab-runner/tenant-ci/kubeconfig.yaml"}, false))
	checktest.WantSays(t, r, checks.StatusFail, "is not enabled", "sudo systemctl enable gitlab-runner.service")
}

func TestNoUnitIsSkipped(t *testing.T) {
	root := testroot.New(t)
	root.Runner(4242, 0, nil)
	r := runCheck(t, root)
	checktest.WantSays(t, r, checks.StatusSkipped, "the runner is not run by systemd here")
}
