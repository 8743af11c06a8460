package jobterminations

import (
	"strings"
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/checks/checktest/apigatetest"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/socialwebcomputer/doctor/checks/checktest"
	"github.com/socialwebcomputer/doctor/checks/facts/cluster"
	"github.com/socialwebcomputer/doctor/runnerconfig"
)

var now = time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)

const jobName = "runner-abc123-project-5-concurrent-0-x1y2z3"

func guide() *runnerconfig.Runner {
	return &runnerconfig.Runner{Executor: "kubernetes", Kubernetes: &runnerconfig.Kubernetes{
		Namespace: "gitlab-runner", MemoryLimit: "20Gi", HelperMemoryLimit: "1Gi", EphemeralStorageLimit: "2Gi"}}
}

func node(mem string) corev1.Node {
	return corev1.Node{Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(mem)}}}
}

func jobPod(status corev1.PodStatus) corev1.Pod {
	return corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "gitlab-runner", Name: jobName, CreationTimestamp: metav1.NewTime(now.Add(-10 * time.Minute))},
		Spec: corev1.PodSpec{Containers: []corev1.Container{
			{Name: "build", Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("20Gi")}}},
			{Name: "helper", Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}}},
		}},
		Status: status,
	}
}

func lists(pods []corev1.Pod, events map[string][]corev1.Event, nodes ...corev1.Node) *cluster.Lists {
	if events == nil {
		events = map[string][]corev1.Event{}
	}
	return &cluster.Lists{Namespace: "gitlab-runner", RunnerPods: pods, PodEvents: events, Nodes: nodes}
}

func one(t *testing.T, l *cluster.Lists, says ...string) {
	t.Helper()
	fs := Diagnose(l, guide(), `[[runners]] #1 "k"`, now)
	if len(fs) != 1 {
		t.Fatalf("%d findings, want 1: %+v", len(fs), fs)
	}
	text := fs[0].Cause
	for _, e := range fs[0].Evidence {
		text += "\n" + e.Source + ": " + e.Detail
	}
	for _, s := range says {
		if !strings.Contains(text, s) {
			t.Errorf("finding does not say %q:\n%s", s, text)
		}
	}
}

func TestOOMKilledNamesPodContainerAndLimit(t *testing.T) {
	st := corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{{Name: "build",
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled"}}}}}
	one(t, lists([]corev1.Pod{jobPod(st)}, nil, node("16Gi")),
		"gitlab-runner/"+jobName, "container build", "memory_limit 20Gi", "add up to 21Gi, more than the largest node allocates (16Gi)")
}

func TestExit137OfTheHelperWithinNodeSize(t *testing.T) {
	st := corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "helper",
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "Error"}}}}}
	fs := Diagnose(lists([]corev1.Pod{jobPod(st)}, nil, node("64Gi")), guide(), "r", now)
	if len(fs) != 1 || !strings.Contains(fs[0].Cause, "helper_memory_limit 1Gi") || strings.Contains(fs[0].Cause, "largest node") {
		t.Fatalf("findings %+v, want the helper's 1Gi limit and no node comparison", fs)
	}
}

func TestEvictedForEphemeralStorageFromAnEventOfAGonePod(t *testing.T) {
	ev := corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: "gitlab-runner", Name: jobName + ".1"},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "gitlab-runner", Name: jobName},
		Reason:         "Evicted", Type: corev1.EventTypeWarning, LastTimestamp: metav1.NewTime(now.Add(-5 * time.Minute)),
		Message: `Container build exceeded its local ephemeral storage limit "2Gi". `}
	one(t, lists(nil, map[string][]corev1.Event{jobName: {ev}}), "evicted", "ephemeral storage", "container build",
		"ephemeral_storage_limit 2Gi (config.toml)")
}

func TestDisruptionTarget(t *testing.T) {
	st := corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue,
		Reason: "DeletionByTaintManager", Message: "Taint manager: deleting due to NoExecute taint"}}}
	one(t, lists([]corev1.Pod{jobPod(st)}, nil), "disrupted", "DeletionByTaintManager")
}

func TestHealthyAndOldAndForeignPodsSayNothing(t *testing.T) {
	ok := jobPod(corev1.PodStatus{Phase: corev1.PodSucceeded, ContainerStatuses: []corev1.ContainerStatus{{Name: "build",
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed"}}}}})
	old := jobPod(corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "build",
		State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled"}}}}})
	old.Name, old.CreationTimestamp = jobName+"-old", metav1.NewTime(now.Add(-48*time.Hour))
	other := corev1.Event{InvolvedObject: corev1.ObjectReference{Name: "coredns-1"}, Reason: "Evicted", LastTimestamp: metav1.NewTime(now)}
	if fs := Diagnose(lists([]corev1.Pod{ok, old}, map[string][]corev1.Event{"coredns-1": {other}}), guide(), "r", now); len(fs) != 0 {
		t.Fatalf("findings %+v, want none", fs)
	}
}

func TestPatternsMatchTheRunnersLines(t *testing.T) {
	for _, line := range []string{
		"ERROR: Job failed: Error in container build: exit code: 137, reason: 'OOMKilled'",
		"ERROR: Job failed: command terminated with exit code 137",
		`ERROR: Job failed (system failure): pod "gitlab-runner/runner-abc-project-5-concurrent-0-x" is disrupted: reason "EvictionByEvictionAPI", message "Eviction API: evicting"`,
		"WARNING: Event retrieved from the cluster: The node was low on resource: ephemeral-storage. Threshold quantity: 1Gi, available: 512Mi. ",
	} {
		if !matchesAny(line) {
			t.Errorf("no pattern matches %q", line)
		}
	}
	for _, line := range []string{"Job succeeded", "command terminated with exit code 1", "Error in container build: exit code: 1, reason: 'Error'"} {
		if matchesAny(line) {
			t.Errorf("a pattern matches the healthy line %q", line)
		}
	}
}

func matchesAny(line string) bool { return checktest.Matches(Check.Doc, line) }

// The lists gate on api-auth by its ID (kubefacts.AfterAPIAuth).
func TestCases(t *testing.T) { checktest.Cases(t, Check, apigatetest.With()) }
