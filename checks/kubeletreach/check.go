// Package kubeletreach checks, read-only, that the apiserver reaches the
// kubelet of the nodes jobs run on: it asks for one byte of the log of a
// running pod on each sampled node, which the apiserver can only answer by
// dialling that node's kubelet on its port 10250, as it must for every
// exec and attach of a job.
package kubeletreach

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/client/kube"
	"github.com/socialwebcomputer/doctor/checks/facts/cluster"
	"github.com/socialwebcomputer/doctor/checks/facts/configfacts"
	"github.com/socialwebcomputer/doctor/checks/facts/kubefacts"
	"github.com/socialwebcomputer/doctor/checks/facts/kubelet"
	"github.com/socialwebcomputer/doctor/internal/fixcode"
	"github.com/socialwebcomputer/doctor/internal/redact"
	"github.com/socialwebcomputer/doctor/runnerconfig"
)

// ID names the check.
const ID = "kubelet-reach"

var Check = &checks.Check{
	ID:       ID,
	Title:    "The apiserver reaches the kubelet of the nodes jobs run on",
	Severity: checks.Error,
	Doc: checks.Doc{
		Cause: "Every exec, attach and log of a job goes from the apiserver to the node's kubelet at its address on port " +
			"10250. A rented node behind the provider's NAT, or a firewall that keeps 10250 closed to the control plane, " +
			"passes every other check: it is Ready, it runs pods, and jobs placed on it fail the moment the runner attaches. " +
			"doctor asks, read-only, for one byte of the log of a running pod on each sampled node (the node-local DNS pod " +
			"where there is one), which the apiserver can only serve through that kubelet. It remembers the pods it read " +
			"(--cache-dir), and the next run sends those reads with its first requests instead of after kube-system's pod " +
			"list: one round trip fewer. The pods are still chosen from that run's lists, so the cache never changes a finding.",
		// The apiserver's upgrade proxy wording ("error dialing backend: %v",
		// k8s.io/apimachinery/pkg/util/proxy/upgradeaware.go) as the runner's
		// job log shows it; "error dialing backend" and "connection refused"
		// are in retryNetworkErrorsGroup (executors/kubernetes/kubernetes.go, v19.3.0).
		Symptom: "ERROR: Job failed (system failure): prepare environment: setting up trapping scripts on emptyDir: error dialing backend: dial tcp 203.0.113.7:10250: i/o timeout" + checks.PrepareHint,
		Fix: checks.Text("Open the kubelet port 10250 from the control plane to the nodes (the provider's firewall or security group), " +
			"or have the nodes register an address the control plane can reach (kubelet --node-ip). For a node whose " +
			"kubelet has no serving certificate, see kubelet-serving."),
		Verify: checks.Target(checks.Say("Read a byte of the log of a pod on the node (NODE, its name): the apiserver reaches its kubelet when it answers:"),
			checks.Sh(`NODE=rented-1
POD=$(`+checks.CatalogKubectl+` get pods -A --field-selector spec.nodeName="$NODE" -o jsonpath='{.items[0].metadata.namespace}/{.items[0].metadata.name}')
`+checks.CatalogKubectl+` logs -n "${POD%%/*}" "${POD#*/}" --limit-bytes=1`)),
		Patterns: []string{
			// k8s.io/apimachinery pkg/util/proxy/upgradeaware.go, v0.37.2: the apiserver's
			// "error dialing backend: %v" around Go's dial error for the kubelet's port; the
			// runner retries it (executors/kubernetes/kubernetes.go, v19.3.0: retryNetworkErrorsGroup).
			"error dialing backend: dial tcp *:10250: i/o timeout",
			"error dialing backend: dial tcp *:10250: connect: connection refused",
			"error dialing backend: dial tcp *:10250: connect: connection timed out",
			"error dialing backend: dial tcp *:10250: connect: no route to host",
		},
		Signs: []checks.Sign{
			// The apiserver's connection to a kubelet (port 10250, or its "error dialing backend:
			// %v", k8s.io/apimachinery pkg/util/proxy/upgradeaware.go, v0.37.2) fails in the
			// network, in any wording Go gives it: "error dialing backend: EOF" (the runner retries
			// it, CHANGELOG v13.x "Retry Kubernetes commands when \"error dialing backend: EOF\"").
			{Endpoints: []string{checks.EndpointKubelet}, Causes: []string{checks.CauseTimeout, checks.CauseRefused, checks.CauseUnreachable, checks.CauseReset}},
		},
	},
	Requires:  []checks.Node{kubelet.KubeSystemRunningPodsFact, kubelet.RememberedReadsFact, kubelet.KubeSystemLogReadsFact, cluster.ListsFact, kubefacts.APIClientFact, configfacts.RunnerEntryFact},
	Executors: []string{checks.Kubernetes},
	Network:   true,
	Run: func(p *checks.Pass) error {
		l := cluster.ListsFact.Get(p)
		if err := l.Err("nodes"); err != nil {
			return err
		}
		api := kubefacts.APIClientFact.Get(p)
		e := configfacts.RunnerEntryFact.Get(p)
		in := inputs{label: e.Label(), target: api.TapeKey, nodes: l.Nodes, client: api.Client, wait: runnerconfig.WaitsForReachable(e.Runner), timeout: kubelet.ReadTimeout(p),
			cacheKey: api.Key, remembered: kubelet.RememberedReadsFact.Get(p), kubectl: api.Kubectl()}
		if len(in.nodes) == 0 {
			return checks.Skip("the cluster has no node: nothing to reach until one is rented")
		}
		// The pods to read from: the node-local DNS add-on's in kube-system,
		// listed once per target; on a sampled node without one, that node's
		// Running kube-system pods (one small page); and the runner
		// namespace's, already listed. Each list is read where it is.
		if sys := kubelet.KubeSystemRunningPodsFact.Get(p); sys != nil {
			in.pods, in.sysErr = sys.Pods, sys.Err
		}
		in.runnerPods = l.RunnerPods
		in.podsOn = func(ctx context.Context, node string) ([]corev1.Pod, error) {
			return kubelet.SystemPodsOn(p, ctx, api.Key, api.Client, node)
		}
		return run(p, in)
	},
}

