// Package dnsqtest runs DNS servers on 127.0.0.1 that answer well or in one
// particular wrong way, for the tests of dnsq and of the checks that use it.
// Each listens on UDP and TCP on the same port, because a check is given one
// host:port and asks over both.
package dnsqtest

import (
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/socialwebcomputer/doctor/testkit/closedport"
)

// Server is one loopback DNS server.
type Server struct {
	Addr    string // 127.0.0.1:<port>, the same port for UDP and TCP
	UDP     net.PacketConn
	TCP     net.Listener
	queries atomic.Int64
}

// Queries counts the questions the server received (handlers built here only).
func (s *Server) Queries() int64 { return s.queries.Load() }

// Listen binds UDP and TCP on one free loopback port; both close at the end
// of the test.
func Listen(t testing.TB) *Server {
	t.Helper()
	for range 20 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		pc, err := net.ListenPacket("udp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			l.Close() // the UDP port is taken: try another
			continue
		}
		t.Cleanup(func() { l.Close(); pc.Close() })
		return &Server{Addr: pc.LocalAddr().String(), UDP: pc, TCP: l}
	}
	t.Fatal("dnsqtest: no loopback port free for both UDP and TCP")
	return nil
}

// Start serves h on a fresh loopback port over UDP and TCP.
func Start(t testing.TB, h func(net string, q dns.Question, m *dns.Msg)) *Server {
	t.Helper()
	s := Listen(t)
	handler := dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		s.queries.Add(1)
		m := new(dns.Msg)
		m.SetReply(r)
		m.RecursionAvailable = true
		if len(r.Question) == 1 {
			h(w.LocalAddr().Network(), r.Question[0], m)
		}
		_ = w.WriteMsg(m)
	})
	var wg sync.WaitGroup
	for _, srv := range []*dns.Server{{PacketConn: s.UDP, Handler: handler}, {Listener: s.TCP, Handler: handler}} {
		wg.Add(1)
		srv.NotifyStartedFunc = wg.Done
		go func() { _ = srv.ActivateAndServe() }()
		t.Cleanup(func() { _ = srv.Shutdown() })
	}
	wg.Wait()
	return s
}

// Healthy answers every A question with ip, and AAAA with no record, as
// an IPv4-only name is answered.
func Healthy(t testing.TB, ip string) *Server {
	return Start(t, func(_ string, q dns.Question, m *dns.Msg) {
		if q.Qtype == dns.TypeA {
			m.Answer = append(m.Answer, a(q.Name, ip))
		}
	})
}

// Rcode answers every question with the given RCODE (dns.RcodeServerFailure,
// dns.RcodeNameError, dns.RcodeRefused) and no records.
func Rcode(t testing.TB, code int) *Server {
	return Start(t, func(_ string, _ dns.Question, m *dns.Msg) { m.Rcode = code })
}

// NoAddress answers NOERROR with a CNAME to a name it gives no address for.
func NoAddress(t testing.TB) *Server {
	return Start(t, func(_ string, q dns.Question, m *dns.Msg) {
		m.Answer = append(m.Answer, &dns.CNAME{
			Hdr:    dns.RR_Header{Name: q.Name, Rrtype: dns.TypeCNAME, Class: dns.ClassINET, Ttl: 30},
			Target: "nowhere.invalid.",
		})
	})
}

// TruncatedUDP sets TC with no records over UDP; over TCP, tcpIP answers A
// questions ("" makes TCP answer SERVFAIL instead).
func TruncatedUDP(t testing.TB, tcpIP string) *Server {
	return Start(t, func(netw string, q dns.Question, m *dns.Msg) {
		switch {
		case netw == "udp":
			m.Truncated = true
		case tcpIP == "":
			m.Rcode = dns.RcodeServerFailure
		case q.Qtype == dns.TypeA:
			m.Answer = append(m.Answer, a(q.Name, tcpIP))
		}
	})
}

// Silent binds UDP and TCP and never answers: every question times out.
func Silent(t testing.TB) *Server { return Listen(t) }

// Closed is an address where nothing listens on UDP or TCP: a UDP question
// gets ICMP port unreachable, a TCP connect a reset. The port stays
// reserved until the test ends, so no server started after it can take it.
func Closed(t testing.TB) string {
	t.Helper()
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(closedport.Reserve(t)))
}

// GarbageReply is what Garbage sends: not DNS.
const GarbageReply = "HTTP/1.1 400 Bad Request\r\n\r\n"

// Garbage answers every UDP datagram and every TCP connection with
// GarbageReply, as a web server or a proxy on port 53 would.
func Garbage(t testing.TB) *Server {
	s := Listen(t)
	go func() {
		buf := make([]byte, 512)
		for {
			_, from, err := s.UDP.ReadFrom(buf)
			if err != nil {
				return
			}
			s.queries.Add(1)
			_, _ = s.UDP.WriteTo([]byte(GarbageReply), from)
		}
	}()
	go func() {
		for {
			c, err := s.TCP.Accept()
			if err != nil {
				return
			}
			s.queries.Add(1)
			_ = c.SetDeadline(time.Now().Add(time.Second))
			_, _ = c.Read(make([]byte, 512))
			_, _ = c.Write([]byte(GarbageReply))
			c.Close()
		}
	}()
	return s
}

// RawUDP answers each UDP datagram with reply(query); TCP is left silent.
// For replies dns.Server would not send: a cut datagram, an echo.
func RawUDP(t testing.TB, reply func(query []byte) []byte) *Server {
	s := Listen(t)
	go func() {
		buf := make([]byte, 512)
		for {
			n, from, err := s.UDP.ReadFrom(buf)
			if err != nil {
				return
			}
			s.queries.Add(1)
			if b := reply(append([]byte(nil), buf[:n]...)); b != nil {
				_, _ = s.UDP.WriteTo(b, from)
			}
		}
	}()
	return s
}

func a(name, ip string) *dns.A {
	return &dns.A{Hdr: dns.RR_Header{Name: name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 30}, A: net.ParseIP(ip)}
}
