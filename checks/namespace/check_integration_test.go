//go:build integration

package namespace

import (
	"strings"
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/checks/checktest/apigatetest"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/checktest"
	"github.com/socialwebcomputer/doctor/testkit/testroot"
)

func result(index int, status checks.Status, says ...string) checktest.ResultWant {
	r := checktest.ResultWant{Runner: index, Status: status}
	if len(says) > 0 {
		r.Findings = []checktest.FindingWant{{Severity: checks.Error, Says: says}}
	}
	return r
}

// secondRunner is the guide's runner again, sending its jobs to namespace ns.
func secondRunner(ns string) string {
	i := strings.Index(testroot.GuideConfig, "[[runners]]")
	second := strings.Replace(testroot.GuideConfig[i:], `name = "kcp-tenant-kubernetes"`, `name = "second"`, 1)
	return testroot.GuideConfig + "\n" + strings.Replace(second, `namespace = "gitlab-runner"`, `namespace = "`+ns+`"`, 1)
}

func TestLive(t *testing.T) {
	live := checktest.Cluster(t, "", apigatetest.With())
	t.Run("namespace-missing", func(t *testing.T) {
		checktest.WantResults(t, live.Check(t, Check), result(1, checks.StatusFail,
			`the namespace "gitlab-runner" does not exist: every job fails with `+"`namespaces \"gitlab-runner\" not found`",
			`GET /api/v1/namespaces/gitlab-runner: 404: namespaces "gitlab-runner" not found`, "kubectl --context tenant-ci create namespace gitlab-runner"))
	})
	live.EnsureNamespace("gitlab-runner")
	t.Run("namespace-exists", func(t *testing.T) {
		checktest.WantResults(t, live.Check(t, Check), result(1, checks.StatusPass))
	})
	// Runners in two namespaces read the cluster's list once.
	t.Run("two-runners-one-namespace-missing", func(t *testing.T) {
		root := testroot.New(t)
		root.GuideRunner(secondRunner("ci-other"), live.OwnerKubeconfigBytes(checktest.OwnerDID, time.Now().Add(12*time.Hour)))
		checktest.WantResults(t, checktest.Check(t, Check, checktest.Root(root.Dir), apigatetest.With()), result(1, checks.StatusPass),
			result(2, checks.StatusFail, `the namespace "ci-other" does not exist`, "GET /api/v1/namespaces (the cluster's list): 404"))
	})
	t.Run("namespace-per-job", func(t *testing.T) {
		root := testroot.New(t)
		root.GuideRunner(strings.Replace(testroot.GuideConfig, "    poll_timeout = 3600\n", "    poll_timeout = 3600\n    namespace_per_job = true\n", 1),
			live.OwnerKubeconfigBytes(checktest.OwnerDID, time.Now().Add(12*time.Hour)))
		checktest.WantResults(t, checktest.Check(t, Check, checktest.Root(root.Dir), apigatetest.With()),
			checktest.ResultWant{Runner: 1, Status: checks.StatusSkipped, Reason: "namespace_per_job is set: the runner creates a namespace per job"})
	})
	// An identity with no RBAC at all may not read the namespace: unknown,
	// naming what it lacks, never "does not exist".
	t.Run("forbidden", func(t *testing.T) {
		now := time.Now()
		cert, key := live.MintClient("ci-no-rbac", nil, now.Add(-time.Hour), now.Add(12*time.Hour))
		root := testroot.New(t)
		root.GuideRunner(testroot.GuideConfig, live.Kubeconfig(cert, key))
		checktest.WantResults(t, checktest.Check(t, Check, checktest.Root(root.Dir), apigatetest.With()), checktest.ResultWant{Runner: 1, Status: checks.StatusUnknown,
			Reason: `its RBAC lacks verb "get" on resource "namespaces" in API group ""`})
	})
	// Without a namespace controller, a deleted namespace keeps its
	// kubernetes finalizer: Terminating, as one whose deletion is stuck.
	if err := live.Clientset().CoreV1().Namespaces().Delete(t.Context(), "gitlab-runner", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Run("namespace-terminating", func(t *testing.T) {
		checktest.WantResults(t, live.Check(t, Check), result(1, checks.StatusFail,
			`the namespace "gitlab-runner" is Terminating: new job pods are refused until it is gone`, "status.phase=Terminating since", "Wait for the deletion to finish"))
	})
}