// inputs are what run reads from the facts, so a test gives them directly.
type inputs struct {
	label string
	// target names the API target as a bundle keeps it (kubefacts.APIClient.TapeKey):
	// reads are shared by it, and their durations recorded under it.
	target     string
	nodes      []corev1.Node
	pods       []corev1.Pod // the node-local DNS add-on's, in kube-system
	runnerPods []corev1.Pod // the runner namespace's
	sysErr     error        // listing kube-system's pods failed (403 for a namespaced identity)
	kubectl    fixcode.Cmd  // the runner's cluster's kubectl (kubefacts.APIClient.Kubectl)
	// podsOn lists a node's Running kube-system pods, for a node where no
	// add-on pod runs; nil: none but pods and runnerPods are candidates.
	podsOn  func(ctx context.Context, node string) ([]corev1.Pod, error)
	client  kube.Interface
	wait    runnerconfig.Waiting
	timeout time.Duration
	// cacheKey names the target in the cache (kubefacts.APIClient.Key); remembered
	// is what the last run saved there, nil in a test that keeps no cache.
	cacheKey   string
	remembered *kubelet.RememberedReads
}

func run(p *checks.Pass, in inputs) error {
	sample := kubelet.Sample(in.nodes, kubelet.MaxNodes)
	probes := make([]*kubelet.Probe, len(sample))
	var wg sync.WaitGroup
	for i, n := range sample {
		pr := &kubelet.Probe{Node: n}
		probes[i] = pr
		wg.Go(func() {
			if pr.Pod = podOn(p, in, n.Name); pr.Pod == nil {
				return
			}
			r := kubelet.ReadShared(p, p.Context, in.target, in.client, pr.Pod, in.timeout)
			pr.Err, pr.Took = r.Err, r.Took
		})
	}
	wg.Wait()
	kubelet.Remember(p, in.cacheKey, in.remembered, probes)
	of := fmt.Sprintf("%d of %s sampled", len(sample), checks.Count(len(in.nodes), "node", "nodes"))
	p.Observe(checks.Observation{Name: "kubelet_reach_nodes_sampled", Labels: map[string]string{}, Value: float64(len(sample))})
	var read, reached int
	var notChecked []string
	var forbidden error
	for _, pr := range probes {
		if pr.Pod == nil {
			notChecked = append(notChecked, pr.Node.Name+" (no running pod to read from)")
			continue
		}
		read++
		v := kubelet.Classify(pr.Err)
		switch v.Kind {
		case kubelet.Reachable:
			reached++
		case kubelet.Inconclusive:
			if apierrors.IsForbidden(pr.Err) {
				forbidden = pr.Err
			}
			notChecked = append(notChecked, fmt.Sprintf("%s (%s)", pr.Node.Name, v.Words))
		default:
			report(p, in, pr, v, of)
		}
	}
	if read == 0 {
		why := ""
		if in.sysErr != nil {
			why = fmt.Sprintf("; listing kube-system's running pods failed: %v", in.sysErr)
		}
		return checks.Skip("none of the %s runs a pod doctor can read the log of%s: %s", of, why, strings.Join(notChecked, ", "))
	}
	if reached+len(notChecked) == len(probes) && reached == 0 && forbidden != nil {
		return fmt.Errorf("the identity may not get pods/log, so doctor cannot ask the apiserver to reach a kubelet (%s): %v", of, forbidden)
	}
	return nil
}

