package trace

import (
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/socialwebcomputer/doctor/checks/facts/cluster"
)

// Labels of the Kubernetes executor's build pod, gitlab-runner v19.2.1
// executors/kubernetes/kubernetes.go, buildLabels (runnerLabelNamespace =
// "runner.gitlab.com"): "pod" and "job.runner.gitlab.com/pod" carry
// ProjectUniqueName() (common/build.go:
// runner-<short token>-project-<id>-concurrent-<n>), and the pod's name is
// that plus a random suffix (generateNameForK8sResources). The pause pods of
// [runners.kubernetes.autoscaler] carry runner.gitlab.com/pause-pod=true and
// manager.runner.gitlab.com/id-short (executors/kubernetes/autoscaler/
// pause_pod_manager.go), so a runner.gitlab.com label alone does not make a
// job pod.
const (
	LabelJobPod      = "job.runner.gitlab.com/pod"
	LabelProjectID   = "project.runner.gitlab.com/id"
	LabelLegacyPod   = "pod"
	LabelManagerName = "manager.runner.gitlab.com/name"
	LabelPausePod    = "runner.gitlab.com/pause-pod"

	// BuildContainer is the executor's build container; the runner waits
	// for it to be ready (util.go waitForPodRunning, isRunning).
	BuildContainer = "build"
)

// IsJobPod tells a job (build) pod of the Kubernetes executor from the other
// pods of its namespace, pause pods included: the checks' own rule
// (cluster.IsJobPod), or the legacy "pod" label naming one.
func IsJobPod(p *corev1.Pod) bool {
	if _, pause := p.Labels[LabelPausePod]; pause {
		return false
	}
	return cluster.IsJobPod(p) || uniqueName(p.Labels[LabelLegacyPod])
}

func uniqueName(s string) bool {
	return strings.HasPrefix(s, "runner-") && strings.Contains(s, "-project-") && strings.Contains(s, "-concurrent-")
}

// fromRunner tells whether a job pod belongs to the [[runners]] entry named
// name: its manager.runner.gitlab.com/name label is sanitizeLabel(name).
// A pod without the label (older runners) or an empty name matches.
func fromRunner(p *corev1.Pod, name string) bool {
	v, ok := p.Labels[LabelManagerName]
	return name == "" || !ok || v == SanitizeLabel(name)
}

// SanitizeLabel is the executor's sanitizeLabel (executors/kubernetes/
// util.go, v19.2.1): only [A-Za-z0-9-_.], trimmed of -_. at both ends,
// at most 63 characters.
func SanitizeLabel(v string) string {
	v = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			return r
		}
		return '_'
	}, v)
	v = strings.Trim(v, "-_.")
	if len(v) > 63 {
		v = v[:63]
	}
	return strings.Trim(v, "-_.")
}

// Decision is what a scale-decision event says.
type Decision int

const (
	NoDecision Decision = iota
	ScaleUp             // a node is being provided for the pod
	NoScaleUp           // the scaler looked at the pod and will not provide a node
)

// ScaleDecision classifies a pod event as a scale decision. What counts:
//
//   - TriggeredScaleUp (Normal) and NotTriggerScaleUp (Normal), from
//     cluster-autoscaler: kubernetes/autoscaler cluster-autoscaler/processors/
//     status/eventing_scale_up_processor.go ("pod triggered scale-up: …",
//     "pod didn't trigger scale-up: …").
//   - Nominated (Normal, "Pod should schedule on: nodeclaim/…") and
//     FailedScheduling reported by karpenter ("Failed to schedule pod, …"):
//     kubernetes-sigs/karpenter pkg/controllers/provisioning/scheduling/events.go.
//   - any reason that begins with "Provision": the guide's provider, whose
//     decision reads "Provision: intent" (runner-gateway-cluster, Verify 3).
//
// FailedScheduling from default-scheduler is not a scale decision: the
// scheduler says it cannot place the pod, which is true of every pod on a
// cluster at zero nodes, whether or not anything will rent one. Counting it
// would hide the guide's "a Pending Pod the scale decision never sees is a
// provider that is not running".
func ScaleDecision(ev *corev1.Event) Decision {
	switch {
	case ev.Reason == "TriggeredScaleUp", ev.Reason == "Nominated", strings.HasPrefix(ev.Reason, "Provision"):
		return ScaleUp
	case ev.Reason == "NotTriggerScaleUp":
		return NoScaleUp
	case ev.Reason == "FailedScheduling" && reporter(ev) == "karpenter":
		return NoScaleUp
	}
	return NoDecision
}

func reporter(ev *corev1.Event) string {
	if ev.ReportingController != "" {
		return ev.ReportingController
	}
	return ev.Source.Component
}

