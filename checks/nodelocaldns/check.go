// Package nodelocaldns checks the DNS a job pod resolves through: the node's
// own CoreDNS at 169.254.20.10, run by a DaemonSet on labelled nodes. From
// the API it checks every node has one; on a node or in a job pod (or with
// --dns-server) it also asks that server directly.
package nodelocaldns

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/apiauth"
	"github.com/socialwebcomputer/doctor/checks/client/kube"
	"github.com/socialwebcomputer/doctor/checks/facts"
	"github.com/socialwebcomputer/doctor/checks/facts/cluster"
	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/runnerconfig"
)

// ID names the check; its own probe findings fold under it by this name.
const ID = "node-local-dns"

var Check = &checks.Check{
	ID:       ID,
	Title:    "Every node runs the node-local DNS that job pods resolve through",
	Severity: checks.Error,
	Doc: checks.Doc{
		Cause: "A job pod's resolv.conf names the node's own CoreDNS at 169.254.20.10, run by the DaemonSet in " +
			"kube-system whose pods are labelled app.kubernetes.io/name=socialweb-node-dns, on nodes labelled " +
			"socialweb.computer/node-local-dns=true. A node without a Ready DNS pod fails every lookup: it lacks the " +
			"label (it joined with an older user_data), or the DaemonSet was never applied (the provider's add-on " +
			"pass never applied the node network add-ons). Run on a node or in a job pod, or given --dns-server, " +
			"doctor also asks that server for the GitLab host and kubernetes.default.svc.cluster.local over UDP and " +
			"TCP, and names how it fails: timeout, refused, SERVFAIL, NXDOMAIN, truncated, no address, or not DNS.",
		Symptom: "fatal: unable to access 'https://gitlab.dorper-matrix.ts.net:8443/group/project.git/': Could not resolve host: gitlab.dorper-matrix.ts.net",
		Fix: "kubectl -n kube-system get pods -l app.kubernetes.io/name=socialweb-node-dns -o wide shows which nodes run one. " +
			"A node without the label joined with an older user_data: replace it with one booted from the current " +
			"user_data (or kubectl label node NODE socialweb.computer/node-local-dns=true). No DaemonSet: run the " +
			"provider's add-on pass until it logs applied the node network add-ons.",
		Verify: "kubectl get nodes -L socialweb.computer/node-local-dns; " +
			"kubectl -n kube-system get pods -l app.kubernetes.io/name=socialweb-node-dns -o wide; " +
			"in a job pod: nslookup <gitlab host> 169.254.20.10",
		Patterns: []string{
			// docs/executors/kubernetes/troubleshooting.md, v19.3.0: "fatal: unable to access
			// 'https://gitlab-ci-token:token@example.com/repo/proj.git/': Could not resolve host: example.com".
			"Could not resolve host: ",
			// Go's net.DNSError ("lookup " + name + " on " + server + ": " + err) against the
			// node-local DNS address job pods use (169.254.20.10, the guide's).
			"lookup * on 169.254.20.10:53: ",
		},
	},
	// The cluster side needs the API; the direct probe does not, and in a job
	// pod with no kubeconfig it is the whole check. So the API is optional.
	Requires:  []checks.Node{checks.Optional(apiauth.Check), checks.Optional(cluster.ListsFact), checks.Optional(AddonFact), checks.Optional(facts.APIClient), facts.ThisRunner, ProbeFact},
	Executors: []string{checks.Kubernetes},
	Network:   true,
	// Two UDP+TCP timeouts of the probe and the two lists fit well inside.
	Timeout: 15 * time.Second,
	Run: func(p *checks.Pass) error {
		in := inputs{probe: ProbeFact.Get(p)}
		if l := cluster.ListsFact.Get(p); l != nil {
			in.api, in.nodes, in.nodesErr = true, l.Nodes, l.Err("nodes")
			api := facts.APIClient.Get(p)
			in.client, in.target = api.Client, api.Key
			in.addon = AddonFact.Get(p)
		}
		return run(p, in)
	},
}

// inputs are what run reads from the facts, so a test can give them directly.
type inputs struct {
	api      bool // false when the API side was not available (api-auth failed or no kubeconfig)
	nodes    []corev1.Node
	nodesErr error
	client   kube.Interface
	target   string       // the API target's key: runners of one cluster share its view
	addon    *fetched     // the add-on as AddonFact listed it; nil: fetch it
	probe    *probeResult // the DNS server's answers (ProbeFact, probeRunner); nil: no server to ask
}

