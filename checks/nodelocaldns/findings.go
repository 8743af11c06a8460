package nodelocaldns

import (
	"fmt"
	"strings"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/client/dnsq"
)

// kind is one cause of a failed exchange. Refused splits in two: nothing
// listening (the OS answers) is not a server that answers REFUSED.
type kind struct {
	outcome dnsq.Outcome
	nothing bool
}

// order is the order findings are reported in: the server being absent
// first, what it answers after.
var order = []kind{
	{dnsq.Timeout, false}, {dnsq.Refused, true}, {dnsq.Garbage, false}, {dnsq.ServFail, false},
	{dnsq.NXDomain, false}, {dnsq.Refused, false}, {dnsq.NoAddress, false}, {dnsq.Truncated, false}, {dnsq.Failed, false},
}

func kindOf(a dnsq.Answer) kind {
	return kind{a.Outcome, a.Outcome == dnsq.Refused && a.Err != nil}
}

// serverWide kinds stop the probe on that transport: every name fails alike.
func (k kind) serverWide() bool {
	return k.outcome == dnsq.Timeout || k.outcome == dnsq.Garbage || k.nothing
}

// noServer kinds are what a node without a Ready DNS pod looks like from
// inside; a server that answers anything at all is running.
func (k kind) noServer() bool { return k.outcome == dnsq.Timeout || k.nothing }

// findings is one finding per kind of failure. A name resolves for a job
// when UDP answers with an address, or UDP is truncated and TCP answers:
// a failure of a name that resolves anyway is a warning. causedBy, when
// set, is given to the findings that mean no server runs.
func (r *probeResult) findings(causedBy string) []checks.Finding {
	ok := map[string]bool{} // "<net> <name>" answered with an address
	for _, a := range r.answers {
		if a.Outcome == dnsq.OK {
			ok[a.Net+" "+a.Name] = true
		}
	}
	resolves := func(name string) bool {
		if ok["udp "+name] {
			return true
		}
		for _, a := range r.answers {
			if a.Net == "udp" && a.Name == name && a.Outcome == dnsq.Truncated {
				return ok["tcp "+name]
			}
		}
		return false
	}
	groups := map[kind][]dnsq.Answer{}
	for _, a := range r.answers {
		if a.Outcome != dnsq.OK {
			groups[kindOf(a)] = append(groups[kindOf(a)], a)
		}
	}
	var out []checks.Finding
	for _, k := range order {
		as := groups[k]
		if len(as) == 0 {
			continue
		}
		sev := checks.Warning
		if k.serverWide() {
			sev = checks.Error
		}
		for _, a := range as {
			if !resolves(a.Name) {
				sev = checks.Error
			}
		}
		ev := []checks.Evidence{{Source: "dns-server", Detail: r.server + ", asked because " + r.why}}
		for _, a := range as {
			ev = append(ev, checks.Evidence{Source: "dns query", Detail: a.String()})
		}
		cause := r.describe(k, as)
		if sev == checks.Warning {
			cause += " Every name still resolves over the other transport, so only resolvers that need it fail."
		} else {
			cause += r.symptom(k, as)
		}
		f := checks.Finding{Severity: sev, Cause: cause, Evidence: ev, Fix: fixFor(k, r.server)}
		if k.noServer() {
			f.CausedBy = causedBy
		}
		out = append(out, f)
	}
	return out
}