// pulledContainer is the container a kubelet "Pulled" event is about
// (pkg/kubelet/events/event.go PulledImage = "Pulled"; the field path is
// spec.containers{NAME} or spec.initContainers{NAME}), "" for another event.
func pulledContainer(ev *corev1.Event) string {
	if ev.Reason != "Pulled" {
		return ""
	}
	fp := ev.InvolvedObject.FieldPath
	i, j := strings.IndexByte(fp, '{'), strings.LastIndexByte(fp, '}')
	if i < 0 || j <= i {
		return ""
	}
	return fp[i+1 : j]
}

// containerNames are the pod's init and regular containers, in that order.
func containerNames(p *corev1.Pod) []string {
	var out []string
	for _, c := range p.Spec.InitContainers {
		out = append(out, c.Name)
	}
	for _, c := range p.Spec.Containers {
		out = append(out, c.Name)
	}
	return out
}

func containerStatus(p *corev1.Pod, name string) *corev1.ContainerStatus {
	for _, list := range [][]corev1.ContainerStatus{p.Status.InitContainerStatuses, p.Status.ContainerStatuses} {
		for i := range list {
			if list[i].Name == name {
				return &list[i]
			}
		}
	}
	return nil
}

// Waiting reasons of a container whose image is not (yet) on the node:
// the kubelet's defaults while it pulls (pkg/kubelet/kubelet_pods.go
// ContainerCreating, PodInitializing) and its pull errors
// (pkg/kubelet/images/types.go).
var notPulled = map[string]bool{
	"": true, "ContainerCreating": true, "PodInitializing": true,
	"ErrImagePull": true, "ImagePullBackOff": true, "InvalidImageName": true,
	"ImageInspectError": true, "ErrImageNeverPull": true,
}

// statusPulled tells from the container's status that its image is on the
// node: the runtime reported an image ID, the container runs or ran, or it
// waits for a reason that comes after the pull (CrashLoopBackOff,
// CreateContainerConfigError, …).
func statusPulled(cs *corev1.ContainerStatus) bool {
	if cs == nil {
		return false
	}
	switch {
	case cs.ImageID != "", cs.State.Running != nil, cs.State.Terminated != nil:
		return true
	case cs.State.Waiting != nil:
		return !notPulled[cs.State.Waiting.Reason]
	}
	return false
}

// waitingDetail is the first container that waits for a reason, for a
// stuck stage's detail: "build: ImagePullBackOff: Back-off pulling …".
func waitingDetail(p *corev1.Pod) string {
	for _, name := range containerNames(p) {
		cs := containerStatus(p, name)
		if cs == nil || cs.State.Waiting == nil || cs.State.Waiting.Reason == "" {
			continue
		}
		d := name + ": " + cs.State.Waiting.Reason
		if m := cs.State.Waiting.Message; m != "" {
			d += ": " + m
		}
		return d
	}
	return ""
}

// ran tells that a container of the pod started at some point: a pod that
// reaches a terminal phase without it never ran.
func ran(p *corev1.Pod) bool {
	for _, list := range [][]corev1.ContainerStatus{p.Status.InitContainerStatuses, p.Status.ContainerStatuses} {
		for _, cs := range list {
			if cs.State.Running != nil || cs.State.Terminated != nil && !cs.State.Terminated.StartedAt.IsZero() ||
				cs.LastTerminationState.Terminated != nil {
				return true
			}
		}
	}
	return false
}

// runningReady is the runner's own test (util.go isRunning, v19.2.1):
// phase Running and the build container ready; a pod without a build
// container only needs the phase.
func runningReady(p *corev1.Pod) bool {
	if p.Status.Phase != corev1.PodRunning {
		return false
	}
	hasBuild := false
	for _, c := range p.Spec.Containers {
		if c.Name == BuildContainer {
			hasBuild = true
		}
	}
	if !hasBuild {
		return true
	}
	cs := containerStatus(p, BuildContainer)
	return cs != nil && cs.Ready
}

// buildTerminated is the build container's end, when it has ended.
func buildTerminated(p *corev1.Pod) *corev1.ContainerStateTerminated {
	cs := containerStatus(p, BuildContainer)
	if cs == nil {
		return nil
	}
	return cs.State.Terminated
}

func scheduledAt(p *corev1.Pod) time.Time {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionTrue {
			return c.LastTransitionTime.Time
		}
	}
	return time.Time{}
}

func nodeReady(n *corev1.Node) (bool, time.Time) {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue, c.LastTransitionTime.Time
		}
	}
	return false, time.Time{}
}

// eventTime is when an event last happened, as precisely as it says.
func eventTime(ev *corev1.Event) time.Time {
	switch {
	case !ev.EventTime.IsZero():
		return ev.EventTime.Time
	case !ev.LastTimestamp.IsZero():
		return ev.LastTimestamp.Time
	case !ev.FirstTimestamp.IsZero():
		return ev.FirstTimestamp.Time
	}
	return ev.CreationTimestamp.Time
}
