// Package nodelocaldns checks the DNS a job pod resolves through: the node's
// own CoreDNS at 169.254.20.10, run by a DaemonSet on labelled nodes. From
// the API it checks every node has one; on a node or in a job pod (or with
// --dns-server) it also asks that server directly.
package nodelocaldns

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/client/kube"
	"github.com/socialwebcomputer/doctor/checks/facts/cluster"
	"github.com/socialwebcomputer/doctor/checks/facts/configfacts"
	"github.com/socialwebcomputer/doctor/checks/facts/kubefacts"
	"github.com/socialwebcomputer/doctor/checks/facts/nodedns"
	"github.com/socialwebcomputer/doctor/internal/fixcode"
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
		Fix: checks.Target(
			checks.Say("Which nodes run one:"),
			checks.Sh(checks.CatalogKubectl+" -n kube-system get pods -l app.kubernetes.io/name=socialweb-node-dns -o wide"),
			checks.Say("A node without the label joined with an older user_data: replace it with one booted from the current user_data, or label it (NODE, its name):"),
			checks.Sh("NODE=rented-1\n"+checks.CatalogKubectl+` label node "$NODE" socialweb.computer/node-local-dns=true`),
			checks.Say("No DaemonSet: the provider's add-on pass did not run; on the host that runs the provider for this cluster, its log says "+
				"\"applied the node network add-ons\" when it has.")),
		Verify: checks.Target(checks.Sh(checks.CatalogKubectl+" get nodes -L socialweb.computer/node-local-dns\n"+
			checks.CatalogKubectl+" -n kube-system get pods -l app.kubernetes.io/name=socialweb-node-dns -o wide"),
			checks.Say("In a job pod (GITLAB_HOST, GitLab's name):"),
			checks.Sh("GITLAB_HOST=gitlab.example.com\nnslookup \"$GITLAB_HOST\" 169.254.20.10")),
		Patterns: []string{
			// "Could not resolve host: " is Doc.Ambiguous: it has other causes.
			// Go's net.DNSError ("lookup " + name + " on " + server + ": " + err) against the
			// node-local DNS address job pods use (169.254.20.10, the guide's).
			"lookup * on 169.254.20.10:53: ",
		},
		Ambiguous: []checks.Ambiguous{
			// docs/executors/kubernetes/troubleshooting.md, v19.3.0: "fatal: unable to access
			// 'https://gitlab-ci-token:token@example.com/repo/proj.git/': Could not resolve host: example.com";
			// older curl "Couldn't resolve host '%s'". One text, several causes (ambiguous.md §1).
			{Pattern: "Could not resolve host: ", Or: resolveCauses, Tell: resolveTell},
			{Pattern: "Couldn't resolve host '", Or: resolveCauses, Tell: resolveTell},
		},
	},
	// The cluster side needs the API; the direct probe does not, and in a job
	// pod with no kubeconfig it is the whole check. So the API is optional.
	Requires:  []checks.Node{checks.Optional(checks.Ref("api-auth")), checks.Optional(cluster.ListsFact), checks.Optional(nodedns.AddonFact), checks.Optional(kubefacts.APIClientFact), configfacts.RunnerEntryFact, nodedns.ProbeFact},
	Executors: []string{checks.Kubernetes},
	Network:   true,
	// Two UDP+TCP timeouts of the probe and the two lists fit well inside.
	Timeout: 15 * time.Second,
	Run: func(p *checks.Pass) error {
		in := inputs{probe: nodedns.ProbeFact.Get(p), kubectl: fixcode.Command("kubectl")}
		if l := cluster.ListsFact.Get(p); l != nil {
			in.api, in.nodes, in.nodesErr = true, l.Nodes, l.Err("nodes")
			api := kubefacts.APIClientFact.Get(p)
			in.client, in.target, in.kubectl = api.Client, api.Key, api.Kubectl()
			in.addon = nodedns.AddonFact.Get(p)
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
	target   string         // the API target's key: runners of one cluster share its view
	addon    *nodedns.Addon // the add-on as AddonFact listed it; nil: fetch it
	probe    *nodedns.Probe // the DNS server's answers (ProbeFact, probeRunner); nil: no server to ask
	kubectl  fixcode.Cmd    // the runner's cluster's kubectl (kubefacts.APIClient.Kubectl)
}

// run looks at the cluster and, when doctor is where a job resolves (or was
// told a server), takes the DNS server's answers (in.probe). The cluster's
// findings are reported first: on a cluster where no node has a Ready DNS
// pod, a probe that finds no server folds under the cluster's finding.
var resolveCauses = []string{"gitlab-reachability",
	checks.NotACheck + "the job image's musl (Alpine) resolver, which fails the first lookup after idle under ndots:5",
	checks.NotACheck + "the name itself: known only to the runner host's /etc/hosts or a zone pods do not use"}

const resolveTell = "node-local-dns probes the resolver job pods use for the GitLab host and kubernetes.default (timeout, refused, NXDOMAIN); " +
	"gitlab-reachability resolves the name from the runner host; a failure only in Alpine images, intermittent, with both probes " +
	"healthy, is musl's resolver; a name that fails everywhere is the name"

func run(p *checks.Pass, in inputs) error {
	ctx, cancel := nodedns.Budget(p.Context)
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
		var v *nodedns.AddonObjects
		if in.addon != nil {
			v, err = in.addon.Objects, in.addon.Err
		} else {
			v, err = nodedns.AddonOnce(p, ctx, in.client, in.target)
		}
		if err == nil {
			found, noneWorks = judge(in.nodes, v, in.kubectl)
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
		for _, f := range findings(pr, causedBy, in.kubectl) {
			p.Report(f)
		}
	}
	return err
}
