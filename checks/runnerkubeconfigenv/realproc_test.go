package runnerkubeconfigenv_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/checktest"
	"github.com/socialwebcomputer/doctor/checks/runnerkubeconfigenv"
	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/testkit/testproc"
)

// TestRunnerChild is the real runner's body, not a test (testproc.Child).
func TestRunnerChild(t *testing.T) { testproc.Child() }

// TestRealProcess judges a real `gitlab-runner run` process: the check
// reads the environment from the child's own /proc entry, which holds
// exactly the variables the test gave it.
func TestRealProcess(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(cfg, []byte(`concurrent = 2
[[runners]]
  name = "real-process"
  url = "https://gitlab.example.invalid/"
  executor = "kubernetes"
  [runners.kubernetes]
    namespace = "gitlab-runner"
`), 0o600); err != nil {
		t.Fatal(err)
	}
	check := func(pid int) checks.CheckResult {
		return checktest.ForRunner(t, checktest.Check(t, runnerkubeconfigenv.Check, checktest.Root("/"), checktest.Offline(),
			checktest.Env(func(e *hostio.Env) { e.RunnerPID = pid })), 1)
	}
	run := func(env ...string) int {
		return testproc.Start(t, testproc.Runner{Helper: "TestRunnerChild", Args: []string{"run", "--config", cfg}, Env: env})
	}

	r := check(run("KUBECONFIG="+filepath.Join(dir, "kubeconfig.yaml"), "PATH=/usr/bin:/bin"))
	checktest.WantStatus(t, r, checks.StatusPass, "")
	checktest.WantNoFinding(t, r)

	pid := run("PATH=/usr/bin:/bin")
	r = check(pid)
	checktest.WantStatus(t, r, checks.StatusFail, "")
	if len(r.Findings) != 1 {
		t.Fatalf("want one finding:\n%s", checktest.Text(r))
	}
	checktest.WantFinding(t, r, checks.Critical, `[[runners]] #1 "real-process" uses the Kubernetes executor with no host`,
		fmt.Sprintf("/proc/%d/environ: KUBECONFIG is not set in the environment of pid %d", pid, pid))
}
