package dnsq

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/socialwebcomputer/doctor/internal/hostio"
)

// FuzzExchange answers doctor's question with arbitrary bytes, over a real
// loopback UDP socket (a datagram, as a node-local DNS answers) or over a
// stream (TCP framing, with or without a well-formed length prefix). The
// reply's first two bytes are set to the query's id so the fuzzer reaches
// past the id check. Whatever arrives: no panic, no hang, one of the named
// outcomes, addresses only when the outcome says so and never more than
// the reply can hold, a bounded evidence line, and a tape record that
// replays to the same answer.
func FuzzExchange(f *testing.F) {
	ok := new(dns.Msg)
	ok.SetQuestion("gitlab.example.invalid.", dns.TypeA)
	ok.Response = true
	ok.Answer = append(ok.Answer, &dns.A{Hdr: dns.RR_Header{Name: "gitlab.example.invalid.", Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 30}, A: net.IPv4(127, 0, 0, 9)})
	okBytes, err := ok.Pack()
	if err != nil {
		f.Fatal(err)
	}
	tc := ok.Copy()
	tc.Truncated = true
	tcBytes, _ := tc.Pack()
	nx := new(dns.Msg)
	nx.SetRcode(ok, dns.RcodeNameError)
	nxBytes, _ := nx.Pack()
	for _, udp := range []bool{true, false} {
		f.Add(okBytes, udp, true)
		f.Add(tcBytes, udp, true)
		f.Add(tcBytes[:len(tcBytes)-3], udp, true) // a record cut behind the TC bit
		f.Add(nxBytes, udp, true)
		f.Add([]byte("HTTP/1.1 400 Bad Request\r\n\r\n"), udp, false)
		f.Add([]byte{}, udp, true)
	}
	f.Add(okBytes, false, false) // no length prefix: the id reads as a length
	f.Fuzz(func(t *testing.T, reply []byte, udp, framed bool) {
		if len(reply) > 60000 {
			reply = reply[:60000] // a UDP datagram's bound, and a TCP message's
		}
		a := Answer{Server: "fuzz", Name: "gitlab.example.invalid.", Net: "tcp"}
		if udp {
			a.Net = "udp"
		}
		conn := answering(t, reply, udp, framed)
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
		got := exchange(a, conn, dns.TypeA, time.Now())

		switch got.Outcome {
		case OK, NoAddress, NXDomain, ServFail, Refused, Truncated, Garbage, Failed:
		case Timeout:
			t.Fatalf("the reply was sent and the connection closed, yet: %s", got)
		default:
			t.Fatalf("outcome %q is none of the named ones: %s", got.Outcome, got)
		}
		if (got.Outcome == OK) != (len(got.Addrs) > 0) {
			t.Fatalf("outcome %s with %d addresses", got.Outcome, len(got.Addrs))
		}
		// An A record is at least a 2-byte name pointer and 14 bytes more.
		if len(got.Addrs)*16 > len(reply) {
			t.Fatalf("%d addresses from a %d-byte reply", len(got.Addrs), len(reply))
		}
		if (got.Outcome == Garbage || got.Outcome == Failed) && got.Err == nil && got.Rcode == "" {
			t.Fatalf("outcome %s says nothing about why", got.Outcome)
		}
		line := got.String()
		if len(line) > 512+48*len(got.Addrs) {
			t.Fatalf("evidence line of %d bytes: %.200q", len(line), line)
		}
		// A bundle keeps the answer and analyze replays it: the replay
		// must read exactly as the live run did.
		b, err := json.Marshal(hostio.Recorded[Answer]{Value: got})
		if err != nil {
			t.Fatal(err)
		}
		var rec hostio.Recorded[Answer]
		if err := json.Unmarshal(b, &rec); err != nil {
			t.Fatalf("tape record %s: %v", b, err)
		}
		back := rec.Value
		if back.String() != line || back.Outcome != got.Outcome {
			t.Fatalf("replayed %q, live %q", back.String(), line)
		}
	})
}

