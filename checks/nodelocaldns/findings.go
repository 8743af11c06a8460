package nodelocaldns

import (
	"fmt"
	"strings"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/client/dnsq"
	"github.com/socialwebcomputer/doctor/checks/facts/nodedns"
	"github.com/socialwebcomputer/doctor/internal/fixcode"
)

// findings is one finding per kind of failure. A name resolves for a job
// when UDP answers with an address, or UDP is truncated and TCP answers:
// a failure of a name that resolves anyway is a warning. causedBy, when
// set, is given to the findings that mean no server runs.
func findings(r *nodedns.Probe, causedBy string, kubectl fixcode.Cmd) []checks.Finding {
	ok := map[string]bool{} // "<net> <name>" answered with an address
	for _, a := range r.Answers {
		if a.Outcome == dnsq.OK {
			ok[a.Net+" "+a.Name] = true
		}
	}
	resolves := func(name string) bool {
		if ok["udp "+name] {
			return true
		}
		for _, a := range r.Answers {
			if a.Net == "udp" && a.Name == name && a.Outcome == dnsq.Truncated {
				return ok["tcp "+name]
			}
		}
		return false
	}
	groups := map[nodedns.Kind][]dnsq.Answer{}
	for _, a := range r.Answers {
		if a.Outcome != dnsq.OK {
			groups[nodedns.KindOf(a)] = append(groups[nodedns.KindOf(a)], a)
		}
	}
	var out []checks.Finding
	for _, k := range nodedns.KindOrder {
		as := groups[k]
		if len(as) == 0 {
			continue
		}
		sev := checks.Warning
		if k.ServerWide() {
			sev = checks.Error
		}
		for _, a := range as {
			if !resolves(a.Name) {
				sev = checks.Error
			}
		}
		ev := []checks.Evidence{{Source: "dns-server", Detail: r.Server + ", asked because " + r.Why}}
		for _, a := range as {
			ev = append(ev, checks.Evidence{Source: "dns query", Detail: a.String()})
		}
		cause := describe(r, k, as)
		if sev == checks.Warning {
			cause += " Every name still resolves over the other transport, so only resolvers that need it fail."
		} else {
			cause += symptom(r, k, as)
		}
		f := checks.Finding{Severity: sev, Cause: cause, Evidence: ev, Fix: fixFor(k, r.Server, kubectl)}
		if k.NoServer() {
			f.CausedBy = causedBy
		}
		out = append(out, f)
	}
	return out
}

// describe says what the server did, in the words of the outcome.
func describe(r *nodedns.Probe, k nodedns.Kind, as []dnsq.Answer) string {
	s, ns, ms := r.Server, nets(as), names(as)
	switch k {
	case nodedns.Kind{Outcome: dnsq.Timeout, Nothing: false}:
		return fmt.Sprintf("Nothing answers DNS at %s over %s within %s: the node's DNS pod is not running there, or does not listen on that address.", s, ns, nodedns.QueryTimeout)
	case nodedns.Kind{Outcome: dnsq.Refused, Nothing: true}:
		return fmt.Sprintf("%s refuses DNS over %s: nothing listens on that address and port (the host answers with a port unreachable or a reset), so the node's DNS pod is not running there.", s, ns)
	case nodedns.Kind{Outcome: dnsq.Garbage, Nothing: false}:
		return fmt.Sprintf("Something that is not a DNS server answers at %s over %s: its reply does not parse as DNS.", s, ns)
	case nodedns.Kind{Outcome: dnsq.ServFail, Nothing: false}:
		return fmt.Sprintf("%s answers SERVFAIL for %s: the node's DNS runs, but its upstream (the cluster DNS for cluster.local, the provider's resolvers for the rest) fails or cannot be reached.", s, ms)
	case nodedns.Kind{Outcome: dnsq.NXDomain, Nothing: false}:
		d := fmt.Sprintf("%s answers NXDOMAIN for %s: the name does not exist as the node's DNS sees it.", s, ms)
		for _, a := range as {
			if strings.TrimSuffix(a.Name, ".") == nodedns.ServiceName {
				d += " For " + nodedns.ServiceName + ", the node's DNS does not forward cluster.local to the cluster DNS."
				break
			}
		}
		if gitlab(r, as) != nil {
			d += " A GitLab name that resolves only on a tailnet or in a private zone does not resolve on a rented node, whose DNS is the provider's."
		}
		return d
	case nodedns.Kind{Outcome: dnsq.Refused, Nothing: false}:
		return fmt.Sprintf("%s answers REFUSED for %s: it runs, but will not resolve those names for this client (its ACL or zones).", s, ms)
	case nodedns.Kind{Outcome: dnsq.NoAddress, Nothing: false}:
		return fmt.Sprintf("%s answers NOERROR for %s with no A or AAAA record (an empty answer, or a CNAME to a name with no address): there is nothing to connect to.", s, ms)
	case nodedns.Kind{Outcome: dnsq.Truncated, Nothing: false}:
		return fmt.Sprintf("%s sets the truncated (TC) bit on its UDP answer for %s: a resolver must ask again over TCP, which glibc does and musl before 1.2.4 (older Alpine-based images) does not.", s, ms)
	}
	return fmt.Sprintf("The exchange with %s over %s for %s failed.", s, ns, ms)
}

