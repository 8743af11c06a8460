// Package nodedns is what doctor learns of the node-local DNS a job
// resolves through: the add-on as the API lists it (AddonFact: its
// DaemonSet and pods in kube-system) and the server itself as a probe asks
// it (ProbeFact: the runner's GitLab names over UDP and TCP), with the
// kinds of failure an exchange shows. node-local-dns judges both;
// kubelet-reach tells the add-on's pods by its labels.
package nodedns

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/miekg/dns"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/client/dnsq"
	"github.com/socialwebcomputer/doctor/checks/client/kube"
	"github.com/socialwebcomputer/doctor/checks/facts/cluster"
	"github.com/socialwebcomputer/doctor/checks/facts/configfacts"
	"github.com/socialwebcomputer/doctor/checks/facts/hostfacts"
	"github.com/socialwebcomputer/doctor/checks/facts/kubefacts"
	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/runnerconfig"
)

// The names the provider's node network add-ons use.
const (
	Namespace        = cluster.SystemNamespace
	PodLabel         = "app.kubernetes.io/name"
	PodName          = "socialweb-node-dns"
	NodeLabel        = "socialweb.computer/node-local-dns"
	PodsSource       = "GET /api/v1/namespaces/" + Namespace + "/pods"
	DaemonSetsSource = "GET /apis/apps/v1/namespaces/" + Namespace + "/daemonsets"
)

// PodSelector lists the add-on's pods, and no other of kube-system's.
const PodSelector = PodLabel + "=" + PodName

// AddonObjects are the node-local DNS objects: its DaemonSets and their pods.
type AddonObjects struct {
	DaemonSets []appsv1.DaemonSet // those whose pods carry the label
	Others     []string           // the other DaemonSets in kube-system, for evidence
	Pods       []corev1.Pod
}

// fetch reads the add-on: kube-system's DaemonSets, listed here (all of
// them: a few, and the others name what kube-system does run when the
// add-on's is missing), and its pods, kube-system's that carry the add-on's
// label, listed by it (PodSelector; one list, shared with kubelet-reach).
// When the add-on is absent that list is empty, as the DaemonSet list says.
// Both leave at once, under ctx and at most 10 s.
func fetch(ctx context.Context, c kube.Interface, systemPods func(context.Context) ([]corev1.Pod, error)) (*AddonObjects, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	v := &AddonObjects{}
	var dsErr, podsErr error
	var wg sync.WaitGroup
	wg.Go(func() {
		dsErr = pages(func(o metav1.ListOptions) (string, error) {
			r, err := c.AppsV1().DaemonSets(Namespace).List(ctx, o)
			if err != nil {
				return "", err
			}
			for _, ds := range r.Items {
				if ds.Spec.Template.Labels[PodLabel] == PodName {
					v.DaemonSets = append(v.DaemonSets, ds)
				} else {
					v.Others = append(v.Others, ds.Name)
				}
			}
			return r.Continue, nil
		}, metav1.ListOptions{})
	})
	wg.Go(func() {
		// The list itself, not a copy: the server selected by the label.
		v.Pods, podsErr = systemPods(ctx)
	})
	wg.Wait()
	if dsErr != nil {
		return nil, fmt.Errorf("%s: %w", DaemonSetsSource, kubefacts.LacksRBAC(kubefacts.Access{Verb: "list", Group: "apps", Resource: "daemonsets", Namespace: Namespace}, dsErr))
	}
	if podsErr != nil {
		return nil, fmt.Errorf("%s: %w", PodsSource, kubefacts.LacksRBAC(kubefacts.Access{Verb: "list", Resource: "pods", Namespace: Namespace}, podsErr))
	}
	return v, nil
}

// pages follows continue tokens, at most 100 pages of 500.
func pages(list func(metav1.ListOptions) (string, error), o metav1.ListOptions) error {
	o.Limit = 500
	for range 100 {
		next, err := list(o)
		if err != nil || next == "" {
			return err
		}
		o.Continue = next
	}
	return fmt.Errorf("more than 100 pages")
}

