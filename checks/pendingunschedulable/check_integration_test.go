//go:build integration

package pendingunschedulable

import (
	"testing"

	"github.com/socialwebcomputer/doctor/checks/checktest/apigatetest"

	corev1 "k8s.io/api/core/v1"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/checktest"
	"github.com/socialwebcomputer/doctor/testkit/testenv"
)

// On a real apiserver: a node of 4 cpu and 16Gi, and job pods Pending with
// no node, one asking 64 cpu (with the scheduler's event), one that fits
// with no event yet.
func TestLive(t *testing.T) {
	live := checktest.Cluster(t, "", apigatetest.With())
	live.EnsureNamespace("gitlab-runner")
	live.CreateNode("rented-1", testenv.ReadyNodeStatus("4", "16Gi", 0))
	big := live.CreatePod("gitlab-runner", "runner-abc123-project-5-concurrent-0-big", "", func(p *corev1.Pod) {
		p.Spec.Containers[0].Resources.Requests = rl("64", "1Gi")
	})
	live.CreatePodEvent(big, corev1.EventTypeWarning, "FailedScheduling", "0/1 nodes are available: 1 Insufficient cpu.")
	live.CreatePod("gitlab-runner", "runner-abc123-project-5-concurrent-1-small", "", func(p *corev1.Pod) {
		p.Spec.Containers[0].Resources.Requests = rl("1", "1Gi")
	})
	checktest.WantResults(t, live.Check(t, Check, withAPIAuth), checktest.ResultWant{Runner: 1, Status: checks.StatusFail, Findings: []checktest.FindingWant{
		{Severity: checks.Error, Says: []string{"pod gitlab-runner/runner-abc123-project-5-concurrent-0-big is Pending while nodes exist: its requests fit no node size (cpu 64 > 4)",
			"largest node allocatable: cpu=4, memory=16Gi (of 1 node)", "event FailedScheduling: 0/1 nodes are available: 1 Insufficient cpu."}},
		{Severity: checks.Warning, Says: []string{"pod gitlab-runner/runner-abc123-project-5-concurrent-1-small is Pending while nodes exist, its requests fit the largest node, and no scheduler event says why yet"}},
	}})
}
