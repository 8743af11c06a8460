package pendingunschedulable

import (
	"errors"
	"testing"

	"github.com/socialwebcomputer/doctor/checks/checktest/apigatetest"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/checktest"
	"github.com/socialwebcomputer/doctor/checks/facts/cluster"
	"github.com/socialwebcomputer/doctor/testkit/testroot"
)

// withAPIAuth puts api-auth in the catalog of a run that lists the cluster:
// the lists gate on it by its ID (kubefacts.AfterAPIAuth).
var withAPIAuth = apigatetest.With()

func rl(cpu, memory string) corev1.ResourceList {
	return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)}
}

func node(name, cpu, memory string) corev1.Node {
	return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: corev1.NodeStatus{Allocatable: rl(cpu, memory)}}
}

const jobName = "runner-abc123-project-5-concurrent-0-x"

// pending is a Pending pod with no node whose build container requests
// cpu and memory, and a helper that requests 100m and 128Mi.
func pending(name, cpu, memory string) corev1.Pod {
	return corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "gitlab-runner", Name: name},
		Spec: corev1.PodSpec{Containers: []corev1.Container{
			{Name: "build", Resources: corev1.ResourceRequirements{Requests: rl(cpu, memory)}},
			{Name: "helper", Resources: corev1.ResourceRequirements{Requests: rl("100m", "128Mi")}},
		}},
		Status: corev1.PodStatus{Phase: corev1.PodPending},
	}
}

func failedScheduling(message string) map[string][]corev1.Event {
	return map[string][]corev1.Event{"gitlab-runner/" + jobName: {
		{Reason: "Scheduled", Message: "not this one"},
		{Reason: "FailedScheduling", Message: message},
	}}
}

// judge runs the check for the guide's runner on the cluster lists given.
func judge(t *testing.T, l *cluster.Lists) []checks.CheckResult {
	t.Helper()
	root := testroot.New(t)
	root.Write("/etc/gitlab-runner/config.toml", testroot.GuideConfig, 0o600)
	l.Namespace = "gitlab-runner"
	return checktest.Check(t, Check, checktest.Root(root.Dir), checktest.Fact(cluster.ListsFact, l))
}

func fail(sev checks.Severity, says ...string) checktest.ResultWant {
	return checktest.ResultWant{Runner: 1, Status: checks.StatusFail, Findings: []checktest.FindingWant{{Severity: sev, Says: says}}}
}

func TestJudge(t *testing.T) {
	big := pending(jobName, "64", "1Gi")
	bound := pending("runner-abc123-project-5-concurrent-1-y", "64", "1Gi")
	bound.Spec.NodeName = "rented-1"
	notJob := pending("pause-pod-0", "64", "1Gi")
	two := []corev1.Node{node("rented-1", "4", "16Gi"), node("rented-2", "8", "8Gi")}
	for _, tc := range []struct {
		name  string
		lists cluster.Lists
		want  checktest.ResultWant
	}{
		// With zero nodes there is nothing to fit: pending-no-node's case.
		{"zero-nodes", cluster.Lists{RunnerPods: []corev1.Pod{big}}, checktest.ResultWant{Runner: 1, Status: checks.StatusPass}},
		{"bound-and-non-job-pods", cluster.Lists{RunnerPods: []corev1.Pod{bound, notJob}, Nodes: two}, checktest.ResultWant{Runner: 1, Status: checks.StatusPass}},
		// The largest allocatable is per resource: cpu of rented-2, memory of rented-1.
		{"requests-fit-no-node", cluster.Lists{RunnerPods: []corev1.Pod{pending(jobName, "64", "32Gi")}, Nodes: two,
			PendingEvents: failedScheduling("0/2 nodes are available: 2 Insufficient cpu.")},
			fail(checks.Error, "pod gitlab-runner/"+jobName+" is Pending while nodes exist: its requests fit no node size (cpu 64100m > 8; memory 32896Mi > 16Gi)",
				"requests cpu=64100m, memory=32896Mi", "largest node allocatable: cpu=8, memory=16Gi (of 2 nodes)",
				"event FailedScheduling: 0/2 nodes are available: 2 Insufficient cpu.")},
		{"scheduler-says-why", cluster.Lists{RunnerPods: []corev1.Pod{pending(jobName, "1", "1Gi")}, Nodes: two,
			PendingEvents: failedScheduling("0/2 nodes are available: 2 node(s) had untolerated taint {dedicated: gpu}.")},
			fail(checks.Error, "is Pending while nodes exist, and the scheduler says why: 0/2 nodes are available: 2 node(s) had untolerated taint {dedicated: …}.",
				"Act on the scheduler's reason")},
		{"events-not-listed", cluster.Lists{RunnerPods: []corev1.Pod{pending(jobName, "1", "1Gi")}, Nodes: two, Errs: map[string]error{"events": errors.New("events is forbidden")}},
			fail(checks.Warning, "its requests fit the largest node; its events could not be listed, so the scheduler's reason is not known here",
				"list events: events is forbidden", "kubectl describe pod -n gitlab-runner "+jobName)},
		{"no-event-yet", cluster.Lists{RunnerPods: []corev1.Pod{pending(jobName, "1", "1Gi")}, Nodes: two},
			fail(checks.Warning, "is Pending while nodes exist, its requests fit the largest node, and no scheduler event says why yet")},
		{"nodes-not-listed", cluster.Lists{RunnerPods: []corev1.Pod{big}, Errs: map[string]error{"nodes": errors.New("the server was slow")}},
			checktest.ResultWant{Runner: 1, Status: checks.StatusUnknown, Reason: "listing nodes: the server was slow"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checktest.WantResults(t, judge(t, &tc.lists), tc.want)
		})
	}
}

func TestCases(t *testing.T) { checktest.Cases(t, Check, withAPIAuth) }
