//go:build integration

package scaletozero

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/socialwebcomputer/doctor/checks/checktest/apigatetest"

	schedv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/checktest"
	"github.com/socialwebcomputer/doctor/testkit/fixproof"
	"github.com/socialwebcomputer/doctor/testkit/testenv"
	"github.com/socialwebcomputer/doctor/testkit/testpki"
)

// On a real apiserver, the runner with pause pods: its PriorityClass
// missing, then present with a node that runs no job, then a pause pod
// Pending that keeps the node rented.
func TestLive(t *testing.T) {
	live := checktest.Cluster(t, pauseConfig, apigatetest.With())
	live.EnsureNamespace("gitlab-runner")
	t.Run("pause-priority-class-missing", func(t *testing.T) {
		rs := live.Check(t, Check, withAPIAuth)
		checktest.WantResults(t, rs, result(checks.StatusFail, checktest.FindingWant{Severity: checks.Error,
			Says: []string{`no PriorityClass "gitlab-pause" exists`, "none named gitlab-pause"}}))
		// Its fix's PriorityClass is one this apiserver accepts.
		admin := filepath.Join(t.TempDir(), "admin.kubeconfig")
		cert, key := live.AdminCertPEM()
		if err := os.WriteFile(admin, testpki.Kubeconfig("admin", live.URL, live.CAPEM, cert, key), 0o600); err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			for _, f := range r.Findings {
				fixproof.Checker{Kubeconfig: admin}.Assert(t, "scale-to-zero fix", f.Fix)
			}
		}
		// And the server refuses one it would not accept: the dry run can fail.
		if err := (fixproof.Checker{Kubeconfig: admin}).Manifest("apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata:\n  name: gitlab-pause\nvalue: low\n"); err == nil {
			t.Error("kubectl apply --dry-run=server accepted a PriorityClass whose value is not a number")
		}
	})

	if _, err := live.Clientset().SchedulingV1().PriorityClasses().Create(t.Context(), &schedv1.PriorityClass{
		ObjectMeta: metav1.ObjectMeta{Name: "gitlab-pause"}, Value: -10}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	live.CreateNode("rented-1", testenv.ReadyNodeStatus("4", "16Gi", 0))
	t.Run("node-with-no-pods", func(t *testing.T) {
		checktest.WantResults(t, live.Check(t, Check, withAPIAuth), result(checks.StatusPass, checktest.FindingWant{Severity: checks.Info,
			Says: []string{"1 node runs no job pod and nothing non-job is Pending", "1 of 1 node runs no job pod: rented-1"}}))
	})

	live.CreatePod("gitlab-runner", "pause-pod-0", "")
	t.Run("pause-pods-hold-a-node", func(t *testing.T) {
		checktest.WantResults(t, live.Check(t, Check, withAPIAuth), result(checks.StatusFail, checktest.FindingWant{Severity: checks.Warning,
			Says: []string{"1 node runs no job pod while 1 Pending non-job pod (pause pods or others) counts as intent", "gitlab-runner/pause-pod-0"}}))
	})
}
