package clusteroverride

import (
	"fmt"
	"sort"
	"strconv"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts/configfacts"
	"github.com/socialwebcomputer/doctor/checks/facts/kubefacts"
	"github.com/socialwebcomputer/doctor/internal/fixcode"
	"github.com/socialwebcomputer/doctor/internal/redact"
)

// wrongCluster reports the guide's "talks to the wrong cluster, or to a
// cluster on its own host" for a runner whose kubeconfig context is on its
// own host (a kind or k3d context left current) where the kcp mount is
// expected: the kubeconfig holds a cluster of the mount form the runner
// does not use, or the operator says so (--expect-kcp-mount). A lone
// loopback kubeconfig is guide 02's direct apiserver, and no finding here.
func wrongCluster(p *checks.Pass, e *configfacts.RunnerEntry) error {
	ec := kubefacts.EffectiveClusterFact.Get(p)
	// host set is reported above; in-cluster is the pod's own cluster; a
	// --kubeconfig given to doctor is not the runner's choice.
	if ec.Rule != kubefacts.RuleKubeconfig || !ec.OnOwnHost() {
		return nil
	}
	expect, err := expectKcpMount(p)
	if err != nil {
		return err
	}
	ev := []checks.Evidence{ec.Evidence()}
	why := "--expect-kcp-mount says the kcp mount is meant"
	fix := checks.Text("Point the runner at the kcp mount: name its context in [runners.kubernetes] context, or make it the kubeconfig's current-context.")
	if name, cl := unusedMount(kubefacts.KubeconfigFact.Get(p), ec.Server); cl != "" {
		why = fmt.Sprintf("the kubeconfig also holds the kcp mount %s (context %q), which this runner does not use", cl, name)
		ev = append(ev, checks.Evidence{Source: "contexts." + name, Detail: "server " + cl})
		fix = checks.Steps{
			checks.Say("Name the kcp mount's context in this runner's [runners.kubernetes] (or make it the kubeconfig's current-context), then restart the runner:"),
			checks.Document(fixcode.TOML(fixcode.TOMLTable("runners.kubernetes", fixcode.KV{Key: "context", Value: name}))),
		}
	} else if !expect {
		return nil
	}
	p.Report(checks.Finding{
		Cause: fmt.Sprintf("%s talks to %s, a cluster on its own host (context %q, %s), while %s: a kind or k3d context "+
			"left current, and every job runs there instead of the tenant cluster.", e.Label(), ec.Server, ec.Context, ec.ContextBy, why),
		Evidence: ev,
		Fix:      fix,
	})
	return nil
}

func expectKcpMount(p *checks.Pass) (bool, error) {
	v := ExpectKcpMount.Value(p.Env)
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("--%s=%q: want true or false", ExpectKcpMount.Name, v)
	}
	return b, nil
}

// unusedMount is a context of the merged kubeconfig whose cluster is a kcp
// mount URL other than server, and that URL; the first by context name.
func unusedMount(k *kubefacts.Kubeconfig, server string) (context, url string) {
	if k.Merged == nil {
		return "", ""
	}
	names := make([]string, 0, len(k.Merged.Contexts))
	for n := range k.Merged.Contexts {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		c := k.Merged.Contexts[n]
		if c == nil {
			continue
		}
		cl := k.Merged.Clusters[c.Cluster]
		if cl == nil {
			continue
		}
		if s := redact.StripUserinfo(cl.Server); s != server && kubefacts.IsKcpMount(cl.Server) {
			return n, s
		}
	}
	return "", ""
}
