//go:build integration

package testenv

import (
	"crypto/tls"
	"errors"
	"net"
	"sync"
	"testing"

	"github.com/socialwebcomputer/doctor/testkit/closedport"
)

// Kubelets that fail the way rented nodes do, for the apiserver to dial.
// Each returns the port to give ReadyNodeStatus; all listen on 127.0.0.1.

// StartUncertifiedKubelet is a kubelet with serverTLSBootstrap whose
// serving CSR nobody approved: it has no certificate, and Go's TLS server
// then answers every handshake with the internal_error alert, which the
// apiserver reports as "remote error: tls: internal error", exactly as it
// does for a real kubelet waiting for its certificate.
func StartUncertifiedKubelet(t testing.TB) int {
	t.Helper()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			return nil, errors.New("no serving certificate yet: the CSR is Pending")
		},
	})
	if err != nil {
		t.Fatalf("testenv: uncertified kubelet: %v", err)
	}
	return serve(t, ln, func(c net.Conn) {
		defer c.Close()
		_ = c.(*tls.Conn).Handshake() // fails, sending the alert
	})
}

// StartSilentKubelet accepts TCP and never says a word, as a node behind a
// NAT that forwards the SYN nowhere looks to a dialler with a handshake
// deadline: the apiserver's request hangs until someone's deadline.
func StartSilentKubelet(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("testenv: silent kubelet: %v", err)
	}
	stop := make(chan struct{})
	port := serve(t, ln, func(c net.Conn) {
		defer c.Close()
		<-stop
	})
	// Registered after serve's, so it runs first: the held connections end
	// before serve waits for them.
	t.Cleanup(func() { close(stop) })
	return port
}

// ClosedKubeletPort is a loopback port nothing listens on: the apiserver's
// dial is refused. It stays reserved until the test ends, so no server
// started after it can take it.
func ClosedKubeletPort(t testing.TB) int {
	t.Helper()
	return closedport.Reserve(t)
}

// serve accepts on ln until the test ends, handling each connection.
func serve(t testing.TB, ln net.Listener, handle func(net.Conn)) int {
	var wg sync.WaitGroup
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() { handle(c) })
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
	})
	return ln.Addr().(*net.TCPAddr).Port
}
