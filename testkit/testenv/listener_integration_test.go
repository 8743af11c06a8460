//go:build integration

package testenv

import (
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// TestWaitListeningTakesNoStranger: when another listener holds the port
// FreePort gave out, Caddy cannot bind it; startCaddy must report that (so
// StartFront retries on another port) instead of taking the stranger's
// accept for Caddy's.
func TestWaitListeningTakesNoStranger(t *testing.T) {
	stranger, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer stranger.Close()
	port := stranger.Addr().(*net.TCPAddr).Port
	site := "http://127.0.0.1:" + strconv.Itoa(port) + " {\n\trespond \"caddy\"\n}\n"
	c, err := startCaddy(t, site, port)
	if err == nil {
		t.Fatalf("caddy reported listening on %d, a port the test holds (log: %s)", port, c.LogPath)
	}
	if !strings.Contains(err.Error(), "address already in use") {
		t.Errorf("error does not say the port was taken:\n%v", err)
	}
}

func TestOwnsListener(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	if owned, err := ownsListener(os.Getpid(), port); err != nil || !owned {
		t.Errorf("the test's own listener: owned %v, err %v", owned, err)
	}
	other := exec.Command("sleep", "30")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = other.Process.Kill(); _ = other.Wait() }()
	if owned, err := ownsListener(other.Process.Pid, port); err != nil || owned {
		t.Errorf("another process: owned %v, err %v", owned, err)
	}
	if owned, _ := ownsListener(os.Getpid(), port+1); owned && port < 65535 {
		t.Errorf("port %d: owned, but nothing of ours listens there", port+1)
	}
}
