package kubefacts

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"regexp"
	"strings"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts/configfacts"
	"github.com/socialwebcomputer/doctor/checks/facts/hostfacts"
	"github.com/socialwebcomputer/doctor/internal/fixcode"
	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/internal/redact"
	"github.com/socialwebcomputer/doctor/runnerconfig"
)

// ClusterRule is the branch of the executor's getKubeClientConfig
// (executors/kubernetes/util.go, gitlab-runner v19.3.0) that chose a
// runner's cluster, or doctor's own --kubeconfig that replaced it.
type ClusterRule int

const (
	// RuleHost: [runners.kubernetes] host is set, and the out-of-cluster
	// branch never reads the kubeconfig.
	RuleHost ClusterRule = iota + 1
	// RuleInCluster: host is empty and rest.InClusterConfig succeeds.
	RuleInCluster
	// RuleKubeconfig: host is empty, in-cluster config is absent or fails,
	// and client-go's loading rules give the kubeconfig.
	RuleKubeconfig
	// RuleDoctorKubeconfig: the operator gave doctor --kubeconfig, which
	// wins over all three.
	RuleDoctorKubeconfig
)

// EffectiveCluster is the cluster one runner talks to and why: the one
// decision APIClientFact builds its client from, and the provenance every
// finding of an API check cites (APIClientFact's Cites).
type EffectiveCluster struct {
	Rule ClusterRule
	// Server is the URL, userinfo stripped; "" when the kubeconfig gives
	// none (Kubeconfig.None, a missing context).
	Server string
	// Why is the rule that chose it, in words: "[runners.kubernetes] host
	// at config.toml:12", "in-cluster: ...", "kubeconfig: ...".
	Why string
	// At is where the choice is seen: config.toml's line, the environ, or
	// the kubeconfig file that holds the cluster.
	At string
	// Origin is the kubeconfig file that holds the chosen cluster
	// (client-go's LocationOfOrigin, as mergeKubeconfigs keeps it).
	Origin string
	// Context is the kubeconfig context; ContextBy says who named it:
	// config.toml's context key, --context, or the current-context.
	Context, ContextBy string
	// PathSource is how the kubeconfig path list was found
	// (Kubeconfig.Source); "" when no kubeconfig is read.
	PathSource string
	// Ignored is what the runner has and never reads: a KUBECONFIG beside
	// in-cluster config or host.
	Ignored string

	kube      *KubeContext
	inCluster *InCluster
}

// Kubectl is the kubectl command a fix gives for this cluster: with the
// kubeconfig files and context the runner uses when a kubeconfig chose it
// (KubeContext.Kubectl); plain kubectl otherwise (in the runner's pod, its
// service account is kubectl's in-cluster default).
func (c *EffectiveCluster) Kubectl() fixcode.Cmd {
	if c == nil || c.kube == nil || (c.Rule != RuleKubeconfig && c.Rule != RuleDoctorKubeconfig) {
		return fixcode.Command("kubectl")
	}
	return c.kube.Kubectl()
}

// Evidence is the provenance, as one finding cites it.
func (c *EffectiveCluster) Evidence() checks.Evidence {
	server := c.Server
	if server == "" {
		server = "(none)"
	}
	d := effectiveClusterPrefix + server + ": " + c.Why
	if c.Context != "" {
		d += fmt.Sprintf("; context %q (%s)", c.Context, c.ContextBy)
	}
	if c.Origin != "" {
		d += "; cluster defined in " + c.Origin
	}
	if c.PathSource != "" {
		d += "; kubeconfig path list from " + c.PathSource
	}
	if c.Ignored != "" {
		d += "; ignored: " + c.Ignored
	}
	return checks.Evidence{Source: c.At, Detail: d}
}

// CitesEffectiveCluster says e is the effective cluster an API check's
// finding cites (EffectiveCluster.Evidence), which the engine adds to every
// such finding.
func CitesEffectiveCluster(e checks.Evidence) bool {
	return strings.HasPrefix(e.Detail, effectiveClusterPrefix)
}

const effectiveClusterPrefix = "effective cluster "

// OnOwnHost says the server is the runner's own host: a loopback address or
// localhost, as a kind or k3d context is.
func (c *EffectiveCluster) OnOwnHost() bool { return OnOwnHost(c.Server) }