// Kind is one cause of a failed exchange. Refused splits in two: nothing
// listening (the OS answers) is not a server that answers REFUSED.
type Kind struct {
	Outcome dnsq.Outcome
	Nothing bool
}

// KindOrder is the order findings are reported in: the server being absent
// first, what it answers after.
var KindOrder = []Kind{
	{dnsq.Timeout, false}, {dnsq.Refused, true}, {dnsq.Garbage, false}, {dnsq.ServFail, false},
	{dnsq.NXDomain, false}, {dnsq.Refused, false}, {dnsq.NoAddress, false}, {dnsq.Truncated, false}, {dnsq.Failed, false},
}

// KindOf is the kind of a failed exchange.
func KindOf(a dnsq.Answer) Kind {
	return Kind{a.Outcome, a.Outcome == dnsq.Refused && a.Err != nil}
}

// ServerWide kinds stop the probe on that transport: every name fails alike.
func (k Kind) ServerWide() bool {
	return k.Outcome == dnsq.Timeout || k.Outcome == dnsq.Garbage || k.Nothing
}

// NoServer kinds are what a node without a Ready DNS pod looks like from
// inside; a server that answers anything at all is running.
func (k Kind) NoServer() bool { return k.Outcome == dnsq.Timeout || k.Nothing }

// DefaultServer is where a job pod's resolv.conf points on these nodes.
const DefaultServer = "169.254.20.10:53"

// ServerSetting is a node-local DNS server the operator gives doctor to
// ask directly.
var ServerSetting = &checks.Setting{Name: "dns-server",
	Usage: "probe the node-local DNS at `HOST:PORT` directly (default " + DefaultServer + ", and only when doctor runs on a node or in a job pod)"}

// ServiceName is the in-cluster name every pod resolves through the same server.
const ServiceName = "kubernetes.default.svc.cluster.local"

// QueryTimeout bounds one question; tests shorten it.
var QueryTimeout = 2 * time.Second

// ProbeServer is the server to ask directly and why, or "" when doctor was
// given none and runs neither on a node nor in a pod: from anywhere else
// 169.254.20.10 is some other host's link-local address, or nobody's.
func ProbeServer(env *hostio.Env) (server, why string) {
	if s := ServerSetting.Value(env); s != "" {
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
	return PodSignals(env)
}

// PodSignals reads the signs of a pod under the root: KUBERNETES_SERVICE_HOST
// in doctor's own environment, or a mounted service account.
func PodSignals(env *hostio.Env) string {
	if vars, err, _ := hostfacts.ReadEnviron(env, "/proc/self/environ"); err == nil {
		if h := vars["KUBERNETES_SERVICE_HOST"]; h != "" {
			return "doctor runs in a pod (KUBERNETES_SERVICE_HOST=" + h + " in its environment)"
		}
	}
	if st, err := env.Stat(hostfacts.ServiceAccountDir); err == nil && st.IsDir() {
		return "doctor runs in a pod (" + hostfacts.ServiceAccountDir + " exists)"
	}
	return ""
}

// Target is one name a job resolves, with the URL its failure is quoted with.
type Target struct {
	Name string
	URL  string // "" for the service name
}

// Targets are the host of the repository URL (what the clone resolves, when
// known), the runner's GitLab URL from config.toml, and the API service.
func Targets(r *runnerconfig.Runner, repoURL string) []Target {
	var out []Target
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
		out = append(out, Target{Name: u.Hostname(), URL: u.String()})
	}
	add(repoURL)
	if r != nil {
		add(r.URL)
	}
	return append(out, Target{Name: ServiceName})
}

// Probe is every exchange, one per (transport, name) at most.
type Probe struct {
	Server, Why string
	Targets     []Target
	Answers     []dnsq.Answer
}

