// Package dnsq asks one DNS server one question and classifies the answer:
// the failure modes the guide's clone errors come from (a node-local DNS
// that times out, refuses, fails or truncates) each get their own name.
package dnsq

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strings"
	"syscall"
	"time"

	"github.com/miekg/dns"

	"github.com/socialwebcomputer/doctor/internal/hostio"
)

// Outcome classifies one exchange.
type Outcome string

const (
	OK        Outcome = "ok"         // an answer with A/AAAA records
	NoAddress Outcome = "no-address" // NOERROR, but no A/AAAA record
	NXDomain  Outcome = "nxdomain"
	ServFail  Outcome = "servfail"
	Refused   Outcome = "refused" // RCODE REFUSED, or nothing listens (ICMP/TCP RST)
	Truncated Outcome = "truncated"
	Timeout   Outcome = "timeout"
	Garbage   Outcome = "garbage" // a reply that is not DNS
	Failed    Outcome = "error"   // anything else: the error says what
)

// Answer is one exchange with one server over one transport.
type Answer struct {
	Server  string
	Name    string
	Net     string // udp or tcp
	Outcome Outcome
	Rcode   string
	Addrs   []netip.Addr
	Err     error
	RTT     time.Duration
}

// String is the evidence line: "udp 127.0.0.1:53 gitlab.example.: timeout after 2s".
func (a Answer) String() string {
	s := fmt.Sprintf("%s %s %s: %s", a.Net, a.Server, a.Name, a.Outcome)
	switch {
	case len(a.Addrs) > 0:
		s += " " + joinAddrs(a.Addrs)
	case a.Err != nil:
		s += " (" + a.Err.Error() + ")"
	case a.Rcode != "" && a.Rcode != "NOERROR":
		s += " (rcode " + a.Rcode + ")"
	}
	return s
}

// Query sends one question (qtype A or AAAA) for name to server over netw.
// The context's deadline bounds it; without one, 3 s does.
func Query(ctx context.Context, env *hostio.Env, server, name, netw string, qtype uint16) Answer {
	// A bundle keeps the classified answer: analyze replays it.
	a, _ := hostio.ProbeErr(env, "dns", fmt.Sprintf("%s %s %s %s", netw, server, dns.Fqdn(name), dns.TypeToString[qtype]),
		func() (Answer, error) { return query(ctx, env, server, name, netw, qtype), nil })
	return a
}

