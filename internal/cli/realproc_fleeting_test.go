package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/socialwebcomputer/doctor/internal/testing/fixture"
	"github.com/socialwebcomputer/doctor/internal/testing/testpki"
	"github.com/socialwebcomputer/doctor/report"
)

// startRunnerAs runs a copy of this test binary as <dir>/gitlab-runner
// under uid 1001 with primary group 1001 and fsGroup-like supplementary
// group 1001, as the document's Deployment runs the runner; dir must be
// traversable by that uid. It returns the pid once /proc shows "run".
func startRunnerAs(t *testing.T, dir string, args, env []string) int {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("this test starts a process as uid 1001 and needs root, as CI has")
	}
	self, err := os.Executable()
	noErr(t, err)
	bin := filepath.Join(dir, "gitlab-runner")
	copyFile(t, self, bin, 0o755)
	cmd := exec.Command(bin, append([]string{"-test.run=^TestCLIHelperProcess$"}, args...)...)
	cmd.Env = append(append([]string{}, env...), cliHelperEnv+"=1")
	// Its working directory is one uid 1001 may enter, as a service's is:
	// the test's own (a clone under a 0700 directory) may not be, and what
	// doctor starts for the runner (an exec credential plugin) starts there.
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 1001, Gid: 1001, Groups: []uint32{1001}}}
	noErr(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return waitRunning(t, cmd.Process.Pid)
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	in, err := os.Open(from)
	noErr(t, err)
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	noErr(t, err)
	_, err = io.Copy(out, in)
	noErr(t, err)
	noErr(t, out.Close())
}

// openDir is a temporary directory uid 1001 can traverse (t.TempDir and
// its parent are 0700 root's).
func openDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for d := dir; d != os.TempDir() && d != "/" && len(d) > len(os.TempDir()); d = filepath.Dir(d) {
		noErr(t, os.Chmod(d, 0o755))
	}
	return dir
}

// findmnt is util-linux's answer for the mount that holds p: its target
// and filesystem type, the truth doctor's mountinfo reading must match.
func findmnt(t *testing.T, p string) (target, fstype string) {
	t.Helper()
	out, err := exec.Command("findmnt", "-n", "-o", "TARGET,FSTYPE", "-T", p).Output()
	if err != nil {
		t.Fatalf("findmnt -T %s (util-linux): %v", p, err)
	}
	// A point mounted twice is listed twice; the last mount is the one
	// that shows.
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	f := strings.Fields(lines[len(lines)-1])
	if len(f) != 2 {
		t.Fatalf("findmnt -T %s: %q", p, out)
	}
	return f[0], f[1]
}

// TestRealRunnerFleeting runs doctor against the real /proc of a runner
// started as uid 1001 with supplementary group 1001: the connector key is
// judged against the groups the kernel lists in /proc/<pid>/status, and the
// state directory against the mount the kernel lists in
// /proc/<pid>/mountinfo, which must be the one findmnt names.
func TestRealRunnerFleeting(t *testing.T) {
	dir := openDir(t)
	bin := filepath.Join(dir, "bin")
	noErr(t, os.Mkdir(bin, 0o755))
	noErr(t, os.WriteFile(filepath.Join(bin, "fleeting-plugin-dvp"), []byte("#!/bin/sh\nexit 1\n"), 0o755))
	keyDir := filepath.Join(dir, "ssh")
	noErr(t, os.Mkdir(keyDir, 0o755))
	key, _, err := testpki.SSHKey("ed25519", "real-process")
	noErr(t, err)
	keyFile := filepath.Join(keyDir, "id_ed25519")
	noErr(t, os.WriteFile(keyFile, key, 0o440))
	noErr(t, os.Chown(keyFile, 0, 1001)) // fsGroup with defaultMode 0440

	shm, err := os.MkdirTemp("/dev/shm", "doctor-state-")
	noErr(t, err)
	t.Cleanup(func() { os.RemoveAll(shm) })
	persistent := filepath.Join(dir, "state")
	noErr(t, os.Mkdir(persistent, 0o700))
	noErr(t, os.Chown(persistent, 1001, 1001))
	noErr(t, os.Chown(shm, 1001, 1001))

	cfg := filepath.Join(dir, "config.toml")
	write := func(stateDir string) {
		noErr(t, os.WriteFile(cfg, []byte(`concurrent = 2
[[runners]]
  name = "dvp-real"
  url = "https://code.example.invalid"
  token = "glrt-notARealToken5"
  executor = "instance"
  shell = "bash"
  [runners.autoscaler]
    plugin = "fleeting-plugin-dvp"
    max_instances = 2
    [runners.autoscaler.connector_config]
      username = "gitlab-runner"
      key_path = "`+keyFile+`"
      use_static_credentials = true
      use_external_addr = true
    [runners.autoscaler.state_storage]
      enabled = true
      dir = "`+stateDir+`"
      keep_instance_with_acquisitions = true
`), 0o644))
	}
	doctor := func(pid int) *report.Report {
		code, out, stderr := runDoctor("run", "--root", "/", "--runner-pid", strconv.Itoa(pid), "--offline", "-o", "json",
			"--only", "runner-process,config-decode,fleeting-plugin,fleeting-connector,fleeting-state")
		var rep report.Report
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("exit %d, stderr %s: %v", code, stderr, err)
		}
		return &rep
	}
	env := []string{"PATH=" + bin + ":/usr/bin:/bin", "HOME=" + dir}

	// The key is readable through group 1001 only, and the state is on the
	// disk findmnt names: nothing to report.
	target, fstype := findmnt(t, persistent)
	write(persistent)
	pid := startRunnerAs(t, dir, []string{"run", "--config", cfg}, env)
	rep := doctor(pid)
	fixture.AssertWant(t, rep, fixture.Want{Status: map[string]string{"fleeting-plugin": "pass", "fleeting-connector": "pass", "fleeting-state": "pass"}})
	if fstype == "tmpfs" || fstype == "overlay" {
		t.Logf("%s is on %s %s here: fleeting-state rightly warns", persistent, fstype, target)
	}

	// Root's 0400: the same uid and groups may not read it.
	noErr(t, os.Chmod(keyFile, 0o400))
	noErr(t, os.Chown(keyFile, 0, 0))
	rep = doctor(pid)
	fixture.AssertWant(t, rep, fixture.Want{Exit: 2, Top: "fleeting-connector", TopRunner: 1, Says: map[string][]string{
		"fleeting-connector": {fmt.Sprintf("pid %d (uid 1001", pid), "groups 1001) cannot read the connector key " + keyFile, "mode 0400 owner 0:0"},
	}})

	// The state on /dev/shm: the kernel's mount for it is tmpfs, and the
	// finding names the mount findmnt names.
	noErr(t, os.Chmod(keyFile, 0o440))
	noErr(t, os.Chown(keyFile, 0, 1001))
	target, fstype = findmnt(t, shm)
	if fstype != "tmpfs" {
		t.Fatalf("findmnt says %s is on %s, not tmpfs", shm, fstype)
	}
	write(shm)
	pid = startRunnerAs(t, openDir(t), []string{"run", "--config", cfg}, env)
	rep = doctor(pid)
	fixture.AssertWant(t, rep, fixture.Want{Exit: 1, Top: "fleeting-state", Says: map[string][]string{
		"fleeting-state": {"state_storage.dir " + shm + " is on tmpfs", fmt.Sprintf("/proc/%d/mountinfo:", pid), " on " + target + " type tmpfs"},
	}})
}
