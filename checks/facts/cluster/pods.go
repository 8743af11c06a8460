package cluster

import (
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// IsJobPod tells a build pod of the Kubernetes executor: it is named
// runner-<token>-project-<id>-concurrent-<n>-<suffix>, and newer runners
// label it job.runner.gitlab.com/pod and project.runner.gitlab.com/id
// (executors/kubernetes/kubernetes.go buildLabels, gitlab-runner v19.2.1).
// A runner.gitlab.com label alone is not enough: the pause pods of
// [runners.kubernetes.autoscaler] carry runner.gitlab.com/pause-pod and
// manager.runner.gitlab.com/id-short (autoscaler/pause_pod_manager.go), and
// they are what holds a node, not jobs.
func IsJobPod(p *corev1.Pod) bool {
	if _, pause := p.Labels["runner.gitlab.com/pause-pod"]; pause {
		return false
	}
	for _, k := range []string{"job.runner.gitlab.com/pod", "project.runner.gitlab.com/id"} {
		if _, ok := p.Labels[k]; ok {
			return true
		}
	}
	return strings.HasPrefix(p.Name, "runner-") && strings.Contains(p.Name, "-project-")
}

// IsAddon tells the cluster's own pods, which the scale decision ignores.
func IsAddon(p *corev1.Pod) bool { return p.Namespace == "kube-system" }

// NodeReady tells a node whose kubelet reports Ready.
func NodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// Unbound is a pod the scheduler has not placed.
func Unbound(p *corev1.Pod) bool { return p.Spec.NodeName == "" }

// Age of an object at now.
func Age(created time.Time, now time.Time) time.Duration {
	if created.IsZero() || now.Before(created) {
		return 0
	}
	return now.Sub(created)
}

// Requests is what the scheduler places a pod on: the sum of its containers'
// requests, or the largest init container's when that is more.
func Requests(p *corev1.Pod) corev1.ResourceList {
	sum := corev1.ResourceList{}
	for _, c := range p.Spec.Containers {
		for name, q := range c.Resources.Requests {
			v := sum[name]
			v.Add(q)
			sum[name] = v
		}
	}
	for _, c := range p.Spec.InitContainers {
		for name, q := range c.Resources.Requests {
			if cur, ok := sum[name]; !ok || q.Cmp(cur) > 0 {
				sum[name] = q.DeepCopy()
			}
		}
	}
	return sum
}

// LargestAllocatable is, per resource, the most any one node offers.
func LargestAllocatable(nodes []corev1.Node) corev1.ResourceList {
	max := corev1.ResourceList{}
	for _, n := range nodes {
		for name, q := range n.Status.Allocatable {
			if cur, ok := max[name]; !ok || q.Cmp(cur) > 0 {
				max[name] = q.DeepCopy()
			}
		}
	}
	return max
}

// Exceeds lists the resources where want is more than have offers.
func Exceeds(want, have corev1.ResourceList) []string {
	var out []string
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage} {
		w, ok := want[name]
		if !ok || w.IsZero() {
			continue
		}
		h := have[name]
		if w.Cmp(h) > 0 {
			out = append(out, string(name)+" "+w.String()+" > "+quantity(h))
		}
	}
	return out
}

func quantity(q resource.Quantity) string {
	if q.IsZero() {
		return "0"
	}
	return q.String()
}
