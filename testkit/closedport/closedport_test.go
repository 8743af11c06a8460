package closedport

import (
	"errors"
	"net"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// TestReservedPortRefusesAndStaysTaken: a TCP connect is refused, a UDP
// question gets port unreachable, and no listener can bind the port.
func TestReservedPortRefusesAndStaysTaken(t *testing.T) {
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(Reserve(t)))

	if c, err := net.DialTimeout("tcp", addr, time.Second); !errors.Is(err, syscall.ECONNREFUSED) {
		if c != nil {
			c.Close()
		}
		t.Errorf("tcp connect: %v, want connection refused", err)
	}

	u, err := net.Dial("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	_ = u.SetDeadline(time.Now().Add(time.Second))
	if _, err := u.Write([]byte("question")); err != nil {
		t.Fatal(err)
	}
	if _, err := u.Read(make([]byte, 16)); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("udp read: %v, want connection refused (ICMP port unreachable)", err)
	}

	if l, err := net.Listen("tcp", addr); err == nil {
		l.Close()
		t.Error("a TCP listener bound the reserved port")
	}
	if pc, err := net.ListenPacket("udp", addr); err == nil {
		pc.Close()
		t.Error("a UDP socket bound the reserved port")
	}
}
