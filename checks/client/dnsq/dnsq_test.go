package dnsq_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/socialwebcomputer/doctor/checks/client/dnsq"
	"github.com/socialwebcomputer/doctor/checks/client/dnsq/dnsqtest"
	"github.com/socialwebcomputer/doctor/internal/hostio"
)

const name = "gitlab.example.invalid"

func env(t *testing.T) *hostio.Env { return &hostio.Env{Root: t.TempDir()} }

func query(t *testing.T, server, netw string, qtype uint16) dnsq.Answer {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	return dnsq.Query(ctx, env(t), server, name, netw, qtype)
}

// TestQueryOutcomes gives each outcome its own misbehaving server, over
// both transports where the server misbehaves on both.
func TestQueryOutcomes(t *testing.T) {
	healthy := dnsqtest.Healthy(t, "127.0.0.7")
	cases := []struct {
		name   string
		server string
		nets   []string
		qtype  uint16
		want   dnsq.Outcome
	}{
		{"ok", healthy.Addr, []string{"udp", "tcp"}, dns.TypeA, dnsq.OK},
		{"aaaa-of-ipv4-only-name", healthy.Addr, []string{"udp"}, dns.TypeAAAA, dnsq.NoAddress},
		{"servfail", dnsqtest.Rcode(t, dns.RcodeServerFailure).Addr, []string{"udp", "tcp"}, dns.TypeA, dnsq.ServFail},
		{"nxdomain", dnsqtest.Rcode(t, dns.RcodeNameError).Addr, []string{"udp", "tcp"}, dns.TypeA, dnsq.NXDomain},
		{"rcode-refused", dnsqtest.Rcode(t, dns.RcodeRefused).Addr, []string{"udp", "tcp"}, dns.TypeA, dnsq.Refused},
		{"rcode-other", dnsqtest.Rcode(t, dns.RcodeNotImplemented).Addr, []string{"udp"}, dns.TypeA, dnsq.Failed},
		{"no-address", dnsqtest.NoAddress(t).Addr, []string{"udp", "tcp"}, dns.TypeA, dnsq.NoAddress},
		{"truncated-udp", dnsqtest.TruncatedUDP(t, "127.0.0.8").Addr, []string{"udp"}, dns.TypeA, dnsq.Truncated},
		{"truncated-answers-over-tcp", dnsqtest.TruncatedUDP(t, "127.0.0.8").Addr, []string{"tcp"}, dns.TypeA, dnsq.OK},
		{"garbage", dnsqtest.Garbage(t).Addr, []string{"udp", "tcp"}, dns.TypeA, dnsq.Garbage},
		// Last: a server started after it could be given the port just closed.
		{"closed-port", dnsqtest.Closed(t), []string{"udp", "tcp"}, dns.TypeA, dnsq.Refused},
	}
	for _, tc := range cases {
		for _, netw := range tc.nets {
			t.Run(tc.name+"/"+netw, func(t *testing.T) {
				a := query(t, tc.server, netw, tc.qtype)
				if a.Outcome != tc.want {
					t.Fatalf("outcome %s, want %s: %s", a.Outcome, tc.want, a)
				}
				if a.Net != netw || a.Server != tc.server || a.Name != name+"." {
					t.Errorf("answer names %s %s %s", a.Net, a.Server, a.Name)
				}
				if tc.want == dnsq.OK && (len(a.Addrs) == 0 || !strings.Contains(a.String(), a.Addrs[0].String())) {
					t.Errorf("ok without its address: %s", a)
				}
			})
		}
	}
}

// TestQueryTimeoutKeepsItsDeadline: a server that never answers costs the
// context's deadline and no more, over UDP and TCP.
func TestQueryTimeoutKeepsItsDeadline(t *testing.T) {
	s := dnsqtest.Silent(t)
	for _, netw := range []string{"udp", "tcp"} {
		ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
		start := time.Now()
		a := dnsq.Query(ctx, env(t), s.Addr, name, netw, dns.TypeA)
		cancel()
		if a.Outcome != dnsq.Timeout {
			t.Errorf("%s: outcome %s, want timeout: %s", netw, a.Outcome, a)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%s: took %s with a 300ms deadline", netw, d)
		}
	}
}

// TestQueryDefaultDeadline: a context without a deadline still ends (3 s).
func TestQueryDefaultDeadline(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the 3s default")
	}
	start := time.Now()
	a := dnsq.Query(context.Background(), env(t), dnsqtest.Silent(t).Addr, name, "udp", dns.TypeA)
	if a.Outcome != dnsq.Timeout || time.Since(start) > 5*time.Second {
		t.Errorf("outcome %s after %s, want timeout after about 3s", a.Outcome, time.Since(start))
	}
}

