// Package pendingnonode diagnoses job pods that wait for a node.
package pendingnonode

import (
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts/cluster"
	"github.com/socialwebcomputer/doctor/checks/facts/configfacts"
	"github.com/socialwebcomputer/doctor/runnerconfig"
)

// podStartCauses are what keeps a job pod from starting within poll_timeout,
// besides a missing node; podStartTell what tells them apart.
var podStartCauses = []string{"pending-unschedulable", "config-lint", "image-pull", checks.NotACheck + "a node in trouble (NotReady, PLEG) under the pod"}

const podStartTell = "the lines the runner printed while it waited: `Unschedulable: \"0/N nodes are available: … Insufficient …\"` is pending-unschedulable; " +
	"no node at all, or a node group at zero, pending-no-node; `ContainersNotReady` with pulls (`Back-off pulling image`) image-pull; " +
	"a pod that was starting when poll_timeout ran out config-lint; `(last phase: …)` on v19 and `Event retrieved from the cluster:` lines name the state"

var Check = &checks.Check{
	ID:       "pending-no-node",
	Title:    "Job pods get a node within poll_timeout",
	Severity: checks.Error,
	Doc: checks.Doc{
		Cause: "The cluster rests at zero nodes: a job pod is Pending until the market rents, boots and joins a node, " +
			"which takes minutes and is normal. Past poll_timeout the runner gives up. With zero nodes for that long, " +
			"nothing rented a node: the provider is not running, or the market lost the RFP.",
		// executors/kubernetes/util.go, v19.3.0: "timed out waiting for pod to start (last phase: %s)".
		Symptom: "ERROR: Job failed (system failure): prepare environment: waiting for pod running: timed out waiting for pod to start (last phase: Pending)" + checks.PrepareHint,
		Fix: checks.Target(
			checks.Say("Compare the Pending pods with the nodes: a Pending pod the scale decision never sees is a provider that is not running; start it, or raise poll_timeout to cover a node boot (3600)."),
			checks.Sh(checks.CatalogKubectl+" get pods -A --field-selector=status.phase=Pending\n"+checks.CatalogKubectl+" get nodes")),
		Verify: checks.Target(checks.Say("Watch the job pods get a node (Ctrl-C ends it):"),
			checks.Sh(checks.CatalogKubectl+` get pods -n "$RUNNER_NAMESPACE" -o wide -w`)),
		// Not "no nodes available to schedule pods" (kube-scheduler's ErrNoNodesAvailable, which
		// getPodPhase prints as a condition): a cluster scaling from zero prints it on every
		// healthy job while its node boots (testdata/logs/healthy-kubernetes-job.log).
		Ambiguous: []checks.Ambiguous{
			// executors/kubernetes/util.go: errors.New("timed out waiting for pod to start") v15.0.0,
			// fmt.Errorf("timed out waiting for pod to start (last phase: %s)", lastPhase) v19.3.0:
			// poll_timeout ran out, whatever kept the pod (ambiguous.md §6).
			{Pattern: "timed out waiting for pod to start", Or: podStartCauses, Tell: podStartTell},
			// The same before v13.x, in one word: docs/executors/kubernetes.md, v13.12.0, "Build failed
			// (system failure): timedout waiting for pod to start".
			{Pattern: "timedout waiting for pod to start", Or: podStartCauses, Tell: podStartTell},
		},
	},
	Requires:  []checks.Node{cluster.ListsFact, configfacts.RunnerEntryFact},
	Executors: []string{checks.Kubernetes},
	Network:   true,
	Run:       run,
}

func run(p *checks.Pass) error {
	l := cluster.ListsFact.Get(p)
	if err := l.Err("runner pods", "nodes"); err != nil {
		return err
	}
	poll := runnerconfig.PollTimeout(configfacts.RunnerEntryFact.Get(p).Runner)
	now := p.Env.Now()
	var waiting []*corev1.Pod
	for i := range l.RunnerPods {
		pod := &l.RunnerPods[i]
		if pod.Status.Phase == corev1.PodPending && cluster.Unbound(pod) && cluster.IsJobPod(pod) {
			waiting = append(waiting, pod)
		}
	}
	if len(waiting) == 0 {
		return nil
	}
	sort.Slice(waiting, func(i, j int) bool {
		return waiting[i].CreationTimestamp.Before(&waiting[j].CreationTimestamp)
	})
	oldest := cluster.Age(waiting[0].CreationTimestamp.Time, now)
	counts := checks.Evidence{Source: "GET pods, nodes", Detail: fmt.Sprintf("%s Pending with no node in %s (%d Pending cluster-wide); %s",
		checks.Count(len(waiting), "job pod", "job pods"), l.Namespace, len(l.PendingPods), checks.Count(len(l.Nodes), "node", "nodes"))}
	var ev []checks.Evidence
	for i, pod := range waiting {
		if i == 5 {
			ev = append(ev, checks.Evidence{Source: "…", Detail: fmt.Sprintf("%d more", len(waiting)-5)})
			break
		}
		ev = append(ev, checks.Evidence{Source: "pod " + pod.Namespace + "/" + pod.Name,
			Detail: fmt.Sprintf("Pending %s, no node, created %s", round(cluster.Age(pod.CreationTimestamp.Time, now)), pod.CreationTimestamp.UTC().Format(time.RFC3339))})
	}
	ev = append([]checks.Evidence{counts}, ev...)
	switch {
	case oldest < poll && len(l.Nodes) == 0:
		p.Report(checks.Finding{
			Severity: checks.Info,
			Cause: fmt.Sprintf("%s Pending for up to %s with zero nodes: normal, a rented node is booting (poll_timeout %s).",
				checks.Count(len(waiting), "job pod", "job pods"), round(oldest), poll),
			Evidence: ev,
			Fix:      checks.Text("None: the gap between \"pod Pending\" and \"node Ready\" is a market round trip plus a VM boot."),
		})
	case oldest >= poll && len(l.Nodes) == 0:
		p.Report(checks.Finding{
			Cause: fmt.Sprintf("A job pod has been Pending %s, past poll_timeout (%s), and the cluster still has zero nodes: nothing rented a node. "+
				"The provider is not running, or the market lost the RFP.", round(oldest), poll),
			Evidence: ev,
		})
	case oldest >= poll:
		p.Report(checks.Finding{
			Cause:    fmt.Sprintf("A job pod has been Pending %s with no node, past poll_timeout (%s), although %s.", round(oldest), poll, exist(len(l.Nodes))),
			Evidence: ev,
			Fix:      checks.Text("See pending-unschedulable: a pod that waits while nodes exist does not fit them."),
		})
	}
	return nil
}

func round(d time.Duration) time.Duration { return d.Truncate(time.Second) }

// exist is "1 node exists", "3 nodes exist".
func exist(n int) string {
	if n == 1 {
		return "1 node exists"
	}
	return fmt.Sprintf("%d nodes exist", n)
}