// symptom quotes the job log line the failure produces.
func symptom(r *nodedns.Probe, k nodedns.Kind, as []dnsq.Answer) string {
	t := gitlab(r, as)
	if t == nil && k.ServerWide() && len(r.Targets) > 0 && r.Targets[0].URL != "" {
		t = &r.Targets[0] // the server answers no name at all
	}
	if t == nil {
		return " Job pods cannot resolve in-cluster names either."
	}
	return fmt.Sprintf(" A job resolving through it fails at the clone: fatal: unable to access '%s': Could not resolve host: %s", t.URL, t.Name)
}

// gitlab is the first target with a URL among the failed names.
func gitlab(r *nodedns.Probe, as []dnsq.Answer) *nodedns.Target {
	for i := range r.Targets {
		for _, a := range as {
			if r.Targets[i].URL != "" && strings.TrimSuffix(a.Name, ".") == r.Targets[i].Name {
				return &r.Targets[i]
			}
		}
	}
	return nil
}

func fixFor(k nodedns.Kind, server string, kubectl fixcode.Cmd) checks.Steps {
	logs := logsOf(kubectl)
	switch k.Outcome {
	case dnsq.Timeout, dnsq.Refused:
		if k.Nothing || k.Outcome == dnsq.Timeout {
			return checks.Steps{checks.Say("The node needs a Ready node DNS pod; where they run, and their log, which says why one is not answering:"),
				checks.Commands(podsWide(kubectl), logs)}
		}
		return checks.Steps{checks.Say("Read the node DNS's configuration (its Corefile) for an ACL or a zone that refuses these names; its log:"), checks.Commands(logs)}
	case dnsq.Garbage:
		return checks.Steps{checks.Say("Find what listens on " + server + " on the node, and give that address back to the node's DNS; on the node:"),
			checks.Sh("sudo ss -lunpt")}
	case dnsq.ServFail:
		return checks.Steps{checks.Say("The node DNS's log shows the upstream error; check the cluster DNS service and the node's own resolvers:"), checks.Commands(logs)}
	case dnsq.NXDomain:
		return checks.Text("Publish GitLab on a name the public internet resolves (or give the job GIT_STRATEGY: none); for cluster.local, forward it to the cluster DNS in the node DNS's Corefile.")
	case dnsq.NoAddress:
		return checks.Text("Give the name an A or AAAA record, or point its CNAME at a name that has one.")
	case dnsq.Truncated:
		return checks.Text("Keep TCP open on the node's DNS, and use job images whose resolver retries over TCP (glibc, or musl 1.2.4 and later).")
	}
	return checks.Steps{checks.Commands(logs)}
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
