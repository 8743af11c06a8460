//go:build integration

package testenv

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// ToolsDir is where scripts/build-tools.sh puts the binaries' bin/ folder:
// $DOCTOR_TOOLS, else $HOME/.cache/doctor-tools (the script's default).
func ToolsDir() string {
	if d := os.Getenv("DOCTOR_TOOLS"); d != "" {
		return d
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cache", "doctor-tools")
}

// Bin returns the path of a built tool (kube-apiserver, kubectl, etcd,
// caddy) and fails the test if it is missing: integration tests must not
// pass silently on a machine that never ran the build script.
func Bin(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join(ToolsDir(), "bin", name)
	if st, err := os.Stat(p); err != nil || st.Mode()&0o111 == 0 {
		t.Fatalf("testenv: %s not found at %s; run `bash scripts/build-tools.sh` first (or set DOCTOR_TOOLS)", name, p)
	}
	return p
}

// FreePort returns a loopback TCP port that was free a moment ago. The
// window until the caller binds it is small; every test uses fresh ports.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("testenv: free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// process is a child started in its own process group, so that stopping it
// also stops anything it forked.
type process struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	done    chan struct{} // closed when the process has exited
	stopped bool          // stop was called: its failure was reported then
}

// startProcess runs bin with args, output to dir/<name>.log, and registers a
// cleanup that stops the whole process group.
func startProcess(t testing.TB, name, dir string, env []string, bin string, args ...string) *process {
	t.Helper()
	logPath := filepath.Join(dir, name+".log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = append(os.Environ(), env...)
	// Setpgid: stop kills the group. Pdeathsig: if the test binary dies
	// without running cleanups (go test -timeout panics), the kernel kills
	// the child, so no apiserver or etcd outlives its test.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		t.Fatalf("testenv: start %s: %v", name, err)
	}
	p := &process{name: name, cmd: cmd, logPath: logPath, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		logf.Close()
		close(p.done)
	}()
	t.Cleanup(func() {
		reported := p.stopped
		p.stop()
		if t.Failed() && !reported {
			t.Logf("testenv: last lines of %s:\n%s", logPath, p.tail())
		}
	})
	return p
}

// stop sends SIGTERM to the group, then SIGKILL after a short grace: a test
// environment has nothing worth a slow graceful shutdown.
func (p *process) stop() {
	p.stopped = true
	pgid := -p.cmd.Process.Pid
	_ = syscall.Kill(pgid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(3 * time.Second):
		_ = syscall.Kill(pgid, syscall.SIGKILL)
		<-p.done
	}
	// Children that ignored SIGTERM but whose leader exited.
	_ = syscall.Kill(pgid, syscall.SIGKILL)
}

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// tail returns the end of the process log, for failure messages.
func (p *process) tail() string {
	b, _ := os.ReadFile(p.logPath)
	const max = 3000
	if len(b) > max {
		b = b[len(b)-max:]
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:]
		}
	}
	return string(b)
}

// retryPortRace runs attempt up to three times while it fails with
// "address already in use": a port FreePort gave out can be taken before
// the process binds it when several tests start servers at once, and each
// attempt takes fresh ports.
func retryPortRace(t testing.TB, attempt func() error) error {
	for n := 1; ; n++ {
		err := attempt()
		if err == nil || n == 3 || !strings.Contains(err.Error(), "address already in use") {
			return err
		}
		t.Logf("testenv: port race, retrying: %v", err)
	}
}

// waitListening waits until p listens on 127.0.0.1:port, failing early if
// the process has exited.
func waitListening(p *process, port int, timeout time.Duration) error {
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	deadline := time.Now().Add(timeout)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			// Someone listens: it must be p, not a test that took the
			// port first (p then exits with "address already in use").
			if owned, err := ownsListener(p.cmd.Process.Pid, port); err != nil {
				return fmt.Errorf("%s: who listens on %s: %w", p.name, addr, err)
			} else if owned {
				return nil
			}
		}
		if p.exited() {
			return fmt.Errorf("%s exited before listening on %s:\n%s", p.name, addr, p.tail())
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not listening on %s after %s:\n%s", p.name, addr, timeout, p.tail())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