// describe says what the server did, in the words of the outcome.
func (r *probeResult) describe(k kind, as []dnsq.Answer) string {
	s, ns, ms := r.server, nets(as), names(as)
	switch k {
	case kind{dnsq.Timeout, false}:
		return fmt.Sprintf("Nothing answers DNS at %s over %s within %s: the node's DNS pod is not running there, or does not listen on that address.", s, ns, queryTimeout)
	case kind{dnsq.Refused, true}:
		return fmt.Sprintf("%s refuses DNS over %s: nothing listens on that address and port (the host answers with a port unreachable or a reset), so the node's DNS pod is not running there.", s, ns)
	case kind{dnsq.Garbage, false}:
		return fmt.Sprintf("Something that is not a DNS server answers at %s over %s: its reply does not parse as DNS.", s, ns)
	case kind{dnsq.ServFail, false}:
		return fmt.Sprintf("%s answers SERVFAIL for %s: the node's DNS runs, but its upstream (the cluster DNS for cluster.local, the provider's resolvers for the rest) fails or cannot be reached.", s, ms)
	case kind{dnsq.NXDomain, false}:
		d := fmt.Sprintf("%s answers NXDOMAIN for %s: the name does not exist as the node's DNS sees it.", s, ms)
		for _, a := range as {
			if strings.TrimSuffix(a.Name, ".") == ServiceName {
				d += " For " + ServiceName + ", the node's DNS does not forward cluster.local to the cluster DNS."
				break
			}
		}
		if r.gitlab(as) != nil {
			d += " A GitLab name that resolves only on a tailnet or in a private zone does not resolve on a rented node, whose DNS is the provider's."
		}
		return d
	case kind{dnsq.Refused, false}:
		return fmt.Sprintf("%s answers REFUSED for %s: it runs, but will not resolve those names for this client (its ACL or zones).", s, ms)
	case kind{dnsq.NoAddress, false}:
		return fmt.Sprintf("%s answers NOERROR for %s with no A or AAAA record (an empty answer, or a CNAME to a name with no address): there is nothing to connect to.", s, ms)
	case kind{dnsq.Truncated, false}:
		return fmt.Sprintf("%s sets the truncated (TC) bit on its UDP answer for %s: a resolver must ask again over TCP, which glibc does and musl before 1.2.4 (older Alpine-based images) does not.", s, ms)
	}
	return fmt.Sprintf("The exchange with %s over %s for %s failed.", s, ns, ms)
}

// symptom quotes the job log line the failure produces.
func (r *probeResult) symptom(k kind, as []dnsq.Answer) string {
	t := r.gitlab(as)
	if t == nil && k.serverWide() && len(r.targets) > 0 && r.targets[0].url != "" {
		t = &r.targets[0] // the server answers no name at all
	}
	if t == nil {
		return " Job pods cannot resolve in-cluster names either."
	}
	return fmt.Sprintf(" A job resolving through it fails at the clone: fatal: unable to access '%s': Could not resolve host: %s", t.url, t.name)
}

// gitlab is the first target with a URL among the failed names.
func (r *probeResult) gitlab(as []dnsq.Answer) *target {
	for i := range r.targets {
		for _, a := range as {
			if r.targets[i].url != "" && strings.TrimSuffix(a.Name, ".") == r.targets[i].name {
				return &r.targets[i]
			}
		}
	}
	return nil
}

func fixFor(k kind, server string) string {
	logs := "kubectl -n kube-system logs -l " + PodLabel + "=" + PodName + " --prefix"
	switch k.outcome {
	case dnsq.Timeout, dnsq.Refused:
		if k.nothing || k.outcome == dnsq.Timeout {
			return "kubectl -n kube-system get pods -l " + PodLabel + "=" + PodName + " -o wide: the node needs a Ready pod; its events and " + logs + " say why it is not answering."
		}
		return "Read the node DNS's configuration (its Corefile) for an ACL or a zone that refuses these names; " + logs
	case dnsq.Garbage:
		return "Find what listens on " + server + " on the node (ss -lunpt), and give that address back to the node's DNS."
	case dnsq.ServFail:
		return logs + " shows the upstream error; check the cluster DNS service and the node's own resolvers."
	case dnsq.NXDomain:
		return "Publish GitLab on a name the public internet resolves (or give the job GIT_STRATEGY: none); for cluster.local, forward it to the cluster DNS in the node DNS's Corefile."
	case dnsq.NoAddress:
		return "Give the name an A or AAAA record, or point its CNAME at a name that has one."
	case dnsq.Truncated:
		return "Keep TCP open on the node's DNS, and use job images whose resolver retries over TCP (glibc, or musl 1.2.4 and later)."
	}
	return logs
}

func nets(as []dnsq.Answer) string {
	var u, t bool
	for _, a := range as {
		u, t = u || a.Net == "udp", t || a.Net == "tcp"
	}
	switch {
	case u && t:
		return "UDP and TCP"
	case t:
		return "TCP"
	}
	return "UDP"
}

func names(as []dnsq.Answer) string {
	var out []string
	seen := map[string]bool{}
	for _, a := range as {
		if n := strings.TrimSuffix(a.Name, "."); !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return strings.Join(out, ", ")
}
