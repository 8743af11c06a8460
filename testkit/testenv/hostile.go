// No build tag: the hostile servers need no apiserver, so plain tests of
// other packages use them too; the rest of testenv is behind "integration".

package testenv

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// HostileMode is one way a server on the other end misbehaves. Each is
// something a broken proxy, a half-dead daemon or an attacker on the path
// does, and doctor must end each one within its deadline and bounded memory.
type HostileMode string

const (
	// NeverAnswer accepts the connection and reads, never writing a byte.
	NeverAnswer HostileMode = "accept-never-answer"
	// OneByteASecond answers a plausible response one byte a second, for
	// ever: a read deadline per read never fires, only an overall one.
	OneByteASecond HostileMode = "one-byte-a-second"
	// EndlessBody answers 200 with a body that never ends (no length; a
	// JSON list whose items keep coming).
	EndlessBody HostileMode = "endless-body"
	// GiBBody answers 200 with Content-Length 1 GiB and writes it.
	GiBBody HostileMode = "1GB-body"
	// MiBHeader answers 200 whose Server header alone is 1 MiB.
	MiBHeader HostileMode = "1MB-header"
	// GarbageTLS answers the ClientHello (or the request, on a plain
	// socket) with random bytes that no parser accepts, without end.
	GarbageTLS HostileMode = "garbage-tls"
	// HugeUnauthorized answers 401 with a body of 1 GiB and no length.
	HugeUnauthorized HostileMode = "401-huge-body"
)

// HostileModes is every mode, in the order the tests try them.
var HostileModes = []HostileMode{NeverAnswer, OneByteASecond, EndlessBody, GiBBody, MiBHeader, GarbageTLS, HugeUnauthorized}

// gib is the size of the "1 GB" bodies.
const gib = 1 << 30

// HostileHTTP configures a hostile HTTP server.
type HostileHTTP struct {
	Mode HostileMode
	// Network is "tcp" (127.0.0.1:0) or "unix" (Path).
	Network, Path string
	// TLS serves HTTPS with this configuration; nil serves plain HTTP.
	TLS *tls.Config
	// Honest answers the requests for which it returns true itself, as a
	// working server would (a fake apiserver's SelfSubjectReview before its
	// exec endpoint turns hostile); nil means every request meets the mode.
	// With Honest set, NeverAnswer and GarbageTLS act on the first request
	// it declines too (never answering it, or answering garbage over TLS),
	// not on the connection: a client's other requests work.
	Honest func(w io.Writer, r *http.Request) bool
}

// Serve starts the server until the test ends and returns its address (a
// host:port, or the socket path).
func (h HostileHTTP) Serve(t testing.TB) string {
	t.Helper()
	network, addr := h.Network, h.Path
	if network == "" || network == "tcp" {
		network, addr = "tcp", "127.0.0.1:0"
	}
	return ServeConns(t, network, addr, h.conn)
}

func (h HostileHTTP) conn(c net.Conn) {
	if h.Honest == nil {
		switch h.Mode {
		case NeverAnswer:
			_, _ = io.Copy(io.Discard, c)
			return
		case GarbageTLS:
			garbage(c)
			return
		}
	}
	if h.TLS != nil {
		tc := tls.Server(c, h.TLS)
		if err := tc.Handshake(); err != nil {
			return
		}
		c = tc
	}
	br := bufio.NewReader(c)
	for {
		r, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		_, _ = io.Copy(io.Discard, r.Body)
		if h.Honest != nil && h.Honest(c, r) {
			continue
		}
		h.misbehave(c)
		return
	}
}

// misbehave writes the mode's answer to one request.
func (h HostileHTTP) misbehave(c net.Conn) {
	switch h.Mode {
	case NeverAnswer:
		_, _ = io.Copy(io.Discard, c)
	case GarbageTLS:
		garbage(c)
	case OneByteASecond:
		resp := "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n" + `{"kind":"Status"}`
		for i := 0; ; i++ {
			b := byte(' ')
			if i < len(resp) {
				b = resp[i]
			}
			if _, err := c.Write([]byte{b}); err != nil {
				return
			}
			time.Sleep(time.Second)
		}
	case EndlessBody:
		_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n"+
			`{"kind":"PodList","apiVersion":"v1","metadata":{},"items":[`)
		item := strings.Repeat(`{"metadata":{"name":"p","namespace":"gitlab-runner"}},`, 512)
		for {
			if _, err := io.WriteString(c, item); err != nil {
				return
			}
		}
	case GiBBody:
		fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", gib)
		writeN(c, gib, '[')
	case MiBHeader:
		fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nServer: %s\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}",
			strings.Repeat("A", 1<<20))
		_, _ = io.Copy(io.Discard, c)
	case HugeUnauthorized:
		_, _ = io.WriteString(c, "HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n"+
			`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Unauthorized","code":401,"message":"`)
		writeN(c, gib, 'A')
	}
}

