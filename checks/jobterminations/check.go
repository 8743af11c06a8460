// Package jobterminations reads how recent jobs actually ended: a job pod
// killed for memory, evicted for a node's memory or disk, or disrupted
// (preempted, drained, its node deleted), from the pods that remain and
// the events that outlive the ones the runner deleted.
package jobterminations

import (
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/client/kube/keep"
	"github.com/socialwebcomputer/doctor/checks/facts/cluster"
	"github.com/socialwebcomputer/doctor/checks/facts/configfacts"
	"github.com/socialwebcomputer/doctor/runnerconfig"
	"github.com/socialwebcomputer/doctor/runnerconfig/jobpod"
)

var Check = &checks.Check{
	ID:       "job-terminations",
	Title:    "Recent jobs ended by themselves, not killed by memory, eviction or disruption",
	Severity: checks.Error,
	Doc: checks.Doc{
		Cause: "A job pod ends before its script does: a container passes its memory limit (memory_limit, " +
			"helper_memory_limit, service_memory_limit) or the node runs out of memory first, and the kernel kills " +
			"it with exit code 137 (OOMKilled); the kubelet evicts the pod when the node is low on memory or " +
			"ephemeral storage, or a container passes ephemeral_storage_limit; or the pod is disrupted " +
			"(DisruptionTarget: preempted by a higher priority pod, drained, its rented node deleted). A limit " +
			"above what any node can allocate protects nothing: the node gives out first.",
		// executors/kubernetes/kubernetes.go, v19.3.0 (podContainerError.Error, returned
		// bare by runWithAttach: not a BuildError, so common/build.go prints it as
		// "Job failed (system failure):");
		// client-go tools/remotecommand (the exec of the legacy execution strategy),
		// asserted in executors/kubernetes/kubernetes_integration_test.go, v19.3.0;
		// executors/kubernetes/internal/watchers/pod.go, v19.3.0 (checkTerminalPodErrors).
		Symptom: "ERROR: Job failed (system failure): Error in container build: exit code: 137, reason: 'OOMKilled'; or " +
			"command terminated with exit code 137; or pod \"gitlab-runner/runner-…\" is disrupted: reason \"EvictionByEvictionAPI\", message \"…\"; " +
			"or WARNING: Event retrieved from the cluster: The node was low on resource: ephemeral-storage.",
		Fix: checks.Text("Give the container that was killed a limit it fits in and that a node can hold: raise memory_limit " +
			"(or helper_memory_limit, service_memory_limit) or ephemeral_storage_limit in [runners.kubernetes], " +
			"keeping the sum of the pod's limits below the smallest rented node's allocatable; for disruption, " +
			"set pod_disruption_budget = true or a priority_class_name that is not preempted."),
		Verify: checks.Target(checks.Sh(checks.CatalogKubectl + ` get events -n "$RUNNER_NAMESPACE" --field-selector type=Warning
` + checks.CatalogKubectl + ` get pods -n "$RUNNER_NAMESPACE" -o jsonpath='{range .items[*]}{.metadata.name}{" "}{.status.containerStatuses[*].lastState.terminated.reason}{"\n"}{end}'`)),
		Patterns: []string{
			// executors/kubernetes/kubernetes.go, v19.3.0: "Error in container %s: exit code: %d, reason: '%s'"
			"Error in container *: exit code: 137, reason: 'OOMKilled'",
			// executors/kubernetes/kubernetes.go, v19.3.0: commandTerminatedError ("command terminated with exit code %d")
			"command terminated with exit code 137",
			// executors/kubernetes/internal/watchers/pod.go, v19.3.0: "pod %q is disrupted: reason %q, message %q"
			"pod \"*\" is disrupted: reason \"*\", message \"*\"",
			// the kubelet's eviction messages (pkg/kubelet/eviction/helpers.go, kubernetes v1.37.2), printed by
			// the runner as "Event retrieved from the cluster: %s" (executors/kubernetes/kubernetes.go, v19.3.0)
			"Event retrieved from the cluster: The node was low on resource: *",
			"Event retrieved from the cluster: Container * exceeded its local ephemeral storage limit *",
			"Event retrieved from the cluster: Pod ephemeral local storage usage exceeds the total limit of containers *",
		},
	},
	Requires:  []checks.Node{cluster.ListsFact, configfacts.RunnerEntryFact},
	Executors: []string{checks.Kubernetes},
	Network:   true,
	Run:       run,
}

// Recent is how far back a job pod counts: events live an hour by default
// (kube-apiserver --event-ttl), pods left behind longer.
const Recent = 24 * time.Hour

