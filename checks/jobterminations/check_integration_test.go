//go:build integration

package jobterminations

import (
	"testing"

	"github.com/socialwebcomputer/doctor/checks/checktest/apigatetest"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/checktest"
	"github.com/socialwebcomputer/doctor/testkit/testenv"
)

// A job pod the apiserver stores, its status set as the kubelet would: the
// build container OOMKilled on a 16Gi node under a 20Gi limit. Then a job
// pod gone, its Evicted event left.
func TestLive(t *testing.T) {
	want := func(says ...string) checktest.ResultWant {
		return checktest.ResultWant{Runner: 1, Status: checks.StatusFail, Findings: []checktest.FindingWant{{Severity: checks.Error, Says: says}}}
	}
	t.Run("job-oomkilled", func(t *testing.T) {
		live := checktest.Cluster(t, "", apigatetest.With())
		live.EnsureNamespace("gitlab-runner")
		live.CreateNode("rented-1", testenv.ReadyNodeStatus("4", "16Gi", 0))
		live.CreatePod("gitlab-runner", jobName, "rented-1", func(p *corev1.Pod) {
			p.Spec.Containers[0].Name = "build"
			p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("20Gi")}
		})
		live.SetPodStatus("gitlab-runner", jobName, corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{{
			Name: "build", Image: "busybox:1.36",
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled",
				StartedAt: metav1.Now(), FinishedAt: metav1.Now()}}}}})
		checktest.WantResults(t, live.Check(t, Check, apigatetest.With()), want(
			`[[runners]] #1 "kcp-tenant-kubernetes": job pod gitlab-runner/`+jobName+`: container build was killed for memory (exit code 137, OOMKilled); its limit is memory_limit 20Gi (the pod's spec); the pod's memory limits add up to 20Gi, more than the largest node allocates (16Gi)`,
			"raise memory_limit", `pod gitlab-runner/`+jobName+` container build: terminated: exit code 137, reason "OOMKilled"`,
			"GET nodes: largest allocatable memory: 16Gi"))
	})
	t.Run("job-evicted-pod-gone", func(t *testing.T) {
		live := checktest.Cluster(t, "", apigatetest.With())
		live.EnsureNamespace("gitlab-runner")
		gone := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "gitlab-runner", Name: jobName}}
		live.CreatePodEvent(gone, corev1.EventTypeWarning, "Evicted", "The node was low on resource: ephemeral-storage. Threshold quantity: 1Gi, available: 100Mi. ")
		checktest.WantResults(t, live.Check(t, Check, apigatetest.With()), want(
			"job pod gitlab-runner/"+jobName+" was evicted by the kubelet (ephemeral storage); "+`[[runners]] #1 "kcp-tenant-kubernetes" sets no ephemeral-storage limit for it (ephemeral_storage_limit), so only the node bounds it.`,
			"event gitlab-runner/"+jobName+".", ": Evicted: The node was low on resource: ephemeral-storage. Threshold quantity: 1Gi, available: 100Mi."))
	})
}
