//go:build integration

package pendingnonode

import (
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/checks/checktest/apigatetest"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/checktest"
	"github.com/socialwebcomputer/doctor/testkit/testenv"
)

// A job pod the apiserver stores with no node, in a cluster of zero nodes:
// normal while it is younger than poll_timeout (3600 in the guide's
// config), nothing rented a node once it is older.
func TestLive(t *testing.T) {
	live := checktest.Cluster(t, "", apigatetest.With())
	live.EnsureNamespace("gitlab-runner")
	live.CreatePod("gitlab-runner", "runner-abc123-project-5-concurrent-0-x1y2z3", "")
	// Not a job pod, and a job pod on a node: neither waits for a node.
	live.CreatePod("gitlab-runner", "pause-pod-0", "")
	live.CreatePod("gitlab-runner", "runner-abc123-project-5-concurrent-1-bound", "rented-1")
	live.SetPodStatus("gitlab-runner", "runner-abc123-project-5-concurrent-1-bound", testenv.PodRunning())

	t.Run("young-pod-zero-nodes-is-normal", func(t *testing.T) {
		checktest.WantResults(t, live.Check(t, Check, withAPIAuth), checktest.ResultWant{Runner: 1, Status: checks.StatusPass,
			Findings: []checktest.FindingWant{{Severity: checks.Info, Says: []string{"1 job pod Pending for up to", "with zero nodes: normal, a rented node is booting (poll_timeout 1h0m0s)",
				"1 job pod Pending with no node in gitlab-runner (2 Pending cluster-wide); 0 nodes",
				"pod gitlab-runner/runner-abc123-project-5-concurrent-0-x1y2z3: Pending"}}}})
	})
	t.Run("past-poll-timeout", func(t *testing.T) {
		checktest.WantResults(t, live.Check(t, Check, withAPIAuth, checktest.Now(time.Now().Add(2*time.Hour))), checktest.ResultWant{Runner: 1, Status: checks.StatusFail,
			Findings: []checktest.FindingWant{{Severity: checks.Error, Says: []string{"A job pod has been Pending 2h0m", "past poll_timeout (1h0m0s), and the cluster still has zero nodes: nothing rented a node",
				"pod gitlab-runner/runner-abc123-project-5-concurrent-0-x1y2z3: Pending 2h0m"}}}})
	})
}