func run(p *checks.Pass) error {
	l := cluster.ListsFact.Get(p)
	if err := l.Err("runner pods", "events"); err != nil {
		return err
	}
	e := configfacts.RunnerEntryFact.Get(p)
	for _, f := range Diagnose(l, e.Runner, e.Label(), p.Env.Now()) {
		p.Report(f)
	}
	return nil
}

// ending is one job pod's end, as a pod status or an event shows it.
type ending struct {
	pod, container, kind string // kind: oom, evicted, disrupted
	detail, source       string
	at                   time.Time
}

// Diagnose is the check's logic on the lists: one finding per job pod that
// ended badly, naming its container and the limit.
func Diagnose(l *cluster.Lists, r *runnerconfig.Runner, label string, now time.Time) []checks.Finding {
	var ends []ending
	seen := map[string]bool{} // pod/kind already reported from its status
	for i := range l.RunnerPods {
		pod := &l.RunnerPods[i]
		if !cluster.IsJobPod(pod) || cluster.Age(pod.CreationTimestamp.Time, now) > Recent {
			continue
		}
		for _, end := range fromStatus(pod) {
			ends = append(ends, end)
			seen[end.pod+"/"+end.kind] = true
		}
	}
	names := make([]string, 0, len(l.PodEvents))
	for name := range l.PodEvents {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		probe := &corev1.Pod{}
		probe.Name = name
		if pod := find(l.RunnerPods, name); pod != nil {
			probe = pod
		}
		if !cluster.IsJobPod(probe) {
			continue
		}
		for _, ev := range l.PodEvents[name] {
			end, ok := fromEvent(ev)
			if !ok || seen[name+"/"+end.kind] || cluster.Age(eventTime(ev), now) > Recent {
				continue
			}
			seen[name+"/"+end.kind] = true
			ends = append(ends, end)
		}
	}
	nodes := cluster.LargestAllocatable(l.Nodes)
	var out []checks.Finding
	for _, end := range ends {
		out = append(out, finding(end, l, r, label, nodes))
	}
	return out
}

func find(pods []corev1.Pod, name string) *corev1.Pod {
	for i := range pods {
		if pods[i].Name == name {
			return &pods[i]
		}
	}
	return nil
}

func fromStatus(pod *corev1.Pod) []ending {
	var out []ending
	src := fmt.Sprintf("pod %s/%s", pod.Namespace, pod.Name)
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.DisruptionTarget && c.Status == corev1.ConditionTrue {
			out = append(out, ending{pod: pod.Name, kind: "disrupted", source: src + " condition DisruptionTarget",
				detail: fmt.Sprintf("reason %q, message %q", keep.Reason(c.Reason), keep.Message(c.Message)), at: c.LastTransitionTime.Time})
			break // a pod is disrupted once; a status with thousands of these is a hostile one
		}
	}
	if pod.Status.Reason == "Evicted" {
		msg := keep.Message(pod.Status.Message)
		out = append(out, ending{pod: pod.Name, container: evictedContainer(msg), kind: "evicted",
			source: src + " status", detail: "Evicted: " + msg})
	}
	statuses := append(append([]corev1.ContainerStatus{}, pod.Status.InitContainerStatuses...), pod.Status.ContainerStatuses...)
	for _, cs := range statuses {
		for _, t := range []*corev1.ContainerStateTerminated{cs.State.Terminated, cs.LastTerminationState.Terminated} {
			if t == nil || (t.Reason != "OOMKilled" && t.ExitCode != 137) {
				continue
			}
			out = append(out, ending{pod: pod.Name, container: cs.Name, kind: "oom",
				source: src + " container " + cs.Name,
				detail: fmt.Sprintf("terminated: exit code %d, reason %q", t.ExitCode, t.Reason), at: t.FinishedAt.Time})
			break
		}
	}
	return out
}

// fromEvent reads the kubelet's Evicted event and the scheduler's
// Preempted one (Warning events; an eviction is the kubelet's Reason
// "Evicted", pkg/kubelet/eviction/helpers.go, kubernetes v1.37.2).
func fromEvent(ev corev1.Event) (ending, bool) {
	src := fmt.Sprintf("event %s/%s", ev.Namespace, ev.Name)
	// What the cut keeps of an event's message (keep.Message), on whole
	// answers too: a run concludes the same on either.
	msg := keep.Message(ev.Message)
	switch ev.Reason {
	case "Evicted":
		return ending{pod: ev.InvolvedObject.Name, container: evictedContainer(msg), kind: "evicted", source: src,
			detail: "Evicted: " + msg, at: eventTime(ev)}, true
	case "Preempted":
		return ending{pod: ev.InvolvedObject.Name, kind: "disrupted", source: src, detail: "Preempted: " + msg, at: eventTime(ev)}, true
	}
	return ending{}, false
}