// podOn is the pod to read on a node, as kubelet.PodOn ranks them: an
// add-on pod, else a Running kube-system pod of the node's own page (asked
// only here, when the add-on runs none there), else a runner pod.
func podOn(p *checks.Pass, in inputs, node string) *corev1.Pod {
	pod := kubelet.PodOn(node, in.pods, in.runnerPods)
	if kubelet.IsAddonPod(pod) || in.podsOn == nil || in.sysErr != nil {
		return pod
	}
	onNode, err := in.podsOn(p.Context, node)
	if err != nil {
		p.Env.Logf(2, "kubelet-reach: kube-system's Running pods on %s: %v", node, err)
	}
	return kubelet.PodOn(node, in.pods, onNode, in.runnerPods)
}

// report makes one node's finding.
func report(p *checks.Pass, in inputs, pr *kubelet.Probe, v kubelet.Verdict, of string) {
	addr := KubeletAddr(pr.Node)
	ev := []checks.Evidence{
		{Source: fmt.Sprintf("GET /api/v1/namespaces/%s/pods/%s/log?limitBytes=1", pr.Pod.Namespace, pr.Pod.Name),
			Detail: fmt.Sprintf("after %s: %s", pr.Took.Round(time.Millisecond), redact.Text(errText(pr.Err)))},
		{Source: "GET /api/v1/nodes/" + pr.Node.Name, Detail: "kubelet at " + addr + " (" + addressKinds(pr.Node) + "); " + of},
	}
	f := checks.Finding{
		Cause:    fmt.Sprintf("%s: the apiserver cannot reach the kubelet of node %s at %s: %s. %s", in.label, pr.Node.Name, addr, v.Words, in.wait.Consequence()),
		Evidence: ev,
	}
	if v.Kind == kubelet.NoCertificate {
		// kubelet-serving names the CSR; this is its consequence.
		f.CausedBy = "kubelet-serving"
		f.Fix = checks.Steps{
			checks.Say("The kubelet of " + pr.Node.Name + " has no serving certificate: approve its kubelet-serving CSR " +
				"(kubelet-serving names it), and run an approver for them. The CSRs:"),
			checks.Commands(in.kubectl.Arg("get", "csr", "--field-selector", "spec.signerName=kubernetes.io/kubelet-serving")),
		}
	} else {
		f.Fix = checks.Steps{
			checks.Say(fmt.Sprintf("Open port %s of node %s to the control plane (the provider's firewall or security group, or the "+
				"node's own), or make the node register an address the control plane reaches (kubelet --node-ip). Then this answers:",
				portOf(addr), pr.Node.Name)),
			readByte(in.kubectl, pr.Pod.Namespace, pr.Pod.Name),
		}
	}
	p.Report(f)
}

// readByte is the read doctor made: one byte of the pod's log, which the
// apiserver serves through the node's kubelet. The pod's namespace and
// name come from the API, which takes a DNS-1123 label and subdomain
// (kubernetes pkg/apis/core/validation/validation.go, v1.37.2:
// ValidateNamespaceName, ValidatePodName); a saved bundle can hold
// anything, and a name that is none gets no command.
func readByte(kubectl fixcode.Cmd, ns, pod string) checks.Step {
	if err := fixcode.NamespaceName(ns); err != nil {
		return checks.Withheld(fmt.Errorf("the pod's namespace is %w", err))
	}
	if err := fixcode.ObjectName(pod); err != nil {
		return checks.Withheld(fmt.Errorf("the pod's name is %w", err))
	}
	return checks.Commands(kubectl.Arg("logs", "-n", ns, pod, "--limit-bytes=1"))
}

func errText(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
}

// KubeletAddr is where the apiserver dials the node's kubelet: its first
// address in the apiserver's default preference (--kubelet-preferred-
// address-types Hostname,InternalDNS,InternalIP,ExternalDNS,ExternalIP) and
// the port the kubelet reports.
func KubeletAddr(n *corev1.Node) string {
	port := n.Status.DaemonEndpoints.KubeletEndpoint.Port
	if port == 0 {
		port = 10250
	}
	for _, t := range []corev1.NodeAddressType{corev1.NodeHostName, corev1.NodeInternalDNS, corev1.NodeInternalIP, corev1.NodeExternalDNS, corev1.NodeExternalIP} {
		for _, a := range n.Status.Addresses {
			if a.Type == t && a.Address != "" {
				return fmt.Sprintf("%s:%d", a.Address, port)
			}
		}
	}
	return fmt.Sprintf("%s:%d", n.Name, port)
}

func addressKinds(n *corev1.Node) string {
	var s []string
	for _, a := range n.Status.Addresses {
		s = append(s, string(a.Type)+" "+a.Address)
	}
	if len(s) == 0 {
		return "no address reported"
	}
	return strings.Join(s, ", ")
}

func portOf(addr string) string {
	if i := strings.LastIndex(addr, ":"); i >= 0 {
		return addr[i+1:]
	}
	return "10250"
}