// run looks at the cluster and, when doctor is where a job resolves (or was
// told a server), takes the DNS server's answers (in.probe). The cluster's
// findings are reported first: on a cluster where no node has a Ready DNS
// pod, a probe that finds no server folds under the cluster's finding.
func run(p *checks.Pass, in inputs) error {
	ctx, cancel := budget(p.Context)
	defer cancel()

	pr := in.probe
	if !in.api && pr == nil {
		return checks.Skip("needs api-auth for the cluster side, and doctor is not where a job resolves: give --dns-server to ask a node's DNS directly")
	}

	var (
		found     []checks.Finding
		noneWorks bool
		err       = in.nodesErr
	)
	if !in.api {
		err = nil // the probe alone: the cluster side could not be looked at
	} else if err == nil {
		var v *view
		if in.addon != nil {
			v, err = in.addon.v, in.addon.err
		} else {
			v, err = in.fetch(p, ctx)
		}
		if err == nil {
			found, noneWorks = judge(in.nodes, v)
		}
	}

	causedBy := ""
	for _, f := range found {
		p.Report(f)
		// Default is the check's own severity, Error.
		if noneWorks && (f.Severity == checks.Default || f.Severity >= checks.Error) {
			causedBy = ID
		}
	}
	if pr != nil {
		for _, f := range pr.findings(causedBy) {
			p.Report(f)
		}
	}
	return err
}

// ProbeFact asks the DNS server a job resolves through (or --dns-server)
// for the runner's GitLab names as soon as the runner is known. It needs
// nothing from the cluster, and the check, which waits for the cluster's
// lists, then finds it answered instead of starting it after them: on a
// cluster with nodes the lists are the run's last answers.
var ProbeFact = &checks.Fact[*probeResult]{
	ID:       "node-dns-probe",
	Doc:      "the DNS server a job resolves through (or --dns-server), asked for the runner's GitLab names over UDP and TCP",
	Requires: []checks.Node{facts.ThisRunner},
	Network:  true,
	Compute: func(p *checks.Pass) (*probeResult, error) {
		e := facts.ThisRunner.Get(p)
		// Only for a runner the check applies to: no query for a Docker
		// runner's sake.
		if e.Executor != checks.Kubernetes {
			return nil, nil
		}
		ctx, cancel := budget(p.Context)
		defer cancel()
		return probeRunner(ctx, p.Env, e.Runner), nil
	},
}

// probeRunner asks the server a job resolves through (probeServer) for the
// names a job of runner r resolves; nil when doctor has no server to ask.
func probeRunner(ctx context.Context, env *hostio.Env, r *runnerconfig.Runner) *probeResult {
	server, why := probeServer(env)
	if server == "" {
		return nil
	}
	return probe(ctx, env, server, why, targets(r, env.Setting(settingRepositoryURL, "")))
}

// fetch lists the node-local DNS add-on once per target.
func (in inputs) fetch(p *checks.Pass, ctx context.Context) (*view, error) {
	systemPods := func(ctx context.Context) ([]corev1.Pod, error) {
		return cluster.SystemPods(p, ctx, in.target, in.client)
	}
	if in.target == "" {
		return fetch(ctx, in.client, systemPods)
	}
	type got struct {
		v   *view
		err error
	}
	g, _ := checks.Shared(p, "node-dns "+in.target, func() (got, error) {
		v, err := fetch(ctx, in.client, systemPods)
		return got{v, err}, nil
	})
	return g.v, g.err
}

// budget ends the check's own work a little before the engine's deadline, so
// what was learnt is reported instead of dropped as a timeout.
func budget(ctx context.Context) (context.Context, context.CancelFunc) {
	dl, ok := ctx.Deadline()
	if !ok {
		return context.WithTimeout(ctx, 15*time.Second)
	}
	return context.WithDeadline(ctx, dl.Add(-time.Until(dl)/10))
}

// fetched is the add-on's view as listed, or why it could not be.
type fetched struct {
	v   *view
	err error
}

// AddonFact lists the node-local DNS add-on (its DaemonSet and pods) once
// per target. Gated on api-auth instead of waiting behind it and the
// cluster lists, its requests leave with the self-review.
var AddonFact = &checks.Fact[*fetched]{
	ID:       "node-dns-addon",
	Doc:      "the node-local DNS add-on's DaemonSet and pods in kube-system, listed once per target",
	Requires: []checks.Node{checks.Gate(apiauth.Check), facts.APIClient},
	Network:  true,
	Compute: func(p *checks.Pass) (*fetched, error) {
		api := facts.APIClient.Get(p)
		ctx, cancel := budget(p.Context)
		defer cancel()
		v, err := inputs{client: api.Client, target: api.Key}.fetch(p, ctx)
		return &fetched{v, err}, nil
	},
}