func eventTime(ev corev1.Event) time.Time {
	switch {
	case !ev.LastTimestamp.IsZero():
		return ev.LastTimestamp.Time
	case !ev.EventTime.IsZero():
		return ev.EventTime.Time
	}
	return ev.CreationTimestamp.Time
}

// evictedContainer is the container an ephemeral-storage eviction names:
// "Container %s exceeded its local ephemeral storage limit %q. "
// (pkg/kubelet/eviction/helpers.go, kubernetes v1.37.2).
func evictedContainer(msg string) string {
	rest, ok := strings.CutPrefix(msg, "Container ")
	if !ok {
		return ""
	}
	name, _, ok := strings.Cut(rest, " exceeded its local ephemeral storage limit")
	if !ok {
		return ""
	}
	return name
}

// key names the [runners.kubernetes] setting of a container's limit.
func key(container string, res corev1.ResourceName) string {
	prefix := ""
	switch {
	case container == jobpod.Helper || container == jobpod.InitPermissions:
		prefix = "helper_"
	case strings.HasPrefix(container, "svc-"):
		prefix = "service_"
	}
	if res == corev1.ResourceEphemeralStorage {
		return prefix + "ephemeral_storage_limit"
	}
	return prefix + "memory_limit"
}

func finding(end ending, l *cluster.Lists, r *runnerconfig.Runner, label string, largest corev1.ResourceList) checks.Finding {
	ev := []checks.Evidence{{Source: end.source, Detail: end.detail}}
	res := corev1.ResourceMemory
	if end.kind == "evicted" && strings.Contains(end.detail, "ephemeral") {
		res = corev1.ResourceEphemeralStorage
	}
	pod := find(l.RunnerPods, end.pod)
	limit, limitSrc := limitOf(pod, r, end.container, res)
	total := podLimit(pod, r, res)
	nodeHas, nodeKnown := largest[res]
	var cause string
	switch end.kind {
	case "oom":
		cause = fmt.Sprintf("%s: job pod %s/%s: container %s was killed for memory (exit code 137, OOMKilled)", label, l.Namespace, end.pod, end.container)
	case "evicted":
		what := "the node ran low on memory or disk"
		if res == corev1.ResourceEphemeralStorage {
			what = "ephemeral storage"
		}
		cause = fmt.Sprintf("%s: job pod %s/%s was evicted by the kubelet (%s)", label, l.Namespace, end.pod, what)
		if end.container != "" {
			cause += ": container " + end.container
		}
	default:
		cause = fmt.Sprintf("%s: job pod %s/%s was disrupted before its job ended (%s)", label, l.Namespace, end.pod, end.detail)
	}
	if end.kind != "disrupted" {
		if limit == "" {
			cause += fmt.Sprintf("; %s sets no %s limit for it (%s), so only the node bounds it", label, res, key(orName(end.container, jobpod.Build), res))
		} else {
			cause += fmt.Sprintf("; its limit is %s %s (%s)", key(orName(end.container, jobpod.Build), res), limit, limitSrc)
		}
		if nodeKnown && !total.IsZero() && total.Cmp(nodeHas) > 0 {
			cause += fmt.Sprintf("; the pod's %s limits add up to %s, more than the largest node allocates (%s), so the node gives out before the limit", res, total.String(), nodeHas.String())
			ev = append(ev, checks.Evidence{Source: "GET nodes", Detail: fmt.Sprintf("largest allocatable %s: %s", res, nodeHas.String())})
		}
	}
	cause += "."
	return checks.Finding{Cause: cause, Evidence: ev}
}

func orName(c, def string) string {
	if c == "" {
		return def
	}
	return c
}

// limitOf is the container's limit: the live pod's spec when the pod is
// still there, else what config.toml gives that container.
func limitOf(pod *corev1.Pod, r *runnerconfig.Runner, container string, res corev1.ResourceName) (string, string) {
	container = orName(container, jobpod.Build)
	if pod != nil {
		for _, c := range jobpod.AllContainers(pod) {
			if c.Name == container {
				if q, ok := c.Resources.Limits[res]; ok {
					return q.String(), "the pod's spec"
				}
				return "", ""
			}
		}
	}
	want, err := jobpod.For(r, jobpod.Configured)
	if err != nil {
		return "", ""
	}
	for _, c := range jobpod.AllContainers(want) {
		if c.Name == container {
			if q, ok := c.Resources.Limits[res]; ok {
				return q.String(), "config.toml"
			}
		}
	}
	return "", ""
}

// podLimit is the sum of the pod's limits of res, live or from config.
func podLimit(pod *corev1.Pod, r *runnerconfig.Runner, res corev1.ResourceName) resource.Quantity {
	if pod == nil {
		var err error
		if pod, err = jobpod.For(r, jobpod.Configured); err != nil {
			return resource.Quantity{}
		}
	}
	return jobpod.Sum(pod, true)[res]
}
