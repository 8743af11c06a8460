// Package kubeletreach checks, read-only, that the apiserver reaches the
// kubelet of the nodes jobs run on: it asks for one byte of the log of a
// running pod on each sampled node, which the apiserver can only answer by
// dialling that node's kubelet on its port 10250, as it must for every
// exec and attach of a job.
package kubeletreach

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/apiauth"
	"github.com/socialwebcomputer/doctor/checks/client/kube"
	"github.com/socialwebcomputer/doctor/checks/facts"
	"github.com/socialwebcomputer/doctor/checks/facts/cluster"
	"github.com/socialwebcomputer/doctor/checks/kubeletserving"
	"github.com/socialwebcomputer/doctor/checks/nodelocaldns"
	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/internal/redact"
)

// ID names the check.
const ID = "kubelet-reach"

// MaxNodes bounds the sample: a cluster of hundreds of nodes is not asked
// hundreds of times. Ready nodes come first, the newest first: a node that
// just joined is the one behind a provider's NAT or without a certificate.
const MaxNodes = 5

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
		Fix: "Open the kubelet port 10250 from the control plane to the nodes (the provider's firewall or security group), " +
			"or have the nodes register an address the control plane can reach (kubelet --node-ip). For a node whose " +
			"kubelet has no serving certificate, see kubelet-serving.",
		Verify: "kubectl logs -n <namespace> <pod on the node> --limit-bytes=1",
		Patterns: []string{
			// k8s.io/apimachinery pkg/util/proxy/upgradeaware.go, v0.37.2: the apiserver's
			// "error dialing backend: %v" around Go's dial error for the kubelet's port; the
			// runner retries it (executors/kubernetes/kubernetes.go, v19.3.0: retryNetworkErrorsGroup).
			"error dialing backend: dial tcp *:10250: i/o timeout",
			"error dialing backend: dial tcp *:10250: connect: connection refused",
			"error dialing backend: dial tcp *:10250: connect: connection timed out",
			"error dialing backend: dial tcp *:10250: connect: no route to host",
		},
	},
	Requires:  []checks.Node{SystemPodsFact, RememberedReadsFact, EarlyReadsFact, cluster.ListsFact, facts.APIClient, facts.ThisRunner},
	Executors: []string{checks.Kubernetes},
	Network:   true,
	Run: func(p *checks.Pass) error {
		l := cluster.ListsFact.Get(p)
		if err := l.Err("nodes"); err != nil {
			return err
		}
		api := facts.APIClient.Get(p)
		e := facts.ThisRunner.Get(p)
		in := inputs{label: e.Label(), target: api.TapeKey, nodes: l.Nodes, client: api.Client, wait: kubeletserving.WaitsForReachable(e), timeout: readTimeout(p),
			cacheKey: api.Key, remembered: RememberedReadsFact.Get(p)}
		if len(in.nodes) == 0 {
			return checks.Skip("the cluster has no node: nothing to reach until one is rented")
		}
		// The pods to read from: the cluster's own in kube-system, listed once
		// per target, and the runner namespace's, already listed.
		if sys := SystemPodsFact.Get(p); sys != nil {
			in.pods, in.sysErr = sys.pods, sys.err
		}
		in.pods = append(in.pods, l.RunnerPods...)
		return run(p, in)
	},
}

// readTimeout bounds each log read: the check's own deadline with room
// left to report, and no more than one API call's.
func readTimeout(p *checks.Pass) time.Duration {
	d := p.Env.APITimeout()
	if dl, ok := p.Context.Deadline(); ok {
		if left := time.Until(dl) * 8 / 10; left < d {
			d = left
		}
	}
	return d
}

type podList struct {
	pods []corev1.Pod
	err  error
}

// running are kube-system's Running pods, from the list of kube-system's
// pods node-local-dns shares.
func running(p *checks.Pass, api *facts.API, timeout time.Duration) *podList {
	ctx, cancel := context.WithTimeout(p.Context, timeout)
	defer cancel()
	pods, err := cluster.SystemPods(p, ctx, api.Key, api.Client)
	if err != nil {
		return &podList{err: err}
	}
	l := &podList{}
	for _, pod := range pods {
		if pod.Status.Phase == corev1.PodRunning {
			l.pods = append(l.pods, pod)
		}
	}
	return l
}

