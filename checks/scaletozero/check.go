// Package scaletozero finds what keeps a rented node alive without a job.
package scaletozero

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts/cluster"
	"github.com/socialwebcomputer/doctor/checks/facts/configfacts"
	"github.com/socialwebcomputer/doctor/internal/fixcode"
	"github.com/socialwebcomputer/doctor/runnerconfig"
)

var Check = &checks.Check{
	ID:       "scale-to-zero",
	Title:    "The cluster can return to zero nodes",
	Severity: checks.Warning,
	Doc: checks.Doc{
		Cause: "The scale decision counts every Pending pod that is not a cluster add-on as intent and rents a node " +
			"to place it. Pause pods are exactly that, so while one exists the cluster never returns to zero and a " +
			"node is billed with no job on it. Pause pods also need their PriorityClass, below the job pods', so a " +
			"job preempts them.",
		Symptom: "kubectl get nodes is never empty after the last job; a node runs only pause or other non-job pods.",
		Fix:     checks.Text("Set idle_count = 0 outside working hours (a policy with periods, or a cron on the runner), and remove Pending pods that are not jobs."),
		Verify: checks.Target(checks.Sh(checks.CatalogKubectl + " get pods -A --field-selector=status.phase=Pending\n" +
			checks.CatalogKubectl + " get nodes\n" + checks.CatalogKubectl + " get priorityclass")),
		Patterns: []string{
			// executors/kubernetes/autoscaler/pause_pod_manager.go, v19.3.0: the runner keeps pause pods,
			// which the scale decision counts as intent.
			"Starting pause pod manager",
			"Created pause pod deployment",
			"Updated pause pod deployment replicas",
		},
	},
	Requires:  []checks.Node{cluster.ListsFact, configfacts.RunnerEntryFact},
	Executors: []string{checks.Kubernetes},
	Network:   true,
	Run:       run,
}

func run(p *checks.Pass) error {
	l := cluster.ListsFact.Get(p)
	if err := l.Err("runner pods", "pending pods", "nodes"); err != nil {
		return err
	}
	e := configfacts.RunnerEntryFact.Get(p)
	r := e.Runner
	idleNodes(p, l, r)
	if r.Kubernetes != nil && r.Kubernetes.Autoscaler != nil {
		name := r.Kubernetes.Autoscaler.PausePodPriorityClassName
		if invalidPriorityClass(p, e, name) {
			return nil
		}
		if err := l.Err("priorityclasses"); err != nil {
			return err
		}
		pausePriority(p, l, name)
	}
	return nil
}

// invalidPriorityClass reports a pause_pod_priority_class_name that is no
// PriorityClass name: no class can have it, and the apiserver refuses the
// pause pods' Deployment whose pod template names it (pkg/apis/core/
// validation/validation.go, kubernetes v1.37.2: ValidatePodSpec checks
// priorityClassName with ValidatePriorityClassName, a DNS-1123
// subdomain). The name is the finding, never a manifest's.
func invalidPriorityClass(p *checks.Pass, e *configfacts.RunnerEntry, name string) bool {
	if name == "" {
		return false
	}
	err := fixcode.ObjectName(name)
	if err == nil {
		return false
	}
	src, line := e.At("kubernetes", "autoscaler", "pause_pod_priority_class_name")
	p.Report(checks.Finding{
		Severity: checks.Error,
		Cause: fmt.Sprintf("config.toml's pause_pod_priority_class_name %q is %v: no PriorityClass can have it, and the apiserver refuses the runner's pause pods that name it.",
			name, err),
		Evidence: []checks.Evidence{{Source: src, Detail: line}},
		Fix: checks.Text("Set pause_pod_priority_class_name in [runners.kubernetes.autoscaler] to the name of a PriorityClass below the job pods' " +
			"(lower-case letters, digits, '-' and '.', at most 253 characters; the guide's is gitlab-pause, value -10)."),
	})
	return true
}

