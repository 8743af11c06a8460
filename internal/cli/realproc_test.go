package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/internal/testing/fixture"
	"github.com/socialwebcomputer/doctor/internal/testing/testpki"
	"github.com/socialwebcomputer/doctor/report"
)

const cliHelperEnv = "DOCTOR_CLI_HELPER_SLEEP"

// TestCLIHelperProcess is the fake runner's body, not a test: it sleeps
// until the parent kills it.
func TestCLIHelperProcess(t *testing.T) {
	if os.Getenv(cliHelperEnv) != "1" {
		return
	}
	time.Sleep(60 * time.Second)
	os.Exit(0)
}

// startRunner runs this test binary as <tmp>/gitlab-runner (a symlink, so
// /proc/<pid>/comm is gitlab-runner) with a runner's arguments and exactly
// env, and returns its pid once /proc shows the command line.
func startRunner(t *testing.T, args, env []string) int {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	self, err := os.Executable()
	noErr(t, err)
	bin := filepath.Join(t.TempDir(), "gitlab-runner")
	noErr(t, os.Symlink(self, bin))
	cmd := exec.Command(bin, append([]string{"-test.run=^TestCLIHelperProcess$"}, args...)...)
	cmd.Env = append(append([]string{}, env...), cliHelperEnv+"=1")
	noErr(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return waitRunning(t, cmd.Process.Pid)
}

// waitRunning returns pid once /proc shows its `run` command line.
func waitRunning(t *testing.T, pid int) int {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); strings.Contains(string(b), "run\x00") {
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("child %d never showed its command line", pid)
		}
	}
}

// TestRealRunnerProcess runs doctor against the real /proc: the runner is
// a child process started with a chosen environment, and everything doctor
// says about it comes from that child's own /proc entry.
func TestRealRunnerProcess(t *testing.T) {
	dir := t.TempDir()
	noErr(t, os.Chmod(dir, 0o700)) // as the guide's tenant-ci directory
	cfg := filepath.Join(dir, "config.toml")
	noErr(t, os.WriteFile(cfg, []byte(`concurrent = 2
[[runners]]
  name = "real-process"
  url = "https://gitlab.example.invalid/"
  executor = "kubernetes"
  [runners.kubernetes]
    namespace = "gitlab-runner"
`), 0o600))
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	ca, err := testpki.NewCA("tenant-ci PKI", now.Add(-time.Hour), now.Add(time.Hour))
	noErr(t, err)
	cert, key, err := ca.Client("did:plc:realprocess", []string{"socialweb.computer:cluster-owners"}, now.Add(-time.Hour), now.Add(11*time.Hour))
	noErr(t, err)
	kube := filepath.Join(dir, "kubeconfig.yaml")
	noErr(t, os.WriteFile(kube, testpki.Kubeconfig("tenant-ci",
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

	// The same runner without KUBECONFIG: the finding quotes the child's
	// own /proc entry, which has exactly the two variables it was given.
	pid = startRunner(t, []string{"run", "--config", cfg}, []string{"PATH=/usr/bin:/bin"})
	rep = doctor(pid)
	fixture.AssertWant(t, rep, fixture.Want{Exit: 2, Top: "runner-kubeconfig-env", Says: map[string][]string{
		"runner-kubeconfig-env": {fmt.Sprintf("/proc/%d/environ: KUBECONFIG is not set in the environment of pid %d", pid, pid)},
	}})
}
