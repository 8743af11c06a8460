package kubelet

import (
	"context"
	"fmt"
	"io"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/client/kube"
	"github.com/socialwebcomputer/doctor/checks/facts/cluster"
	"github.com/socialwebcomputer/doctor/checks/facts/kubefacts"
	"github.com/socialwebcomputer/doctor/checks/facts/nodedns"
	"github.com/socialwebcomputer/doctor/internal/hostio"
)

// MaxNodes bounds the sample: a cluster of hundreds of nodes is not asked
// hundreds of times. Ready nodes come first, the newest first: a node that
// just joined is the one behind a provider's NAT or without a certificate.
const MaxNodes = 5

// ReadTimeout bounds each log read: the check's own deadline with room
// left to report, and no more than one API call's (checks.Pass.CallTimeout).
func ReadTimeout(p *checks.Pass) time.Duration { return p.CallTimeout() }

// KubeSystemRunningPods are the node-local DNS add-on's pods in kube-system
// (any phase: PodOn and earlyNodes read only the Running ones), the list
// node-local-dns shares. A node where none runs is asked for its own
// Running kube-system pods (SystemPodsOn), one small page, only when
// kubelet-reach samples it.
type KubeSystemRunningPods struct {
	Pods []corev1.Pod
	Err  error
}

// running is the add-on's pods, from the list node-local-dns shares: the
// list itself, not a copy of its Running pods.
func running(p *checks.Pass, api *kubefacts.APIClient, timeout time.Duration) *KubeSystemRunningPods {
	ctx, cancel := context.WithTimeout(p.Context, timeout)
	defer cancel()
	pods, err := cluster.SystemPods(p, ctx, api.Key, api.Client, nodedns.PodSelector)
	return &KubeSystemRunningPods{Pods: pods, Err: err}
}

// nodePage is the limit of SystemPodsOn's page: a node runs a few
// DaemonSet pods in kube-system, and the first readable one is read.
const nodePage = 10

// SystemPodsOn are kube-system's Running pods on one node, for a sampled
// node where no add-on pod runs: the pods PodOn ranks next. One page of
// nodePage by field selector, the next only when none on it is readable
// (every one being deleted); once per target and node.
func SystemPodsOn(p *checks.Pass, ctx context.Context, target string, c kube.Interface, node string) ([]corev1.Pod, error) {
	list := func() ([]corev1.Pod, error) {
		var out []corev1.Pod
		o := metav1.ListOptions{FieldSelector: "spec.nodeName=" + node + ",status.phase=Running", Limit: nodePage}
		for range 100 {
			r, err := c.CoreV1().Pods(cluster.SystemNamespace).List(ctx, o)
			if err != nil {
				return out, err
			}
			out = append(out, r.Items...)
			if r.Continue == "" || PodOn(node, r.Items) != nil {
				return out, nil
			}
			o.Continue = r.Continue
		}
		return out, nil
	}
	if target == "" {
		return list()
	}
	return checks.Shared(p, "kube-system pods on "+node+" "+target, list)
}

// read is what one log read got, shared by the runners of a target.
type read struct {
	Err  error
	Took time.Duration
}

// Probe is one node's read.
type Probe struct {
	Node *corev1.Node
	Pod  *corev1.Pod
	Err  error
	Took time.Duration
}

// ReadShared reads one byte of the pod's log once per pod, container and
// target, whichever runners ask (N runners on one cluster read each kubelet
// once), and whether the remembered reads (remember.go), the early reads
// (early.go) or the check asks first. The read runs under ctx, the first
// asker's.
func ReadShared(p *checks.Pass, ctx context.Context, target string, c kube.Interface, pod *corev1.Pod, timeout time.Duration) read {
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

// PodOn picks the pod to read on a node: a Running node-local DNS pod, else
// any Running pod of kube-system, else any Running pod of the candidates,
// the first of its rank in the lists' order. The lists are read where they
// are, never copied into one.
func PodOn(node string, lists ...[]corev1.Pod) *corev1.Pod {
	var best *corev1.Pod
	rank := func(p *corev1.Pod) int {
		switch {
		case IsAddonPod(p):
			return 0
		case p.Namespace == nodedns.Namespace:
			return 1
		}
		return 2
	}
	for _, pods := range lists {
		for i := range pods {
			p := &pods[i]
			if p.Spec.NodeName != node || !readable(p) {
				continue
			}
			if best == nil || rank(p) < rank(best) {
				best = p
			}
		}
	}
	return best
}

// IsAddonPod tells the node-local DNS add-on's pod, which PodOn prefers.
func IsAddonPod(p *corev1.Pod) bool { return p != nil && p.Labels[nodedns.PodLabel] == nodedns.PodName }

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

// KubeSystemRunningPodsFact lists the node-local DNS add-on's pods in
// kube-system once per target, by its label (the list node-local-dns reads):
// the pods whose logs prove the apiserver reaches each node's kubelet. Gated on
// api-auth, not behind the cluster lists, the list leaves with the
// self-review: the log reads, which need its answer, are then the run's
// only second round trip.
var KubeSystemRunningPodsFact = &checks.Fact[*KubeSystemRunningPods]{
	ID:       "kube-system-running-pods",
	Doc:      "the node-local DNS add-on's pods in kube-system, listed by its label once per target: one per node is read from to reach its kubelet",
	Requires: []checks.Node{kubefacts.AfterAPIAuth, kubefacts.APIClientFact},
	Network:  true,
	Compute: func(p *checks.Pass) (*KubeSystemRunningPods, error) {
		api := kubefacts.APIClientFact.Get(p)
		return running(p, api, p.Env.APITimeout()), nil
	},
}