func query(ctx context.Context, env *hostio.Env, server, name, netw string, qtype uint16) Answer {
	a := Answer{Server: server, Name: dns.Fqdn(name), Net: netw}
	if env.Offline {
		a.Outcome, a.Err = Failed, hostio.ErrOffline
		return a
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
	}
	start := time.Now()
	conn, err := env.Dial(ctx, netw, server)
	if err != nil {
		return classifyErr(a, err)
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	return exchange(a, conn, qtype, start)
}

// exchange asks a's question on an open connection and classifies the
// reply. It is everything a server's bytes reach, so the fuzz test drives
// it over a pipe with arbitrary replies.
func exchange(a Answer, conn net.Conn, qtype uint16, start time.Time) Answer {
	m := new(dns.Msg)
	m.SetQuestion(a.Name, qtype)
	m.RecursionDesired = true
	co := &dns.Conn{Conn: conn, UDPSize: dns.DefaultMsgSize}
	if err := co.WriteMsg(m); err != nil {
		return classifyErr(a, err)
	}
	r, err := co.ReadMsg()
	a.RTT = time.Since(start)
	if err != nil {
		// A server that truncates by cutting the datagram leaves a partial
		// record behind the TC bit: the header parsed, so it is a truncated
		// answer, not garbage.
		if r != nil && r.Truncated && r.Response && r.Id == m.Id {
			a.Outcome, a.Rcode = Truncated, dns.RcodeToString[r.Rcode]
			return a
		}
		return classifyErr(a, err)
	}
	switch {
	case r.Id != m.Id:
		a.Outcome, a.Err = Garbage, errors.New("reply id does not match the query")
		return a
	case !r.Response:
		// An echo of the query (QR clear) would otherwise read as NOERROR
		// with no address.
		a.Outcome, a.Err = Garbage, errors.New("reply is not a DNS response (QR bit clear)")
		return a
	}
	a.Rcode = dns.RcodeToString[r.Rcode]
	switch {
	case r.Truncated:
		a.Outcome = Truncated
	case r.Rcode == dns.RcodeNameError:
		a.Outcome = NXDomain
	case r.Rcode == dns.RcodeServerFailure:
		a.Outcome = ServFail
	case r.Rcode == dns.RcodeRefused:
		a.Outcome = Refused
	case r.Rcode != dns.RcodeSuccess:
		a.Outcome, a.Err = Failed, fmt.Errorf("rcode %s", a.Rcode)
	default:
		for _, rr := range r.Answer {
			switch v := rr.(type) {
			case *dns.A:
				if ip, ok := netip.AddrFromSlice(v.A.To4()); ok {
					a.Addrs = append(a.Addrs, ip)
				}
			case *dns.AAAA:
				if ip, ok := netip.AddrFromSlice(v.AAAA); ok {
					a.Addrs = append(a.Addrs, ip)
				}
			}
		}
		a.Outcome = OK
		if len(a.Addrs) == 0 {
			a.Outcome = NoAddress
		}
	}
	return a
}

func classifyErr(a Answer, err error) Answer {
	a.Err = err
	switch {
	case hostio.IsTimeout(err):
		a.Outcome = Timeout
	case errors.Is(err, syscall.ECONNREFUSED):
		a.Outcome = Refused
	case errors.Is(err, hostio.ErrOffline):
		a.Outcome = Failed
	case strings.Contains(err.Error(), "dns:") || errors.Is(err, dns.ErrShortRead) || errors.Is(err, dns.ErrBuf):
		a.Outcome = Garbage // miekg's unpack errors all start "dns:"
	case errors.Is(err, io.ErrUnexpectedEOF):
		// Over TCP the first two bytes of a non-DNS reply read as a length
		// the rest never fills.
		a.Outcome = Garbage
	default:
		a.Outcome = Failed
	}
	return a
}

// Resolve looks a name up as a stub resolver does: A and AAAA over UDP,
// again over TCP when the UDP answer is truncated. It returns every
// exchange made, and the addresses found.
func Resolve(ctx context.Context, env *hostio.Env, server, name string) ([]Answer, []netip.Addr) {
	var all []Answer
	var addrs []netip.Addr
	for _, qt := range []uint16{dns.TypeA, dns.TypeAAAA} {
		a := Query(ctx, env, server, name, "udp", qt)
		all = append(all, a)
		if a.Outcome == Truncated {
			a = Query(ctx, env, server, name, "tcp", qt)
			all = append(all, a)
		}
		addrs = append(addrs, a.Addrs...)
		if a.Outcome == Timeout || a.Outcome == Refused {
			break // the server is not answering: one more question proves nothing
		}
	}
	return all, addrs
}

// SystemServers are the nameservers of /etc/resolv.conf under the root, as
// host:port, or the --resolver setting when given.
func SystemServers(env *hostio.Env, override string) ([]string, error) {
	if override != "" {
		return []string{override}, nil
	}
	b, err := env.ReadFile("/etc/resolv.conf")
	if err != nil {
		return nil, err
	}
	cc, err := dns.ClientConfigFromReader(bytes.NewReader(b))
	if err != nil {
		return nil, &hostio.FileError{Path: "/etc/resolv.conf", Err: err}
	}
	if len(cc.Servers) == 0 {
		return nil, &hostio.FileError{Path: "/etc/resolv.conf", Err: errors.New("no nameserver line")}
	}
	// glibc's resolver takes a nameserver only when it is an IP address
	// (inet_pton; a scoped IPv6 address keeps its zone) and ignores the
	// line otherwise: so does doctor, rather than dial "[[::1]:53]:53".
	var out []string
	for _, s := range cc.Servers {
		if a, err := netip.ParseAddr(s); err == nil {
			out = append(out, net.JoinHostPort(withResolvableZone(a).String(), cc.Port))
		}
	}
	if len(out) == 0 {
		return nil, &hostio.FileError{Path: "/etc/resolv.conf", Err: fmt.Errorf("no nameserver line with an IP address (%d ignored, as the resolver ignores them)", len(cc.Servers))}
	}
	return out, nil
}

func joinAddrs(as []netip.Addr) string {
	s := make([]string, len(as))
	for i, a := range as {
		s[i] = a.String()
	}
	return strings.Join(s, ", ")
}

// withResolvableZone is a nameserver address as glibc's res_init uses it:
// the zone after % is looked up as an interface name (if_nametoindex) or
// read as an index, and one that can be neither leaves the scope 0, the
// address kept. netip accepts any zone text ("::%]", found by
// FuzzSystemServers), which no dialer can parse back; a zone that cannot
// be an interface's name (IFNAMSIZ is 16 with its NUL; no '/', ':', '%',
// brackets or spaces) is dropped, as glibc's scope would be.
func withResolvableZone(a netip.Addr) netip.Addr {
	z := a.Zone()
	if z == "" {
		return a
	}
	notInName := func(r rune) bool { return r <= ' ' || r > '~' || strings.ContainsRune("/:%[]", r) }
	if len(z) > 15 || strings.ContainsFunc(z, notInName) {
		return a.WithZone("")
	}
	return a
}
