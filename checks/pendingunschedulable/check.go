// Package pendingunschedulable diagnoses pods that wait while nodes exist.
package pendingunschedulable

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/client/kube/keep"
	"github.com/socialwebcomputer/doctor/checks/facts/cluster"
	"github.com/socialwebcomputer/doctor/internal/fixcode"
	"github.com/socialwebcomputer/doctor/internal/redact"
)

var Check = &checks.Check{
	ID:       "pending-unschedulable",
	Title:    "Pending job pods fit the nodes that exist",
	Severity: checks.Error,
	Doc: checks.Doc{
		Cause: "The scheduler places a pod on its requests. A request (build, helper and service containers summed) " +
			"larger than any node the market rents is a pod that waits forever, and a bill for a node that never " +
			"gets used. A limit with no request is the request.",
		Symptom: "Pod Pending forever on a cluster whose nodes exist; kubectl describe pod shows FailedScheduling: 0/1 nodes are available: 1 Insufficient cpu.",
		Fix:     checks.Text("Lower cpu_request / memory_request (and helper_*, service_*) in [runners.kubernetes] below the allocatable of the node size the market rents, or rent a larger size."),
		Verify: checks.Target(checks.Say("The events of the job's pod (POD, its name), and what each node can hold:"),
			checks.Sh(`POD=runner-abc-project-1-concurrent-0
`+checks.CatalogKubectl+` describe pod -n "$RUNNER_NAMESPACE" "$POD" | sed -n '/Events/,$p'
`+checks.CatalogKubectl+` get nodes -o custom-columns=NAME:.metadata.name,CPU:.status.allocatable.cpu,MEM:.status.allocatable.memory`)),
		Patterns: []string{
			// executors/kubernetes/util.go, v19.3.0 (getPodPhase, "\t%s: %q") or kubernetes.go's
			// "Event retrieved from the cluster: %s", with kube-scheduler's NoNodeAvailableMsg
			// "0/%v nodes are available" (pkg/scheduler/framework/types.go, v1.37.2).
			"0/* nodes are available: *Insufficient ",
		},
	},
	Requires:  []checks.Node{cluster.ListsFact},
	Executors: []string{checks.Kubernetes},
	Explains:  []string{"pending-no-node"},
	Network:   true,
	Run:       run,
}

func run(p *checks.Pass) error {
	l := cluster.ListsFact.Get(p)
	if err := l.Err("runner pods", "nodes"); err != nil {
		return err
	}
	if len(l.Nodes) == 0 {
		return nil // nothing to fit: pending-no-node's case
	}
	largest := cluster.LargestAllocatable(l.Nodes)
	for i := range l.RunnerPods {
		pod := &l.RunnerPods[i]
		if pod.Status.Phase != corev1.PodPending || !cluster.Unbound(pod) || !cluster.IsJobPod(pod) {
			continue
		}
		diagnose(p, l, pod, largest)
	}
	return nil
}

func diagnose(p *checks.Pass, l *cluster.Lists, pod *corev1.Pod, largest corev1.ResourceList) {
	req := cluster.Requests(pod)
	src := "pod " + pod.Namespace + "/" + pod.Name
	ev := []checks.Evidence{
		{Source: src, Detail: "requests " + list(req)},
		{Source: "largest node allocatable", Detail: fmt.Sprintf("%s (of %s)", list(largest), checks.Count(len(l.Nodes), "node", "nodes"))},
	}
	for _, e := range l.PendingEvents[pod.Namespace+"/"+pod.Name] {
		if e.Reason == "FailedScheduling" {
			ev = append(ev, checks.Evidence{Source: "event FailedScheduling", Detail: keep.Message(e.Message)})
		}
	}
	if over := cluster.Exceeds(req, largest); len(over) > 0 {
		p.Report(checks.Finding{
			Cause: fmt.Sprintf("%s is Pending while nodes exist: its requests fit no node size (%s). It waits forever, and the node rented for it is billed unused.",
				src, strings.Join(over, "; ")),
			Evidence: ev,
		})
		return
	}
	if len(ev) > 2 {
		p.Report(checks.Finding{
			Cause:    fmt.Sprintf("%s is Pending while nodes exist, and the scheduler says why: %s", src, ev[2].Detail),
			Evidence: ev,
			Fix:      checks.Text("Act on the scheduler's reason: taints, node selectors, affinity or requests that no node satisfies."),
		})
		return
	}
	if err := l.Errs["events"]; err != nil {
		// The events could not be read: say so, never "no event says why".
		p.Report(checks.Finding{
			Severity: checks.Warning,
			Cause:    fmt.Sprintf("%s is Pending while nodes exist and its requests fit the largest node; its events could not be listed, so the scheduler's reason is not known here.", src),
			Evidence: append(ev, checks.Evidence{Source: "list events", Detail: redact.Text(err.Error())}),
			Fix: checks.Steps{checks.Say("The pod's FailedScheduling event, with a credential that may read events (this kubeconfig's may not):"),
				describePod(cluster.ListsFact.Get(p).Kubectl(), pod)},
		})
		return
	}
	p.Report(checks.Finding{
		Severity: checks.Warning,
		Cause:    fmt.Sprintf("%s is Pending while nodes exist, its requests fit the largest node, and no scheduler event says why yet.", src),
		Evidence: ev,
		Fix: checks.Steps{checks.Say("Watch the pod's events for a FailedScheduling one; a node that is not Ready, or taints, hold it:"),
			describePod(cluster.ListsFact.Get(p).Kubectl(), pod)},
	})
}

// describePod is the command that shows pod's events with kubectl, a
// command aimed at the runner's cluster. Its namespace and name are the
// apiserver's, each one word; one that is not a name gets no command.
func describePod(kubectl fixcode.Cmd, pod *corev1.Pod) checks.Step {
	if err := fixcode.NamespaceName(pod.Namespace); err != nil {
		return checks.Withheld(fmt.Errorf("the pod's namespace is %w", err))
	}
	if err := fixcode.ObjectName(pod.Name); err != nil {
		return checks.Withheld(fmt.Errorf("the pod's name is %w", err))
	}
	return checks.Commands(kubectl.Arg("describe", "pod", "-n", pod.Namespace, pod.Name))
}

func list(r corev1.ResourceList) string {
	var parts []string
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if q, ok := r[name]; ok {
			parts = append(parts, fmt.Sprintf("%s=%s", name, q.String()))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
