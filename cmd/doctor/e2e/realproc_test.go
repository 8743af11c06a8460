package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/report"
	"github.com/socialwebcomputer/doctor/testkit/cmdtest"
	"github.com/socialwebcomputer/doctor/testkit/fixture"
	"github.com/socialwebcomputer/doctor/testkit/testpki"
	"github.com/socialwebcomputer/doctor/testkit/testproc"
)

// TestCLIHelperProcess is the fake runner's body, not a test
// (testproc.Child): it sleeps until the parent kills it.
func TestCLIHelperProcess(t *testing.T) { testproc.Child() }

// startRunner runs this test binary as <tmp>/gitlab-runner (a symlink, so
// /proc/<pid>/comm is gitlab-runner) with a runner's arguments and exactly
// env, and returns its pid once /proc shows the command line.
func startRunner(t *testing.T, args, env []string) int {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	return testproc.Start(t, testproc.Runner{Helper: "TestCLIHelperProcess", Args: args, Env: env})
}

// TestRealRunnerProcess runs doctor against the real /proc: the runner is
// a child process started with a chosen environment, and everything doctor
// says about it comes from that child's own /proc entry. The same runner
// without KUBECONFIG is runner-kubeconfig-env's own case
// (checks/runnerkubeconfigenv, TestRealProcess).
func TestRealRunnerProcess(t *testing.T) {
	dir := t.TempDir()
	cmdtest.NoErr(t, os.Chmod(dir, 0o700)) // as the guide's tenant-ci directory
	cfg := filepath.Join(dir, "config.toml")
	cmdtest.NoErr(t, os.WriteFile(cfg, []byte(`concurrent = 2
[[runners]]
  name = "real-process"
  url = "https://gitlab.example.invalid/"
  executor = "kubernetes"
  [runners.kubernetes]
    namespace = "gitlab-runner"
`), 0o600))
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	ca, err := testpki.NewCA("tenant-ci PKI", now.Add(-time.Hour), now.Add(time.Hour))
	cmdtest.NoErr(t, err)
	cert, key, err := ca.Client("did:plc:realprocess", []string{"socialweb.computer:cluster-owners"}, now.Add(-time.Hour), now.Add(11*time.Hour))
	cmdtest.NoErr(t, err)
	kube := filepath.Join(dir, "kubeconfig.yaml")
	cmdtest.NoErr(t, os.WriteFile(kube, testpki.Kubeconfig("tenant-ci",
		"https://kcp.socialweb.invalid/clusters/root:k3x9q2mf:tenant-ci:clusters", ca.CertPEM, cert, key), 0o600))

	only := "runner-process,config-decode,runner-kubeconfig-env,kubeconfig-file,cert-expiry"
	doctor := func(pid int) *report.Report {
		code, out, stderr := runDoctor("run", "--root", "/", "--runner-pid", strconv.Itoa(pid),
			"--now", now.Format(time.RFC3339), "--offline", "-o", "json", "--only", only)
		var rep report.Report
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("exit %d, stderr %s: %v", code, stderr, err)
		}
		return &rep
	}

	pid := startRunner(t, []string{"run", "--config", cfg}, []string{"KUBECONFIG=" + kube, "PATH=/usr/bin:/bin"})
	rep := doctor(pid)
	fixture.AssertWant(t, rep, fixture.Want{Status: map[string]string{
		"runner-process": "pass", "config-decode": "pass", "runner-kubeconfig-env": "pass",
		"kubeconfig-file": "pass", "cert-expiry": "pass",
	}})
	if len(rep.Findings) != 0 {
		t.Errorf("findings against a healthy real process: %s", fixture.ChecksOf(rep))
	}
}