// OnOwnHost says a server URL names the host it is read on: 127.0.0.0/8,
// ::1 or localhost.
func OnOwnHost(server string) bool {
	u, err := url.Parse(server)
	if err != nil || u.Host == "" {
		return false
	}
	h := strings.ToLower(u.Hostname())
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// KcpMountPath is the kcp mount form of a tenant cluster's URL path, as
// getKubeconfig returns it: /clusters/root:<accountHash>:<cluster>:clusters.
var KcpMountPath = regexp.MustCompile(`^/clusters/root:[0-9a-z]+:[a-z0-9]([-a-z0-9]*[a-z0-9])?:clusters/?$`)

// IsKcpMount says a server URL is an https kcp mount URL.
func IsKcpMount(server string) bool {
	u, err := url.Parse(server)
	return err == nil && u.Scheme == "https" && u.Host != "" && KcpMountPath.MatchString(u.Path)
}

// EffectiveClusterFact decides each runner's cluster as the executor's
// getKubeClientConfig does: host set takes the out-of-cluster branch; with
// host empty, in-cluster config exactly when rest.InClusterConfig succeeds
// (InClusterFact); else the kubeconfig's context. --kubeconfig replaces
// all three. It reads no file beyond the facts it requires, so an offline
// run reads what it read before.
var EffectiveClusterFact = &checks.Fact[*EffectiveCluster]{
	ID:       "effective-cluster",
	Doc:      "the cluster a runner talks to, and the rule, file and context that chose it",
	Requires: []checks.Node{KubeContextFact, configfacts.RunnerEntryFact, hostfacts.EnvironFact, InClusterFact},
	Compute: func(p *checks.Pass) (*EffectiveCluster, error) {
		return effectiveCluster(p), nil
	},
}

func effectiveCluster(p *checks.Pass) *EffectiveCluster {
	return decideCluster(p.Env, configfacts.RunnerEntryFact.Get(p), hostfacts.EnvironFact.Get(p), InClusterFact.Get(p), KubeContextFact.Get(p))
}

// EffectiveClustersFact is EffectiveClusterFact's decision for every
// Kubernetes runner of a decoded config.toml (the implied runner of
// --kubeconfig without one), made by the same function from the same facts,
// for a host-wide check that judges what the runners share: kubeconfig-file
// judges the kubeconfig for the runners whose cluster it chose, and for no
// runner that never reads it (host set, in-cluster config). Empty when
// config.toml does not decode.
var EffectiveClustersFact = &checks.Fact[[]*RunnerCluster]{
	ID:       "effective-clusters",
	Doc:      "the effective cluster of every Kubernetes runner, as effective-cluster decides it for each",
	Requires: []checks.Node{configfacts.ConfigFact, KubeconfigFact, hostfacts.EnvironFact, InClusterFact},
	Compute: func(p *checks.Pass) ([]*RunnerCluster, error) {
		c, k := configfacts.ConfigFact.Get(p), KubeconfigFact.Get(p)
		env, ic := hostfacts.EnvironFact.Get(p), InClusterFact.Get(p)
		var out []*RunnerCluster
		if p.Env.KubeconfigPath != "" && (c.Path == "" || errors.Is(c.ReadErr, fs.ErrNotExist)) {
			// RunnersFact's implied runner: the executor's defaults.
			e := &configfacts.RunnerEntry{Subject: checks.Subject{Ref: configfacts.ImpliedRunner, Executor: checks.Kubernetes}, Pos: -1,
				Runner: &runnerconfig.Runner{Executor: checks.Kubernetes}, File: c, NamespaceOverride: p.Env.NamespaceOverride}
			kc := ResolveContext(k, p.Env.ContextOverride)
			return append(out, &RunnerCluster{Ref: nil, Cluster: decideCluster(p.Env, e, env, ic, kc)}), nil
		}
		if !c.Decoded() {
			return nil, nil
		}
		for i, r := range c.Config.Runners {
			if checks.NormalizeExecutor(r.Executor) != checks.Kubernetes {
				continue
			}
			e := &configfacts.RunnerEntry{Subject: checks.Subject{Ref: *configfacts.RefOf(i, r), Executor: checks.Kubernetes}, Pos: i, Runner: r, File: c,
				NamespaceOverride: p.Env.NamespaceOverride}
			kc := ResolveContext(k, ContextFor(p.Env, r))
			out = append(out, &RunnerCluster{Ref: configfacts.RefOf(i, r), Cluster: decideCluster(p.Env, e, env, ic, kc)})
		}
		return out, nil
	},
}

// RunnerCluster is one runner's effective cluster (Ref nil: the implied
// runner of --kubeconfig).
type RunnerCluster struct {
	Ref     *checks.RunnerRef
	Cluster *EffectiveCluster
}

// Kube is the kubeconfig context the decision read: nil when no kubeconfig
// chose the cluster (host set, in-cluster config).
func (c *EffectiveCluster) Kube() *KubeContext {
	if c == nil || (c.Rule != RuleKubeconfig && c.Rule != RuleDoctorKubeconfig) {
		return nil
	}
	return c.kube
}

// decideCluster is getKubeClientConfig's choice for one runner, from the
// facts it reads.
func decideCluster(henv *hostio.Env, e *configfacts.RunnerEntry, env *hostfacts.Environ, ic *InCluster, k *KubeContext) *EffectiveCluster {
	c := &EffectiveCluster{kube: k, inCluster: ic}
	kubeconfig := ""
	if env.Err == nil {
		if v, ok := env.Lookup("KUBECONFIG"); ok && v != "" {
			kubeconfig = fmt.Sprintf("KUBECONFIG=%s in %s is never read", v, env.Where("KUBECONFIG"))
		}
	}
	if henv.KubeconfigPath == "" {
		if host := e.Kube().Host; host != "" {
			src, _ := e.At("kubernetes", "host")
			c.Rule, c.Server, c.At = RuleHost, redact.StripUserinfo(host), src
			c.Why = "[runners.kubernetes] host is set (" + src + "): the out-of-cluster branch, which reads no kubeconfig and tries no in-cluster config"
			if kubeconfig != "" {
				c.Ignored = kubeconfig + ": host wins"
			}
			return c
		}
		if ic.Config != nil {
			c.Rule, c.Server, c.At = RuleInCluster, ic.Config.Host, env.Source
			c.Why = fmt.Sprintf("in-cluster: host is empty, KUBERNETES_SERVICE_HOST and _PORT (%s) are in the runner's environment and the service-account token %s/token can be read, so rest.InClusterConfig succeeds and wins", ic.HostPort, hostfacts.ServiceAccountDir)
			if ic.CANote != "" {
				c.Why += " (" + ic.CANote + ")"
			}
			if kubeconfig != "" {
				c.Ignored = kubeconfig + ": in-cluster config wins"
			}
			return c
		}
	}
	c.Rule = RuleKubeconfig
	switch {
	case henv.KubeconfigPath != "":
		c.Rule, c.Why = RuleDoctorKubeconfig, "--kubeconfig given to doctor, which replaces the runner's own choice (host, in-cluster config, its kubeconfig)"
	case ic.Vars():
		c.Why = fmt.Sprintf("kubeconfig: host is empty and in-cluster config fails although KUBERNETES_SERVICE_HOST and _PORT (%s) are set, because the service-account token cannot be read (%v)", ic.HostPort, ic.TokenErr)
	case env.Err != nil:
		c.Why = "kubeconfig: host is empty, and whether in-cluster config applies is unknown: the runner's environment cannot be read"
	default:
		c.Why = "kubeconfig: host is empty and KUBERNETES_SERVICE_HOST and _PORT are not in the runner's environment, so there is no in-cluster config"
	}
	kc := k.Kubeconfig
	c.PathSource, c.At = kc.Source, kc.Source
	switch {
	case kc.None != "":
		c.Why += "; there is no kubeconfig: " + kc.None
		c.At = env.Source
	case kc.Merged == nil:
		c.Why += "; the kubeconfig does not load"
	case k.Context == nil:
		c.Why += fmt.Sprintf("; the kubeconfig has no context %q", k.ContextName)
	}
	if k.ContextName != "" {
		c.Context = k.ContextName
		switch {
		case henv.ContextOverride != "":
			c.ContextBy = "--context given to doctor"
		case k.Overridden:
			src, _ := e.At("kubernetes", "context")
			c.ContextBy = "config.toml's context key, " + src
		default:
			c.ContextBy = "the kubeconfig's current-context"
		}
	}
	if k.Cluster != nil {
		c.Server = redact.StripUserinfo(k.Cluster.Server)
		if k.Cluster.LocationOfOrigin != "" {
			c.Origin = hostPath(henv, k.Cluster.LocationOfOrigin)
		}
		if c.Origin != "" {
			c.At = c.Origin
		}
	}
	if c.At == "" {
		c.At = "kubeconfig"
	}
	return c
}
