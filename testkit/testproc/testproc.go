// Package testproc starts real processes that /proc shows as a
// gitlab-runner: the test binary itself under the name gitlab-runner, with
// the runner's arguments, an environment the test chose and, as root,
// another uid. Doctor reads its /proc entry as it reads a live runner's, so
// a check's test judges what the kernel says, not a fixture's copy of it.
package testproc

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

const childEnv = "DOCTOR_TESTPROC_CHILD"

// Child is the body of the helper test a Runner names: in a process Start
// started it sleeps until the test kills it; in a test run it returns.
func Child() {
	if os.Getenv(childEnv) != "1" {
		return
	}
	time.Sleep(60 * time.Second)
	os.Exit(0)
}

// Runner is a process to start as gitlab-runner.
type Runner struct {
	// Helper is the test function of the calling package whose body is
	// Child: the child runs only it.
	Helper string
	Args   []string // after the program name: "run", "--config", ...
	Env    []string // exactly the child's environment (plus the child marker)
	// Dir holds the binary and is the working directory; it must be
	// traversable by Cred's uid (OpenDir). "" is a directory of the test's.
	Dir string
	// Cred runs the child as another uid and groups; it needs root.
	Cred *syscall.Credential
}

// Start starts r and returns its pid once /proc shows its `run` command
// line; the process is killed when the test ends.
func Start(t testing.TB, r Runner) int {
	t.Helper()
	if r.Cred != nil && os.Geteuid() != 0 {
		t.Fatalf("starting a process as uid %d needs root, as CI has", r.Cred.Uid)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := r.Dir
	if dir == "" {
		dir = t.TempDir()
	}
	bin := filepath.Join(dir, "gitlab-runner")
	// A copy, not a link, when another uid runs it: the test binary's own
	// directory may be closed to that uid.
	if r.Cred != nil {
		CopyFile(t, self, bin, 0o755)
	} else if err := os.Symlink(self, bin); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, append([]string{"-test.run=^" + r.Helper + "$"}, r.Args...)...)
	cmd.Env = append(append([]string{}, r.Env...), childEnv+"=1")
	cmd.Dir = dir
	if r.Cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: r.Cred}
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	pid := cmd.Process.Pid
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); strings.Contains(string(b), "run\x00") {
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("child %d never showed its command line", pid)
		}
	}
}

// CopyFile copies from to to, made with mode.
func CopyFile(t testing.TB, from, to string, mode os.FileMode) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// OpenDir is a temporary directory another uid can traverse (t.TempDir and
// its parent are 0700 root's).
func OpenDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	for d := dir; d != os.TempDir() && d != "/" && len(d) > len(os.TempDir()); d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// Findmnt is util-linux's answer for the mount that holds p: its target
// and filesystem type, the truth doctor's mountinfo reading must match.
func Findmnt(t testing.TB, p string) (target, fstype string) {
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