// TestQueryCutTruncatedDatagram: a server that truncates by cutting the
// datagram mid-record is truncated, not garbage.
func TestQueryCutTruncatedDatagram(t *testing.T) {
	s := dnsqtest.RawUDP(t, func(q []byte) []byte {
		var r dns.Msg
		if err := r.Unpack(q); err != nil {
			return nil
		}
		m := new(dns.Msg)
		m.SetReply(&r)
		for i := range 20 {
			rr, _ := dns.NewRR(name + ". 30 IN TXT \"padding record " + strings.Repeat("x", i+20) + "\"")
			m.Answer = append(m.Answer, rr)
		}
		b, err := m.Pack()
		if err != nil {
			return nil
		}
		b[2] |= 0x02 // TC
		return b[:len(b)-7]
	})
	if a := query(t, s.Addr, "udp", dns.TypeA); a.Outcome != dnsq.Truncated {
		t.Errorf("outcome %s, want truncated: %s", a.Outcome, a)
	}
}

// TestQueryEchoIsGarbage: a reply with the query's id but the QR bit clear
// (an echo) is not an answer with no address.
func TestQueryEchoIsGarbage(t *testing.T) {
	s := dnsqtest.RawUDP(t, func(q []byte) []byte { return q })
	if a := query(t, s.Addr, "udp", dns.TypeA); a.Outcome != dnsq.Garbage {
		t.Errorf("outcome %s, want garbage: %s", a.Outcome, a)
	}
}

// TestQueryWrongID: a reply to some other question is garbage.
func TestQueryWrongID(t *testing.T) {
	s := dnsqtest.RawUDP(t, func(q []byte) []byte {
		var r dns.Msg
		if err := r.Unpack(q); err != nil {
			return nil
		}
		m := new(dns.Msg)
		m.SetReply(&r)
		m.Id = r.Id + 1
		b, _ := m.Pack()
		return b
	})
	if a := query(t, s.Addr, "udp", dns.TypeA); a.Outcome != dnsq.Garbage {
		t.Errorf("outcome %s, want garbage: %s", a.Outcome, a)
	}
}

// TestQueryOffline: --offline sends nothing.
func TestQueryOffline(t *testing.T) {
	s := dnsqtest.Healthy(t, "127.0.0.7")
	a := dnsq.Query(t.Context(), &hostio.Env{Root: t.TempDir(), Offline: true}, s.Addr, name, "udp", dns.TypeA)
	if a.Outcome != dnsq.Failed || !errors.Is(a.Err, hostio.ErrOffline) || s.Queries() != 0 {
		t.Errorf("offline: %s, %d queries sent", a, s.Queries())
	}
}

func TestResolveFallsBackToTCPOnTruncation(t *testing.T) {
	s := dnsqtest.TruncatedUDP(t, "127.0.0.8")
	all, addrs := dnsq.Resolve(t.Context(), env(t), s.Addr, name)
	var got []string
	for _, a := range all {
		got = append(got, a.Net+":"+string(a.Outcome))
	}
	// A: truncated over UDP, then answered over TCP; AAAA: the same, no record.
	if want := "udp:truncated tcp:ok udp:truncated tcp:no-address"; strings.Join(got, " ") != want {
		t.Errorf("exchanges %v, want %s", got, want)
	}
	if len(addrs) != 1 || addrs[0].String() != "127.0.0.8" {
		t.Errorf("addresses %v", addrs)
	}
}

func TestResolveStopsAtANonAnsweringServer(t *testing.T) {
	all, addrs := dnsq.Resolve(t.Context(), env(t), dnsqtest.Closed(t), name)
	if len(all) != 1 || all[0].Outcome != dnsq.Refused || len(addrs) != 0 {
		t.Errorf("want one refused exchange, got %v", all)
	}
}

func TestSystemServers(t *testing.T) {
	e := env(t)
	if _, err := dnsq.SystemServers(e, ""); err == nil {
		t.Error("no resolv.conf under the root: want an error")
	}
	if got, _ := dnsq.SystemServers(e, "127.0.0.1:5353"); len(got) != 1 || got[0] != "127.0.0.1:5353" {
		t.Errorf("override: %v", got)
	}
	write := func(s string) {
		p := filepath.Join(e.Root, "etc", "resolv.conf")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("search example.invalid\nnameserver 127.0.0.53\nnameserver ::1\n")
	got, err := dnsq.SystemServers(e, "")
	if err != nil || strings.Join(got, " ") != "127.0.0.53:53 [::1]:53" {
		t.Errorf("servers %v, %v", got, err)
	}
	write("search example.invalid\n")
	if _, err := dnsq.SystemServers(e, ""); err == nil || !strings.Contains(err.Error(), "no nameserver") {
		t.Errorf("want no nameserver error, got %v", err)
	}
}