// HonestJSON is an Honest answer: 200 with body as JSON, the connection
// kept open for the next request.
func HonestJSON(w io.Writer, body string) {
	fmt.Fprintf(w, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
}

// HostileDNS serves DNS on one loopback port, UDP and TCP. Over UDP every
// mode but NeverAnswer and GarbageTLS answers with the TC bit, so a client
// retries over TCP, where the mode applies: DNS has no headers or status
// codes, so MiBHeader is a message claiming 65535 answers it does not
// carry, and HugeUnauthorized a REFUSED answer followed by 1 GiB.
func HostileDNS(t testing.TB, mode HostileMode) string {
	t.Helper()
	addr := ServeConns(t, "tcp", "127.0.0.1:0", func(c net.Conn) { dnsTCP(c, mode) })
	pc, err := net.ListenPacket("udp", addr)
	if err != nil {
		t.Fatalf("hostile DNS: udp on %s: %v", addr, err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			switch {
			case n < 12 || mode == NeverAnswer:
				continue
			case mode == GarbageTLS:
				junk := make([]byte, 512)
				_, _ = rand.Read(junk)
				_, _ = pc.WriteTo(junk, from)
			default:
				_, _ = pc.WriteTo(dnsHeader(buf[:n], 0x0200, 0), from) // TC
			}
		}
	}()
	return addr
}

func dnsTCP(c net.Conn, mode HostileMode) {
	var l [2]byte
	if _, err := io.ReadFull(c, l[:]); err != nil {
		return
	}
	q := make([]byte, binary.BigEndian.Uint16(l[:]))
	if _, err := io.ReadFull(c, q); err != nil || len(q) < 12 {
		return
	}
	framed := func(msg []byte) []byte { return append(binary.BigEndian.AppendUint16(nil, uint16(len(msg))), msg...) }
	switch mode {
	case NeverAnswer:
		_, _ = io.Copy(io.Discard, c)
	case GarbageTLS:
		garbage(c)
	case OneByteASecond:
		for _, b := range framed(dnsHeader(q, 0, 0)) {
			if _, err := c.Write([]byte{b}); err != nil {
				return
			}
			time.Sleep(time.Second)
		}
	case EndlessBody:
		// Length 65535 and then bytes without end: a reader that trusts the
		// stream rather than the frame keeps reading.
		_, _ = c.Write([]byte{0xff, 0xff})
		writeN(c, 1<<62, 0)
	case GiBBody:
		writeN(c, gib, 0xff)
	case MiBHeader:
		msg := dnsHeader(q, 0, 0xffff)
		_, _ = c.Write(framed(append(msg, make([]byte, 65535-len(msg))...)))
		_, _ = io.Copy(io.Discard, c)
	case HugeUnauthorized:
		_, _ = c.Write(framed(dnsHeader(q, 5, 0))) // REFUSED
		writeN(c, gib, 'A')
	}
}

// dnsHeader answers query q with its id and question, the given extra
// flags (TC) or rcode, and an answer count it may not carry.
func dnsHeader(q []byte, flagsOrRcode uint16, ancount uint16) []byte {
	m := append([]byte(nil), q...)
	flags := binary.BigEndian.Uint16(m[2:4]) | 0x8000 | 0x0080 // QR, RA
	flags |= flagsOrRcode
	binary.BigEndian.PutUint16(m[2:4], flags)
	binary.BigEndian.PutUint16(m[6:8], ancount)
	binary.BigEndian.PutUint16(m[8:10], 0)
	binary.BigEndian.PutUint16(m[10:12], 0)
	return m
}

// garbage writes random bytes until the peer goes; the first is never a TLS
// record type, an HTTP status line or a plausible DNS length.
func garbage(c net.Conn) {
	junk := make([]byte, 4096)
	for {
		_, _ = rand.Read(junk)
		junk[0] = 0xff
		if _, err := c.Write(junk); err != nil {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// writeN writes n bytes of b from one small buffer, until the peer stops
// reading.
func writeN(c net.Conn, n int64, b byte) {
	chunk := bytes.Repeat([]byte{b}, 32<<10)
	for n > 0 {
		m, err := c.Write(chunk[:min(int64(len(chunk)), n)])
		if err != nil {
			return
		}
		n -= int64(m)
	}
}

// ServeConns accepts on network/addr until the test ends, each connection
// served by fn, and closes every connection at the end.
func ServeConns(t testing.TB, network, addr string, fn func(net.Conn)) string {
	t.Helper()
	l, err := net.Listen(network, addr)
	if err != nil {
		t.Fatalf("hostile server: listen %s %s: %v", network, addr, err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	conns := map[net.Conn]bool{}
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		for c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns[c] = true
			mu.Unlock()
			wg.Go(func() {
				defer func() { mu.Lock(); delete(conns, c); mu.Unlock(); c.Close() }()
				fn(c)
			})
		}
	}()
	if network == "unix" {
		return addr
	}
	return l.Addr().String()
}