// idleNodes reports nodes with no job pod, with the Pending non-job pods
// that keep the scale decision renting them.
func idleNodes(p *checks.Pass, l *cluster.Lists, r *runnerconfig.Runner) {
	now, poll := p.Env.Now(), runnerconfig.PollTimeout(r)
	jobs := map[string]int{}
	waitingJobs := 0
	for i := range l.RunnerPods {
		pod := &l.RunnerPods[i]
		if !cluster.IsJobPod(pod) || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
			continue
		}
		if cluster.Unbound(pod) {
			waitingJobs++
		}
		jobs[pod.Spec.NodeName]++
	}
	var idle []string
	for _, n := range l.Nodes {
		// A node younger than poll_timeout while a job waits is the node
		// being rented for it.
		if jobs[n.Name] == 0 && !(waitingJobs > 0 && cluster.Age(n.CreationTimestamp.Time, now) < poll) {
			idle = append(idle, n.Name)
		}
	}
	if len(idle) == 0 {
		return
	}
	var holders []string
	for i := range l.PendingPods {
		pod := &l.PendingPods[i]
		if !cluster.IsJobPod(pod) && !cluster.IsAddon(pod) {
			holders = append(holders, pod.Namespace+"/"+pod.Name)
		}
	}
	ev := []checks.Evidence{{Source: "GET nodes", Detail: fmt.Sprintf("%d of %s %s no job pod: %s", len(idle), checks.Count(len(l.Nodes), "node", "nodes"), runs(len(idle)), first(idle, 10))}}
	if len(holders) == 0 {
		p.Report(checks.Finding{
			Severity: checks.Info,
			Cause: fmt.Sprintf("%s %s no job pod and nothing non-job is Pending: scale-down should remove %s; if %s, the provider is not scaling down.",
				checks.Count(len(idle), "node", "nodes"), runs(len(idle)), them(len(idle), "it", "them"), them(len(idle), "it stays", "they stay")),
			Evidence: ev,
			Fix:      checks.Text("None if they go within the provider's idle time; otherwise check the provider."),
		})
		return
	}
	ev = append(ev, checks.Evidence{Source: "GET pods --field-selector=status.phase=Pending", Detail: fmt.Sprintf("%s that %s: %s", checks.Count(len(holders), "Pending pod", "Pending pods"),
		them(len(holders), "is neither a job nor an add-on", "are neither jobs nor add-ons"), first(holders, 10))})
	p.Report(checks.Finding{
		Cause: fmt.Sprintf("%s %s no job pod while %s (pause pods or others) %s as intent: the cluster never returns to zero, and %s billed without a job.",
			checks.Count(len(idle), "node", "nodes"), runs(len(idle)), checks.Count(len(holders), "Pending non-job pod", "Pending non-job pods"),
			them(len(holders), "counts", "count"), them(len(idle), "that node is", "those nodes are")),
		Evidence: ev,
	})
}

// pausePriority checks the pause pods' PriorityClass exists and sits below
// the job pods', so a job preempts a pause pod instead of waiting behind it.
func pausePriority(p *checks.Pass, l *cluster.Lists, name string) {
	if name == "" {
		return
	}
	var pause *int32
	var globalDefault int32
	for _, pc := range l.PriorityClasses {
		if pc.Name == name {
			v := pc.Value
			pause = &v
		}
		if pc.GlobalDefault {
			globalDefault = pc.Value
		}
	}
	if pause == nil {
		p.Report(checks.Finding{
			Severity: checks.Error,
			Cause:    fmt.Sprintf("pause_pod_priority_class_name = %q, but no PriorityClass %q exists: the runner's pause pods are refused at creation.", name, name),
			Evidence: []checks.Evidence{{Source: "GET /apis/scheduling.k8s.io/v1/priorityclasses", Detail: fmt.Sprintf("%s, none named %s", checks.Count(len(l.PriorityClasses), "class", "classes"), name)}},
			Fix: checks.Steps{checks.Say("Create it in the runner's cluster:"),
				checks.Commands(cluster.ListsFact.Get(p).Kubectl().Arg("apply", "-f", "-").Stdin(priorityClass(name)))},
		})
		return
	}
	jobPriority, source := globalDefault, "the global default PriorityClass (0 when none)"
	for i := range l.RunnerPods {
		pod := &l.RunnerPods[i]
		if cluster.IsJobPod(pod) && pod.Spec.Priority != nil {
			jobPriority, source = *pod.Spec.Priority, "job pod "+pod.Name
			break
		}
	}
	if *pause >= jobPriority {
		p.Report(checks.Finding{
			Cause: fmt.Sprintf("PriorityClass %s has value %d, not below the job pods' %d (%s): a job cannot preempt a pause pod and waits for a new node instead.",
				name, *pause, jobPriority, source),
			Evidence: []checks.Evidence{{Source: "priorityclass " + name, Detail: fmt.Sprintf("value %d", *pause)}},
			Fix: checks.Steps{checks.Say(fmt.Sprintf("Give %s a negative value (the guide uses -10): a PriorityClass's value cannot change, so replace it:", name)),
				checks.Commands(cluster.ListsFact.Get(p).Kubectl().Arg("replace", "--force", "-f", "-").Stdin(priorityClass(name)))},
		})
	}
}

func first(xs []string, n int) string {
	if len(xs) > n {
		return strings.Join(xs[:n], ", ") + fmt.Sprintf(" and %d more", len(xs)-n)
	}
	return strings.Join(xs, ", ")
}

// runs is the verb for n nodes: "1 node runs", "2 nodes run".
func runs(n int) string { return them(n, "runs", "run") }

// them is one's word for one of a thing, many's for any other number.
func them(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// priorityClass is the pause pods' PriorityClass (the guide's, value -10),
// written with kubectl apply, or replace --force for one whose value must
// change (a PriorityClass's value is immutable: pkg/apis/scheduling/
// validation/validation.go, kubernetes v1.37.2, ValidatePriorityClassUpdate).
func priorityClass(name string) fixcode.Doc {
	return fixcode.Manifest(&schedulingv1.PriorityClass{
		ObjectMeta:    metav1.ObjectMeta{Name: name},
		Value:         -10,
		GlobalDefault: false,
		// No final period: fixproof.ShellBlock refuses a line of a block
		// (a heredoc's too) that ends with one.
		Description: "Pause pods, below job pods, so a job preempts one",
	})
}