// Ask asks each name over UDP, then over TCP, as a resolver would. A
// server that does not answer on a transport (timeout, nothing listening,
// not DNS) is not asked the next names there: they would only repeat it.
func Ask(ctx context.Context, env *hostio.Env, server, why string, ts []Target) *Probe {
	r := &Probe{Server: server, Why: why, Targets: ts}
	for _, netw := range []string{"udp", "tcp"} {
		for _, t := range ts {
			a := ask(ctx, env, server, t.Name, netw)
			r.Answers = append(r.Answers, a)
			if KindOf(a).ServerWide() {
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
		qctx, cancel := context.WithTimeout(ctx, QueryTimeout)
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

// ProbeFact asks the DNS server a job resolves through (or --dns-server)
// for the runner's GitLab names as soon as the runner is known. It needs
// nothing from the cluster, and the check, which waits for the cluster's
// lists, then finds it answered instead of starting it after them: on a
// cluster with nodes the lists are the run's last answers.
var ProbeFact = &checks.Fact[*Probe]{
	ID:       "node-dns-probe",
	Doc:      "the DNS server a job resolves through (or --dns-server), asked for the runner's GitLab names over UDP and TCP",
	Requires: []checks.Node{configfacts.RunnerEntryFact},
	Network:  true,
	Settings: []*checks.Setting{ServerSetting, configfacts.RepositoryURLSetting},
	Compute: func(p *checks.Pass) (*Probe, error) {
		e := configfacts.RunnerEntryFact.Get(p)
		// Only for a runner the check applies to: no query for a Docker
		// runner's sake.
		if e.Executor != checks.Kubernetes {
			return nil, nil
		}
		ctx, cancel := Budget(p.Context)
		defer cancel()
		return ProbeRunner(ctx, p.Env, e.Runner), nil
	},
}

// ProbeRunner asks the server a job resolves through (ProbeServer) for the
// names a job of runner r resolves; nil when doctor has no server to ask.
func ProbeRunner(ctx context.Context, env *hostio.Env, r *runnerconfig.Runner) *Probe {
	server, why := ProbeServer(env)
	if server == "" {
		return nil
	}
	return Ask(ctx, env, server, why, Targets(r, configfacts.RepositoryURLSetting.Value(env)))
}

// AddonOnce lists the node-local DNS add-on once per target (a client
// without a target, a test's, every time).
func AddonOnce(p *checks.Pass, ctx context.Context, client kube.Interface, target string) (*AddonObjects, error) {
	systemPods := func(ctx context.Context) ([]corev1.Pod, error) {
		return cluster.SystemPods(p, ctx, target, client, PodSelector)
	}
	if target == "" {
		return fetch(ctx, client, systemPods)
	}
	type got struct {
		v   *AddonObjects
		err error
	}
	g, _ := checks.Shared(p, "node-dns "+target, func() (got, error) {
		v, err := fetch(ctx, client, systemPods)
		return got{v, err}, nil
	})
	return g.v, g.err
}

// Budget ends the check's own work a little before the engine's deadline, so
// what was learnt is reported instead of dropped as a timeout.
func Budget(ctx context.Context) (context.Context, context.CancelFunc) {
	dl, ok := ctx.Deadline()
	if !ok {
		return context.WithTimeout(ctx, 15*time.Second)
	}
	return context.WithDeadline(ctx, dl.Add(-time.Until(dl)/10))
}

// Addon is the add-on's objects as listed, or why it could not be.
type Addon struct {
	Objects *AddonObjects
	Err     error
}

// AddonFact lists the node-local DNS add-on (its DaemonSet and pods) once
// per target. Gated on api-auth instead of waiting behind it and the
// cluster lists, its requests leave with the self-review.
var AddonFact = &checks.Fact[*Addon]{
	ID:       "node-dns-addon",
	Doc:      "the node-local DNS add-on's DaemonSet and pods in kube-system, listed once per target",
	Requires: []checks.Node{kubefacts.AfterAPIAuth, kubefacts.APIClientFact},
	Network:  true,
	Compute: func(p *checks.Pass) (*Addon, error) {
		api := kubefacts.APIClientFact.Get(p)
		ctx, cancel := Budget(p.Context)
		defer cancel()
		v, err := AddonOnce(p, ctx, api.Client, api.Key)
		return &Addon{v, err}, nil
	},
}
