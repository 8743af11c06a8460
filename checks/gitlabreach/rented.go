package gitlabreach

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/client/gitlab"
	"github.com/socialwebcomputer/doctor/internal/hostio"
)

// publishFix is the guide's answer to a GitLab rented nodes cannot reach.
const publishFix = "Publish GitLab on a name the public internet resolves and reaches (a Tailscale Funnel on " +
	"GitLab's port, so the ts.net name resolves publicly), or give the jobs GIT_STRATEGY: none."

// rentedView judges the name from where the jobs run. Job pods clone from
// CI_REPOSITORY_URL and the helper uploads to the runner's url; on a rented
// node both go out through the provider's network and public DNS, never the
// tailnet. The public resolver stands in for that DNS; doctor cannot dial
// from a node, so the address class is the judgement.
func rentedView(ctx context.Context, env *hostio.Env, t *gitlab.Target, sys *gitlab.Resolution, dl gitlab.Deadlines) *checks.Finding {
	tailHere := gitlab.AllTailnet(sys.Addrs)
	if _, err := netip.ParseAddr(t.Host); err == nil {
		if !tailHere {
			return nil // no name to compare
		}
		return &checks.Finding{
			Cause: fmt.Sprintf("%s names the tailnet address %s. A rented node is not on the tailnet, so job pods cannot "+
				"reach this GitLab: jobs fail at the clone with `unable to access '...'`.", t.Named(), t.Host),
			Evidence: []checks.Evidence{{Source: t.Named(), Detail: t.Origin()}},
			Fix:      checks.Text(publishFix),
		}
	}
	pub := gitlab.ResolvePublic(ctx, env, t.Host, dl)
	pubDetail := t.Host + " -> " + gitlab.Join(pub.Addrs)
	if !pub.Resolved() {
		pubDetail = pub.Why()
		if pub.Denied {
			pubDetail = t.Host + ": no address (NXDOMAIN, or no A/AAAA record)"
		}
	}
	ev := []checks.Evidence{resolvedHere(t, sys), {Source: "public DNS (" + pub.Via + ")", Detail: pubDetail}}
	name := fmt.Sprintf("%s (%s)", t.Named(), t.Host)
	switch {
	case tailHere && pub.Resolved() && !gitlab.AllTailnet(pub.Addrs):
		return &checks.Finding{
			Severity: checks.Info,
			Cause: fmt.Sprintf("%s resolves on this host only to tailnet addresses (%s): that is the runner's own path. "+
				"Rented nodes are not on the tailnet; public DNS gives them %s (the Funnel), so job pods clone and upload "+
				"through the Funnel. Both paths must stay up: with the Funnel off, every job fails at the clone with "+
				"`unable to access` although the runner itself still reaches GitLab.", name, gitlab.Join(sys.Addrs), gitlab.Join(pub.Addrs)),
			Evidence: ev,
			Fix:      checks.Text("Nothing to change; keep the Funnel on (tailscale funnel status on the GitLab host)."),
		}
	case tailHere && (pub.Resolved() || pub.Denied):
		return &checks.Finding{
			Cause: fmt.Sprintf("%s resolves on this host only to tailnet addresses (%s), and public DNS gives no address "+
				"outside the tailnet. A rented node's egress is the provider's, so job pods cannot reach this GitLab: jobs "+
				"fail at the clone with `unable to access '...'` where the DNS did resolve.", name, gitlab.Join(sys.Addrs)),
			Evidence: ev,
			Fix:      checks.Text(publishFix),
		}
	case tailHere:
		return &checks.Finding{
			Severity: checks.Warning,
			Cause: fmt.Sprintf("%s resolves on this host only to tailnet addresses (%s), and the public resolver did not "+
				"answer, so doctor cannot tell whether rented nodes can reach it; they can only through a public name.", name, gitlab.Join(sys.Addrs)),
			Evidence: ev,
			Fix:      checks.Text("Run doctor again with --public-dns set to a resolver this host can reach. " + publishFix),
		}
	case pub.Denied:
		return &checks.Finding{
			Severity: checks.Warning,
			Cause: fmt.Sprintf("%s resolves on this host (%s) but not in public DNS: it is a private name, and rented nodes, "+
				"whose DNS is public, fail at the clone with `Could not resolve host`.", name, gitlab.Join(sys.Addrs)),
			Evidence: ev,
			Fix:      checks.Text(publishFix),
		}
	case !pub.Resolved():
		return &checks.Finding{
			Severity: checks.Info,
			Cause:    fmt.Sprintf("The public resolver did not answer for %s, so doctor could not compare what rented nodes resolve.", name),
			Evidence: ev,
			Fix:      checks.Text("Run doctor again with --public-dns set to a resolver this host can reach."),
		}
	}
	return nil
}
