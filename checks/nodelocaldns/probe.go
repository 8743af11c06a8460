package nodelocaldns

import (
	"context"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/miekg/dns"

	"github.com/socialwebcomputer/doctor/checks/client/dnsq"
	"github.com/socialwebcomputer/doctor/checks/facts"
	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/runnerconfig"
)

// DefaultServer is where a job pod's resolv.conf points on these nodes.
const DefaultServer = "169.254.20.10:53"

// Setting names, as internal/cli defines them (cli imports the checks, so
// the checks cannot import cli).
const (
	settingServer        = "dns-server"
	settingRepositoryURL = "repository-url"
)

// ServiceName is the in-cluster name every pod resolves through the same server.
const ServiceName = "kubernetes.default.svc.cluster.local"

// queryTimeout bounds one question; tests shorten it.
var queryTimeout = 2 * time.Second

// probeServer is the server to ask directly and why, or "" when doctor was
// given none and runs neither on a node nor in a pod: from anywhere else
// 169.254.20.10 is some other host's link-local address, or nobody's.
func probeServer(env *hostio.Env) (server, why string) {
	if s := env.Setting(settingServer, ""); s != "" {
		if _, _, err := net.SplitHostPort(s); err != nil {
			s = net.JoinHostPort(strings.Trim(s, "[]"), "53")
		}
		return s, "--dns-server " + s
	}
	if why := inCluster(env); why != "" {
		return DefaultServer, why
	}
	return "", ""
}

// inCluster says whether doctor itself runs in a pod, and so whether
// 169.254.20.10 is this node's DNS. Only a live host can say so: with any
// other --root (a fixture, a saved bundle) doctor is not where that root's
// pods run, and the production default must never be asked. On a live host
// doctor's own environment is read as /proc/self/environ, not os.Getenv.
func inCluster(env *hostio.Env) string {
	if env.Root != "" && env.Root != "/" {
		return ""
	}
	return podSignals(env)
}

// podSignals reads the signs of a pod under the root: KUBERNETES_SERVICE_HOST
// in doctor's own environment, or a mounted service account.
func podSignals(env *hostio.Env) string {
	if vars, err, _ := facts.ReadEnviron(env, "/proc/self/environ"); err == nil {
		if h := vars["KUBERNETES_SERVICE_HOST"]; h != "" {
			return "doctor runs in a pod (KUBERNETES_SERVICE_HOST=" + h + " in its environment)"
		}
	}
	if st, err := env.Stat(facts.ServiceAccountDir); err == nil && st.IsDir() {
		return "doctor runs in a pod (" + facts.ServiceAccountDir + " exists)"
	}
	return ""
}

// target is one name a job resolves, with the URL its failure is quoted with.
type target struct {
	name string
	url  string // "" for the service name
}

// targets are the host of the repository URL (what the clone resolves, when
// known), the runner's GitLab URL from config.toml, and the API service.
func targets(r *runnerconfig.Runner, repoURL string) []target {
	var out []target
	seen := map[string]bool{}
	add := func(raw string) {
		u, err := url.Parse(raw)
		if err != nil || u.Hostname() == "" || seen[u.Hostname()] {
			return
		}
		if _, err := netip.ParseAddr(u.Hostname()); err == nil {
			return // an address needs no lookup
		}
		seen[u.Hostname()] = true
		u.User = nil // CI_REPOSITORY_URL carries the job token
		out = append(out, target{name: u.Hostname(), url: u.String()})
	}
	add(repoURL)
	if r != nil {
		add(r.URL)
	}
	return append(out, target{name: ServiceName})
}

// probeResult is every exchange, one per (transport, name) at most.
type probeResult struct {
	server, why string
	targets     []target
	answers     []dnsq.Answer
}

// probe asks each name over UDP, then over TCP, as a resolver would. A
// server that does not answer on a transport (timeout, nothing listening,
// not DNS) is not asked the next names there: they would only repeat it.
func probe(ctx context.Context, env *hostio.Env, server, why string, ts []target) *probeResult {
	r := &probeResult{server: server, why: why, targets: ts}
	for _, netw := range []string{"udp", "tcp"} {
		for _, t := range ts {
			a := ask(ctx, env, server, t.name, netw)
			r.answers = append(r.answers, a)
			if kindOf(a).serverWide() {
				break
			}
		}
	}
	return r
}

// ask looks for an address: A, then AAAA when A has none (an IPv6-only name
// resolves too).
func ask(ctx context.Context, env *hostio.Env, server, name, netw string) dnsq.Answer {
	q := func(qt uint16) dnsq.Answer {
		qctx, cancel := context.WithTimeout(ctx, queryTimeout)
		defer cancel()
		return dnsq.Query(qctx, env, server, name, netw, qt)
	}
	a := q(dns.TypeA)
	if a.Outcome == dnsq.NoAddress {
		if aaaa := q(dns.TypeAAAA); aaaa.Outcome == dnsq.OK {
			return aaaa
		}
	}
	return a
}
