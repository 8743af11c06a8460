package kubelet

import (
	"sort"
	"sync"

	corev1 "k8s.io/api/core/v1"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts/kubefacts"
)

// KubeSystemLogReadsFact sends the log reads as soon as the node-local DNS
// add-on's pods are listed (KubeSystemRunningPodsFact), before the node list
// and the other cluster lists the check waits for: a Running add-on pod
// names its node, which is all a read needs. The check then finds each
// read done (ReadShared), instead of sending it after the slowest of the lists.
//
// Only when the add-on's Running pods are on at most MaxNodes nodes: the
// check reads only the nodes Sample picks, which takes the node list to
// know. With that few nodes named, a read the sample does not want is
// possible only when the cluster has more nodes than MaxNodes and the add-on
// runs on few of them, and it costs at most MaxNodes reads.
var KubeSystemLogReadsFact = &checks.Fact[struct{}]{
	ID:       "kube-system-log-reads",
	Doc:      "one-byte log reads of a Running node-local DNS pod per node, sent when the add-on's pods are listed",
	Requires: []checks.Node{kubefacts.AfterAPIAuth, KubeSystemRunningPodsFact, kubefacts.APIClientFact},
	Network:  true,
	Compute: func(p *checks.Pass) (struct{}, error) {
		sys := KubeSystemRunningPodsFact.Get(p)
		if sys == nil || sys.Err != nil {
			return struct{}{}, nil
		}
		nodes := earlyNodes(sys.Pods, MaxNodes)
		if len(nodes) == 0 {
			return struct{}{}, nil
		}
		api := kubefacts.APIClientFact.Get(p)
		timeout := ReadTimeout(p)
		var wg sync.WaitGroup
		for _, n := range nodes {
			pod := PodOn(n, sys.Pods)
			wg.Go(func() { ReadShared(p, p.Context, api.TapeKey, api.Client, pod, timeout) })
		}
		wg.Wait()
		return struct{}{}, nil
	},
}

// earlyNodes are the nodes a readable pod runs on, sorted; none when they
// are more than max. One pass, which stops at the node past max: at a
// thousand nodes kube-system holds a thousand pods, and a PodOn per pod
// would scan them all again for each.
func earlyNodes(pods []corev1.Pod, max int) []string {
	seen := map[string]bool{}
	var out []string
	for i := range pods {
		n := pods[i].Spec.NodeName
		if n == "" || seen[n] || !readable(&pods[i]) {
			continue
		}
		if len(out) == max {
			return nil
		}
		seen[n] = true
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
