//go:build integration

package testenv

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Dockerd is a real Docker Engine (Debian's docker.io 20.10.24) on a unix
// socket of its own, started as ../shared/testenv.md describes: its own
// data, exec and pid paths, and no bridge, iptables, IP forwarding or
// masquerading, so it never touches the host's network. No registry is
// reachable, so it has no images: it answers the socket, permission, ping
// and version checks.
type Dockerd struct {
	Socket string // the unix socket's path
	Dir    string
}

// StartDockerd starts dockerd listening on socket (a path inside the
// test's temporary directories; "" makes one) and waits for /_ping. A
// dockerd that is missing or does not answer within 60 s fails the test;
// a cleanup stops it by its pid file's process.
func StartDockerd(t testing.TB, socket string) *Dockerd {
	t.Helper()
	bin, err := exec.LookPath("dockerd")
	if err != nil {
		t.Fatalf("testenv: dockerd not found (apt-get install docker.io; scripts/test-all.sh installs it): %v", err)
	}
	// A short directory: a unix socket path is limited to 108 bytes, and
	// containerd puts its own sockets under the exec root.
	dir, err := os.MkdirTemp("", "dockerd")
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if socket == "" {
		socket = filepath.Join(dir, "docker.sock")
	}
	if err := os.MkdirAll(filepath.Dir(socket), 0o755); err != nil {
		t.Fatalf("testenv: %v", err)
	}
	p := startProcess(t, "dockerd", dir, nil, bin,
		"--host", "unix://"+socket, "--data-root", filepath.Join(dir, "data"), "--exec-root", filepath.Join(dir, "exec"),
		"--pidfile", filepath.Join(dir, "docker.pid"), "--bridge=none", "--iptables=false", "--ip6tables=false",
		"--ip-forward=false", "--ip-masq=false")
	d := &Dockerd{Socket: socket, Dir: dir}
	deadline := time.Now().Add(60 * time.Second)
	for {
		if body, err := d.get("/_ping"); err == nil && body == "OK" {
			return d
		}
		if p.exited() {
			t.Fatalf("testenv: dockerd exited at start:\n%s", p.tail())
		}
		if time.Now().After(deadline) {
			t.Fatalf("testenv: dockerd did not answer /_ping on %s within 60s:\n%s", socket, p.tail())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// get asks the daemon directly (not through doctor), for readiness.
func (d *Dockerd) get(path string) (string, error) {
	c := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", d.Socket)
		},
	}}
	resp, err := c.Get("http://docker" + path)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s: %d %s", path, resp.StatusCode, b)
	}
	return strings.TrimSpace(string(b)), err
}

// Version is the daemon's /version body, for tests that compare doctor's
// report with what the daemon says.
func (d *Dockerd) Version(t testing.TB) string {
	t.Helper()
	v, err := d.get("/version")
	if err != nil {
		t.Fatalf("testenv: dockerd /version: %v", err)
	}
	return v
}

// Freeze stops dockerd with SIGSTOP until the test (or subtest) t ends:
// the kernel still accepts connections on its socket, and nothing answers
// them, as with a hung daemon.
func (d *Dockerd) Freeze(t testing.TB) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(d.Dir, "docker.pid"))
	if err != nil {
		t.Fatalf("testenv: dockerd's pid file: %v", err)
	}
	var pid int
	if _, err := fmt.Sscan(strings.TrimSpace(string(b)), &pid); err != nil || pid <= 1 {
		t.Fatalf("testenv: dockerd's pid file holds %q", b)
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatalf("testenv: SIGSTOP dockerd (pid %d): %v", pid, err)
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGCONT) })
}
