//go:build integration

package nodearch

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/checktest"
	"github.com/socialwebcomputer/doctor/checks/checktest/apigatetest"
	"github.com/socialwebcomputer/doctor/testkit/testenv"
	"github.com/socialwebcomputer/doctor/testkit/testroot"
)

// rent adds a Ready node of arch, labelled as the kubelet labels it.
func rent(t *testing.T, live *checktest.Live, name, arch string) {
	t.Helper()
	live.CreateNode(name, testenv.ReadyNodeStatus("4", "16Gi", 10250))
	patch := []byte(`{"metadata":{"labels":{"` + ArchLabel + `":"` + arch + `","kubernetes.io/os":"linux"}}}`)
	if _, err := live.Clientset().CoreV1().Nodes().Patch(t.Context(), name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestLive reads the nodes from a real apiserver: the guide's runner keeps
// the executor's amd64 helper, so arm64 nodes fail it, amd64 nodes pass,
// and a node_selector for arm64 passes on them.
func TestLive(t *testing.T) {
	t.Run("arm64-nodes-amd64-helper", func(t *testing.T) {
		live := checktest.Cluster(t, "", apigatetest.With())
		live.EnsureNamespace("gitlab-runner")
		rent(t, live, "rented-1", "arm64")
		checktest.WantResults(t, live.Check(t, Check), checktest.ResultWant{Runner: 1, Status: checks.StatusFail,
			Findings: []checktest.FindingWant{{Severity: checks.Error,
				Says: []string{"the helper image is linux/amd64", "rented-1 (arm64)", `"kubernetes.io/arch" = "arm64"`}}}})
	})
	t.Run("amd64-nodes", func(t *testing.T) {
		live := checktest.Cluster(t, "", apigatetest.With())
		live.EnsureNamespace("gitlab-runner")
		rent(t, live, "rented-1", "amd64")
		checktest.WantResults(t, live.Check(t, Check), checktest.ResultWant{Runner: 1, Status: checks.StatusPass})
	})
	t.Run("arm64-nodes-selected", func(t *testing.T) {
		config := testroot.GuideConfig + "    [runners.kubernetes.node_selector]\n      \"kubernetes.io/arch\" = \"arm64\"\n"
		live := checktest.Cluster(t, config, apigatetest.With())
		live.EnsureNamespace("gitlab-runner")
		rent(t, live, "rented-1", "arm64")
		checktest.WantResults(t, live.Check(t, Check), checktest.ResultWant{Runner: 1, Status: checks.StatusPass})
	})
}