// inputs are what run reads from the facts, so a test gives them directly.
type inputs struct {
	label string
	// target names the API target as a bundle keeps it (facts.API.TapeKey):
	// reads are shared by it, and their durations recorded under it.
	target  string
	nodes   []corev1.Node
	pods    []corev1.Pod // candidates, any namespace
	sysErr  error        // listing kube-system's pods failed (403 for a namespaced identity)
	client  kube.Interface
	wait    kubeletserving.Waiting
	timeout time.Duration
	// cacheKey names the target in the cache (facts.API.Key); remembered
	// is what the last run saved there, nil in a test that keeps no cache.
	cacheKey   string
	remembered *remembered
}

// read is what one log read got, shared by the runners of a target.
type read struct {
	err  error
	took time.Duration
}

// probe is one node's read.
type probe struct {
	node *corev1.Node
	pod  *corev1.Pod
	err  error
	took time.Duration
}

func run(p *checks.Pass, in inputs) error {
	sample := Sample(in.nodes, MaxNodes)
	probes := make([]*probe, len(sample))
	var wg sync.WaitGroup
	for i, n := range sample {
		pr := &probe{node: n, pod: podOn(n.Name, in.pods)}
		probes[i] = pr
		if pr.pod == nil {
			continue
		}
		wg.Go(func() {
			r := readShared(p, p.Context, in.target, in.client, pr.pod, in.timeout)
			pr.err, pr.took = r.err, r.took
		})
	}
	wg.Wait()
	remember(p, in.cacheKey, in.remembered, probes)
	of := fmt.Sprintf("%d of %d nodes sampled", len(sample), len(in.nodes))
	p.Observe(checks.Observation{Name: "kubelet_reach_nodes_sampled", Labels: map[string]string{}, Value: float64(len(sample))})
	var read, reached int
	var notChecked []string
	var forbidden error
	for _, pr := range probes {
		if pr.pod == nil {
			notChecked = append(notChecked, pr.node.Name+" (no running pod to read from)")
			continue
		}
		read++
		v := classify(pr.err)
		switch v.kind {
		case reachable:
			reached++
		case inconclusive:
			if apierrors.IsForbidden(pr.err) {
				forbidden = pr.err
			}
			notChecked = append(notChecked, fmt.Sprintf("%s (%s)", pr.node.Name, v.words))
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

// report makes one node's finding.
func report(p *checks.Pass, in inputs, pr *probe, v verdict, of string) {
	addr := KubeletAddr(pr.node)
	ev := []checks.Evidence{
		{Source: fmt.Sprintf("GET /api/v1/namespaces/%s/pods/%s/log?limitBytes=1", pr.pod.Namespace, pr.pod.Name),
			Detail: fmt.Sprintf("after %s: %s", pr.took.Round(time.Millisecond), redact.Text(errText(pr.err)))},
		{Source: "GET /api/v1/nodes/" + pr.node.Name, Detail: "kubelet at " + addr + " (" + addressKinds(pr.node) + "); " + of},
	}
	f := checks.Finding{
		Cause:    fmt.Sprintf("%s: the apiserver cannot reach the kubelet of node %s at %s: %s. %s", in.label, pr.node.Name, addr, v.words, in.wait.Consequence()),
		Evidence: ev,
	}
	if v.kind == noCertificate {
		// kubelet-serving names the CSR; this is its consequence.
		f.CausedBy = kubeletserving.ID
		f.Fix = "The kubelet of " + pr.node.Name + " has no serving certificate: approve its kubelet-serving CSR " +
			"(kubectl get csr --field-selector spec.signerName=kubernetes.io/kubelet-serving), and run an approver for them."
	} else {
		f.Fix = fmt.Sprintf("Open port %s of node %s to the control plane (the provider's firewall or security group, or the "+
			"node's own), or make the node register an address the control plane reaches (kubelet --node-ip); then "+
			"kubectl logs -n %s %s --limit-bytes=1 answers.", portOf(addr), pr.node.Name, pr.pod.Namespace, pr.pod.Name)
	}
	p.Report(f)
}

func errText(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
}

// readShared reads one byte of the pod's log once per pod, container and
// target, whichever runners ask (N runners on one cluster read each kubelet
// once), and whether the remembered reads (remember.go), the early reads
// (early.go) or the check asks first. The read runs under ctx, the first
// asker's.
func readShared(p *checks.Pass, ctx context.Context, target string, c kube.Interface, pod *corev1.Pod, timeout time.Duration) read {
	key := "kubelet-reach " + target + " " + pod.Namespace + "/" + pod.Name + " " + containerOf(pod)
	r, _ := checks.Shared(p, key, func() (read, error) {
		t0 := time.Now()
		err := readOneByte(ctx, c, pod, timeout)
		return read{err, hostio.Elapsed(p.Env, key, time.Since(t0))}, nil
	})
	return r
}

// readOneByte asks for at most one byte of the pod's log: the same path
// (pods/log, get) FF_WAIT_FOR_POD_TO_BE_REACHABLE polls with.
func readOneByte(ctx context.Context, c kube.Interface, pod *corev1.Pod, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	one := int64(1)
	rc, err := c.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, &corev1.PodLogOptions{Container: containerOf(pod), LimitBytes: &one}).Stream(ctx)
	if err != nil {
		// client-go's own Timeout and this context race to end a read
		// that hangs: either is doctor's deadline, not the apiserver's answer.
		if ctx.Err() != nil || hostio.IsTimeout(err) {
			return &noAnswer{after: timeout, err: err}
		}
		return err
	}
	defer rc.Close()
	_, err = io.Copy(io.Discard, io.LimitReader(rc, 64))
	if err != nil && (ctx.Err() != nil || hostio.IsTimeout(err)) {
		return &noAnswer{after: timeout, err: err}
	}
	return err
}

// noAnswer is doctor's own deadline: the apiserver did not answer in time,
// which is what a dial to a kubelet that drops packets looks like.
type noAnswer struct {
	after time.Duration
	err   error
}

// Error names the deadline only: which of doctor's two equal deadlines
// (the read's context, client-go's Timeout) ended the read first is a race,
// and its words ("context deadline exceeded", "Client.Timeout exceeded
// while awaiting headers") would make the same finding read two ways. The
// evidence's source names the request.
func (e *noAnswer) Error() string {
	return fmt.Sprintf("no answer within %s", e.after)
}

func (e *noAnswer) Unwrap() error { return e.err }

// Sample picks at most max nodes: Ready ones first, the newest first, then
// by name for a stable output.
func Sample(nodes []corev1.Node, max int) []*corev1.Node {
	out := make([]*corev1.Node, len(nodes))
	for i := range nodes {
		out[i] = &nodes[i]
	}
	sort.SliceStable(out, func(i, j int) bool {
		ri, rj := cluster.NodeReady(out[i]), cluster.NodeReady(out[j])
		if ri != rj {
			return ri
		}
		ti, tj := out[i].CreationTimestamp.Time, out[j].CreationTimestamp.Time
		if !ti.Equal(tj) {
			return ti.After(tj)
		}
		return out[i].Name < out[j].Name
	})
	if len(out) > max {
		out = out[:max]
	}
	return out
}

// podOn picks the pod to read on a node: a Running node-local DNS pod, else
// any Running pod of kube-system, else any Running pod of the candidates.
func podOn(node string, pods []corev1.Pod) *corev1.Pod {
	var best *corev1.Pod
	rank := func(p *corev1.Pod) int {
		switch {
		case p.Labels[nodelocaldns.PodLabel] == nodelocaldns.PodName:
			return 0
		case p.Namespace == nodelocaldns.Namespace:
			return 1
		}
		return 2
	}
	for i := range pods {
		p := &pods[i]
		if p.Spec.NodeName != node || !readable(p) {
			continue
		}
		if best == nil || rank(p) < rank(best) {
			best = p
		}
	}
	return best
}

// readable is a pod whose log its kubelet serves: Running, not being deleted.
func readable(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil
}

// containerOf is a running container of the pod, so the kubelet has a log
// to serve; the first one when none reports running.
func containerOf(p *corev1.Pod) string {
	for _, s := range p.Status.ContainerStatuses {
		if s.State.Running != nil {
			return s.Name
		}
	}
	if len(p.Spec.Containers) > 0 {
		return p.Spec.Containers[0].Name
	}
	return ""
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

// SystemPodsFact lists kube-system's running pods once per target, the pods
// whose logs prove the apiserver reaches each node's kubelet. Gated on
// api-auth, not behind the cluster lists, the list leaves with the
// self-review: the log reads, which need its answer, are then the run's
// only second round trip.
var SystemPodsFact = &checks.Fact[*podList]{
	ID:       "kube-system-running-pods",
	Doc:      "kube-system's Running pods, listed once per target: one per node is read from to reach its kubelet",
	Requires: []checks.Node{checks.Gate(apiauth.Check), facts.APIClient},
	Network:  true,
	Compute: func(p *checks.Pass) (*podList, error) {
		api := facts.APIClient.Get(p)
		return running(p, api, p.Env.APITimeout()), nil
	},
}
