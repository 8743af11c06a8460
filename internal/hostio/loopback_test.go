package hostio

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"
)

// TestLoopbackOnly: with DOCTOR_LOOPBACK_ONLY=1, Dial refuses every address
// off the machine before any packet is sent, and still dials loopback.
func TestLoopbackOnly(t *testing.T) {
	t.Setenv(LoopbackOnlyVar, "1")
	env := &Env{}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	for _, addr := range []string{"169.254.20.10:53", "1.1.1.1:53", "100.64.0.1:443", "10.0.0.1:6443", "gitlab.example.invalid:443"} {
		if _, err := env.Dial(ctx, "udp", addr); err == nil || !strings.Contains(err.Error(), "allows loopback only") {
			t.Errorf("dial %s: %v; want it refused", addr, err)
		}
	}
	for _, addr := range []string{"127.0.0.1:53", "[::1]:53", "localhost:53"} {
		if err := loopbackOnly(addr); err != nil {
			t.Errorf("%s refused: %v", addr, err)
		}
	}
}

// TestLoopbackOnlyUnixSocket: a unix socket never leaves the machine, so the
// guard lets Dial reach it (the Docker daemon's socket), while a TCP dial to
// the same words is still refused.
func TestLoopbackOnlyUnixSocket(t *testing.T) {
	t.Setenv(LoopbackOnlyVar, "1")
	sock := t.TempDir() + "/d.sock"
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	c, err := (&Env{}).Dial(ctx, "unix", sock)
	if err != nil {
		t.Fatalf("dial unix %s: %v", sock, err)
	}
	c.Close()
	if _, err := (&Env{}).Dial(ctx, "tcp", "10.0.0.1:2375"); err == nil || !strings.Contains(err.Error(), "allows loopback only") {
		t.Errorf("tcp dial off the machine: %v; want it refused", err)
	}
}
