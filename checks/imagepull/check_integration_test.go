//go:build integration

package imagepull

import (
	"testing"

	"github.com/socialwebcomputer/doctor/checks/checktest/apigatetest"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/checktest"
	"github.com/socialwebcomputer/doctor/testkit/testenv"
)

// On a real apiserver, a job pod on a node whose kubelet (its status set
// as a kubelet would) backs off pulling its image.
func TestLive(t *testing.T) {
	live := checktest.Cluster(t, "", apigatetest.With())
	live.EnsureNamespace("gitlab-runner")
	live.CreateNode("rented-1", testenv.ReadyNodeStatus("4", "16Gi", 0))
	const job = "runner-abc123-project-5-concurrent-0-img"
	live.CreatePod("gitlab-runner", job, "rented-1")
	t.Run("pulling", func(t *testing.T) {
		checktest.WantResults(t, live.Check(t, Check, withAPIAuth), checktest.ResultWant{Runner: 1, Status: checks.StatusPass})
	})
	live.SetPodStatus("gitlab-runner", job, testenv.PodWaiting("ImagePullBackOff", `Back-off pulling image "registry.example.invalid/nope:1"`))
	t.Run("backoff", func(t *testing.T) {
		checktest.WantResults(t, live.Check(t, Check, withAPIAuth), checktest.ResultWant{Runner: 1, Status: checks.StatusFail,
			Findings: []checktest.FindingWant{{Severity: checks.Error, Says: []string{"Job pod gitlab-runner/" + job + " cannot pull busybox:1.36",
				"container " + testenv.ContainerName + `: ImagePullBackOff: image busybox:1.36: Back-off pulling image "registry.example.invalid/nope:1"`}}}})
	})
}
