package gitlab

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"

	"github.com/socialwebcomputer/doctor/checks/client/dnsq"
	"github.com/socialwebcomputer/doctor/internal/hostio"
)

// Resolution is what one resolver said about one name.
type Resolution struct {
	Via     string // "/etc/hosts", "an IP literal", or the servers asked
	Addrs   []netip.Addr
	Answers []dnsq.Answer // every exchange, for evidence
	// Denied is set when a server answered with certainty that the name has
	// no address (NXDOMAIN or NOERROR without records): asking another
	// server would not change that, and a stub resolver does not.
	Denied bool
}

// Resolved reports whether any address was found.
func (r *Resolution) Resolved() bool { return len(r.Addrs) > 0 }

// Why says, once each, how the exchanges failed: "truncated", "timeout".
func (r *Resolution) Why() string {
	var s []string
	seen := map[string]bool{}
	for _, a := range r.Answers {
		w := string(a.Outcome)
		if a.Err != nil {
			w += " (" + a.Err.Error() + ")"
		}
		if a.Outcome != dnsq.OK && !seen[w] {
			seen[w] = true
			s = append(s, w)
		}
	}
	if len(s) == 0 {
		return "no answer"
	}
	return strings.Join(s, ", ")
}

// ErrNoResolver means doctor cannot tell which resolver the runner uses:
// the check cannot judge DNS, which is not a finding about the runner.
var ErrNoResolver = errors.New("no resolver")

// ResolveSystem resolves host as the runner's Go resolver does on this host:
// an IP literal as itself, then /etc/hosts under the root, then the
// nameservers of /etc/resolv.conf under the root (or --resolver), in order,
// moving on only when a server did not answer.
func ResolveSystem(ctx context.Context, env *hostio.Env, host string, dl Deadlines) (*Resolution, error) {
	if ip, err := netip.ParseAddr(host); err == nil {
		return &Resolution{Via: "an IP literal", Addrs: []netip.Addr{ip.Unmap()}}, nil
	}
	if addrs := fromHosts(env, host); len(addrs) > 0 {
		return &Resolution{Via: "/etc/hosts", Addrs: addrs}, nil
	}
	servers, err := dnsq.SystemServers(env, ResolverSetting.Value(env))
	if err != nil {
		return nil, fmt.Errorf("%w: %v; give --resolver", ErrNoResolver, err)
	}
	return resolveVia(ctx, env, servers, host, dl), nil
}

// ResolvePublic asks the public resolver (the public-dns setting), which
// stands for what a rented node's DNS sees: its egress is the provider's,
// not this host's.
func ResolvePublic(ctx context.Context, env *hostio.Env, host string, dl Deadlines) *Resolution {
	if ip, err := netip.ParseAddr(host); err == nil {
		return &Resolution{Via: "an IP literal", Addrs: []netip.Addr{ip.Unmap()}}
	}
	return resolveVia(ctx, env, []string{PublicDNSSetting.Value(env)}, host, dl)
}

// maxServers is the most resolv.conf nameservers the resolver uses (MAXNS).
const maxServers = 3

func resolveVia(ctx context.Context, env *hostio.Env, servers []string, host string, dl Deadlines) *Resolution {
	if len(servers) > maxServers {
		servers = servers[:maxServers]
	}
	r := &Resolution{Via: strings.Join(servers, ", ")}
	for _, s := range servers {
		sctx, cancel := context.WithTimeout(ctx, dl.DNS)
		answers, addrs := dnsq.Resolve(sctx, env, s, host)
		cancel()
		r.Answers = append(r.Answers, answers...)
		if len(addrs) > 0 {
			r.Addrs, r.Via = addrs, s
			return r
		}
		if denied(answers) {
			r.Denied, r.Via = true, s
			return r
		}
		if ctx.Err() != nil {
			return r
		}
	}
	return r
}

// denied: every question got a definite "no such address".
func denied(as []dnsq.Answer) bool {
	for _, a := range as {
		if a.Outcome != dnsq.NXDomain && a.Outcome != dnsq.NoAddress {
			return false
		}
	}
	return len(as) > 0
}

// fromHosts reads /etc/hosts under the root, which Go's resolver consults
// before DNS ("files dns"): a GitLab host often names itself there.
func fromHosts(env *hostio.Env, host string) []netip.Addr {
	b, err := env.ReadFile("/etc/hosts")
	if err != nil {
		return nil
	}
	var out []netip.Addr
	for _, line := range strings.Split(string(b), "\n") {
		line, _, _ = strings.Cut(line, "#")
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		ip, err := netip.ParseAddr(f[0])
		if err != nil {
			continue
		}
		for _, name := range f[1:] {
			if strings.EqualFold(strings.TrimSuffix(name, "."), strings.TrimSuffix(host, ".")) {
				out = append(out, ip.Unmap())
				break
			}
		}
	}
	return out
}

// Tailscale's address ranges. A rented node is not on the operator's
// tailnet, so an address in them is unreachable from a job pod.
var (
	tailnet4 = netip.MustParsePrefix("100.64.0.0/10")
	tailnet6 = netip.MustParsePrefix("fd7a:115c:a1e0::/48")
)

// IsTailnet reports whether a is a tailnet address.
func IsTailnet(a netip.Addr) bool { return tailnet4.Contains(a.Unmap()) || tailnet6.Contains(a) }

// AllTailnet reports whether as is non-empty and every address is a tailnet one.
func AllTailnet(as []netip.Addr) bool {
	for _, a := range as {
		if !IsTailnet(a) {
			return false
		}
	}
	return len(as) > 0
}

// Join lists addresses for evidence.
func Join(as []netip.Addr) string {
	s := make([]string, len(as))
	for i, a := range as {
		s[i] = a.String()
	}
	return strings.Join(s, ", ")
}

// interfaceAddrs is the live host's addresses (not the root's: the dial
// happens from this host, whatever --root says).
var interfaceAddrs = net.InterfaceAddrs

// OnTailnet says whether this host has a tailnet address, and how that was
// decided. Without one, a 100.64.0.0/10 address is not Tailscale's here but
// the carrier's shared address space, and doctor does not dial it.
func OnTailnet(env *hostio.Env) (bool, string) {
	switch env.Setting(SettingTailnet, "") {
	case "yes":
		return true, "the tailnet setting says this host is on the tailnet"
	case "no":
		return false, "the tailnet setting says this host is not on the tailnet"
	}
	addrs, err := interfaceAddrs()
	if err != nil {
		return false, "this host's interfaces could not be listed: " + err.Error()
	}
	for _, a := range addrs {
		if p, err := netip.ParsePrefix(a.String()); err == nil && IsTailnet(p.Addr()) {
			return true, "this host has the tailnet address " + p.Addr().String()
		}
	}
	return false, "no interface of this host has an address in 100.64.0.0/10 or fd7a:115c:a1e0::/48 (tailscale is not up here)"
}
