// Package closedport gives tests a loopback port where nothing listens and
// that nothing else can take while the test runs.
//
// Picking a free port and closing it is not enough: the next listener in
// the same test binary (a DNS server, a kubelet) may be handed that very
// port, and the "refused" case then reaches a server that answers. A test
// of ours failed that way in CI: the closed DNS port answered REFUSED.
package closedport

import (
	"net"
	"testing"
)

// nowhere is the UDP socket's peer: no datagram to the port comes from it,
// since doctor and the tests send from 127.0.0.1 and ephemeral ports.
var nowhere = &net.UDPAddr{IP: net.IPv4(127, 0, 0, 2), Port: 9}

// Reserve returns a port on 127.0.0.1 that refuses TCP connections and UDP
// datagrams, and holds it until the test ends.
//
// It holds the port with sockets that own it but accept nothing from
// anyone else: a TCP connection whose local end is the port (a SYN from
// another peer matches no socket and gets a reset), and a UDP socket bound
// to the port and connected to a peer that never sends (Linux matches a datagram to a
// connected socket only from that peer; anyone else gets ICMP port
// unreachable). Neither socket sets SO_REUSEADDR, so no listener can bind
// the port meanwhile.
func Reserve(t testing.TB) int {
	t.Helper()
	peer, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("closedport: %v", err)
	}
	defer peer.Close() // the accepted end is kept; the listener is not needed
	accepted := make(chan net.Conn, 8)
	go func() {
		for {
			c, err := peer.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	for range 20 {
		out, err := net.Dial("tcp", peer.Addr().String())
		if err != nil {
			t.Fatalf("closedport: %v", err)
		}
		in := <-accepted
		port := out.LocalAddr().(*net.TCPAddr).Port
		udp, err := net.DialUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port}, nowhere)
		if err != nil {
			out.Close() // the UDP port is taken: try another
			in.Close()
			continue
		}
		t.Cleanup(func() { out.Close(); in.Close(); udp.Close() })
		return port
	}
	t.Fatal("closedport: no loopback port free for both TCP and UDP")
	return 0
}
