// Package gitlabtest plays GitLab's side for tests, on loopback only: a DNS
// server with chosen answers, a TLS server speaking GitLab's runner contract,
// and hostile endpoints (silent, garbage, endless) that a client must
// survive within its deadline and with bounded memory.
package gitlabtest

import (
	"crypto/rand"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"github.com/miekg/dns"
)

// DNS is a loopback DNS server (UDP and TCP on one port) answering A and
// AAAA from Records; a name not in Records is NXDOMAIN.
type DNS struct {
	Addr string // 127.0.0.1:port
	mu   sync.Mutex
	recs map[string][]netip.Addr
}

// NewDNS starts a server; records map a name to its addresses.
func NewDNS(t testing.TB, records map[string][]string) *DNS {
	d := &DNS{recs: map[string][]netip.Addr{}}
	for name, ips := range records {
		for _, ip := range ips {
			d.recs[dns.Fqdn(strings.ToLower(name))] = append(d.recs[dns.Fqdn(strings.ToLower(name))], netip.MustParseAddr(ip))
		}
	}
	d.Addr = serve(t, dns.HandlerFunc(d.answer))
	return d
}

func (d *DNS) answer(w dns.ResponseWriter, q *dns.Msg) {
	m := new(dns.Msg)
	m.SetReply(q)
	d.mu.Lock()
	addrs, ok := d.recs[strings.ToLower(q.Question[0].Name)]
	d.mu.Unlock()
	if !ok {
		m.Rcode = dns.RcodeNameError
	}
	hdr := dns.RR_Header{Name: q.Question[0].Name, Class: dns.ClassINET, Ttl: 60}
	for _, a := range addrs {
		switch {
		case a.Is4() && q.Question[0].Qtype == dns.TypeA:
			hdr.Rrtype = dns.TypeA
			m.Answer = append(m.Answer, &dns.A{Hdr: hdr, A: a.AsSlice()})
		case a.Is6() && q.Question[0].Qtype == dns.TypeAAAA:
			hdr.Rrtype = dns.TypeAAAA
			m.Answer = append(m.Answer, &dns.AAAA{Hdr: hdr, AAAA: a.AsSlice()})
		}
	}
	_ = w.WriteMsg(m)
}

// TruncatingDNS answers every question, over UDP and TCP alike, with an
// empty reply whose TC bit is set: a client that retries over TCP gets the
// same, and must give up rather than loop.
func TruncatingDNS(t testing.TB) string {
	return serve(t, dns.HandlerFunc(func(w dns.ResponseWriter, q *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(q)
		m.Truncated = true
		_ = w.WriteMsg(m)
	}))
}

// GarbageDNS answers every UDP datagram with random bytes that are not DNS.
func GarbageDNS(t testing.TB) string {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 512)
		for {
			_, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			junk := make([]byte, 7) // shorter than a DNS header
			_, _ = rand.Read(junk)
			_, _ = pc.WriteTo(junk, from)
		}
	}()
	return pc.LocalAddr().String()
}

// serve runs h on UDP and TCP at one loopback port.
func serve(t testing.TB, h dns.Handler) string {
	for range 20 {
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		l, err := net.Listen("tcp", pc.LocalAddr().String())
		if err != nil {
			pc.Close() // the TCP port is taken: try another
			continue
		}
		for _, s := range []*dns.Server{{PacketConn: pc, Handler: h}, {Listener: l, Handler: h}} {
			started := make(chan struct{})
			s.NotifyStartedFunc = func() { close(started) }
			go func() { _ = s.ActivateAndServe() }()
			<-started
			t.Cleanup(func() { _ = s.Shutdown() })
		}
		return pc.LocalAddr().String()
	}
	t.Fatal("no loopback port free for both UDP and TCP")
	return ""
}