// answering is the client end of a connection whose server reads one query
// and answers it with reply (its id set to the query's), then closes.
func answering(t *testing.T, reply []byte, udp, framed bool) net.Conn {
	t.Helper()
	withID := func(query []byte) []byte {
		out := append([]byte{}, reply...)
		if len(out) >= 2 && len(query) >= 2 {
			copy(out, query[:2])
		}
		return out
	}
	if udp {
		srv, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { srv.Close() })
		conn, err := net.DialUDP("udp", nil, srv.LocalAddr().(*net.UDPAddr))
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			_ = srv.SetDeadline(time.Now().Add(5 * time.Second))
			buf := make([]byte, 512)
			n, from, err := srv.ReadFrom(buf)
			if err != nil {
				return
			}
			_, _ = srv.WriteTo(withID(buf[:n]), from)
		}()
		return conn
	}
	client, server := net.Pipe()
	go func() {
		defer server.Close()
		_ = server.SetDeadline(time.Now().Add(5 * time.Second))
		var n [2]byte
		if _, err := readFull(server, n[:]); err != nil {
			return
		}
		query := make([]byte, binary.BigEndian.Uint16(n[:]))
		if _, err := readFull(server, query); err != nil {
			return
		}
		out := withID(query)
		if framed {
			out = append(binary.BigEndian.AppendUint16(nil, uint16(len(out))), out...)
		}
		_, _ = server.Write(out)
	}()
	return client
}

func readFull(c net.Conn, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := c.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// TestExchangeHarness proves the fuzz harness reaches the classifier: the
// seeds come back as the outcomes a real server's replies get, so the
// fuzzer is not testing a connection that never answers.
func TestExchangeHarness(t *testing.T) {
	ok := new(dns.Msg)
	ok.SetQuestion("gitlab.example.invalid.", dns.TypeA)
	ok.Response = true
	ok.Answer = append(ok.Answer, &dns.A{Hdr: dns.RR_Header{Name: "gitlab.example.invalid.", Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 30}, A: net.IPv4(127, 0, 0, 9)})
	b, _ := ok.Pack()
	nx := new(dns.Msg)
	nx.SetRcode(ok, dns.RcodeNameError)
	nb, _ := nx.Pack()
	for _, tc := range []struct {
		reply       []byte
		udp, framed bool
		want        Outcome
	}{
		{b, true, true, OK}, {b, false, true, OK}, {nb, true, true, NXDomain}, {nb, false, true, NXDomain},
		{[]byte("garbage!"), true, true, Garbage}, {b, false, false, Garbage},
	} {
		conn := answering(t, tc.reply, tc.udp, tc.framed)
		_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
		got := exchange(Answer{Name: "gitlab.example.invalid."}, conn, dns.TypeA, time.Now())
		conn.Close()
		if got.Outcome != tc.want {
			t.Errorf("udp=%v framed=%v: %s, want %s", tc.udp, tc.framed, got, tc.want)
		}
	}
}

// FuzzSystemServers reads an arbitrary /etc/resolv.conf under the root:
// no panic; the servers are host:port pairs, no more than the file has
// lines; a file without one is an error naming the file.
func FuzzSystemServers(f *testing.F) {
	f.Add([]byte("nameserver 169.254.20.10\nsearch gitlab-runner.svc.cluster.local svc.cluster.local\noptions ndots:5\n"))
	f.Add([]byte("nameserver fe80::1%eth0\nnameserver 127.0.0.53\noptions edns0 trust-ad\n"))
	f.Add([]byte("# only a comment\ndomain x.invalid\n"))
	f.Add([]byte("nameserver\nnameserver 1.2.3.4 5.6.7.8\noptions port:99999 ndots:-1 timeout:x\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		root := t.TempDir()
		if err := os.MkdirAll(filepath.Join(root, "etc"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "etc", "resolv.conf"), b, 0o644); err != nil {
			t.Fatal(err)
		}
		servers, err := SystemServers(&hostio.Env{Root: root}, "")
		if err != nil {
			if !strings.Contains(err.Error(), "/etc/resolv.conf") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if len(servers) == 0 || len(servers) > bytes.Count(b, []byte("\n"))+1 {
			t.Fatalf("%d servers from %d lines", len(servers), bytes.Count(b, []byte("\n"))+1)
		}
		for _, s := range servers {
			if _, _, err := net.SplitHostPort(s); err != nil {
				t.Fatalf("server %q: %v", s, err)
			}
		}
	})
}
