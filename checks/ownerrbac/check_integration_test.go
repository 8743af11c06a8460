//go:build integration

package ownerrbac

import (
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/checks/checktest/apigatetest"

	authzv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/checktest"
	"github.com/socialwebcomputer/doctor/testkit/testenv"
	"github.com/socialwebcomputer/doctor/testkit/testroot"
)

// waitDenied waits until the authorizer, whose cache lags a deleted
// binding, denies the owner cluster-admin (asked as the admin, with a
// SubjectAccessReview).
func waitDenied(t *testing.T, live *checktest.Live) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		r, err := live.Clientset().AuthorizationV1().SubjectAccessReviews().Create(t.Context(), &authzv1.SubjectAccessReview{Spec: authzv1.SubjectAccessReviewSpec{
			User: checktest.OwnerDID, Groups: []string{testenv.OwnersGroup, "system:authenticated"},
			ResourceAttributes: &authzv1.ResourceAttributes{Verb: "*", Group: "*", Resource: "*"}}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !r.Status.Allowed {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the owner is still cluster-admin 10s after its binding was deleted")
		}
	}
}

func TestLive(t *testing.T) {
	live := checktest.Cluster(t, "", apigatetest.With())
	live.EnsureNamespace("gitlab-runner")
	t.Run("owner-is-cluster-admin", func(t *testing.T) {
		checktest.WantResults(t, live.Check(t, Check), checktest.ResultWant{Runner: 1, Status: checks.StatusPass})
	})
	// A service account or an operator's own identity is scoped by design.
	t.Run("not-an-owner", func(t *testing.T) {
		now := time.Now()
		cert, key := live.MintClient("ci-operator", []string{"ops"}, now.Add(-time.Hour), now.Add(12*time.Hour))
		root := testroot.New(t)
		root.GuideRunner(testroot.GuideConfig, live.Kubeconfig(cert, key))
		checktest.WantResults(t, checktest.Check(t, Check, checktest.Root(root.Dir), apigatetest.With()), checktest.ResultWant{Runner: 1, Status: checks.StatusSkipped,
			Reason: "ci-operator is not a gateway owner (no group " + testenv.OwnersGroup + "); cluster-admin is not expected"})
	})
	if err := live.Clientset().RbacV1().ClusterRoleBindings().Delete(t.Context(), testenv.OwnersGroup, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitDenied(t, live)
	t.Run("owner-binding-deleted", func(t *testing.T) {
		checktest.WantResults(t, live.Check(t, Check), checktest.ResultWant{Runner: 1, Status: checks.StatusFail, Findings: []checktest.FindingWant{{Severity: checks.Error,
			Says: []string{checktest.OwnerDID + " (groups " + testenv.OwnersGroup, "is not cluster-admin: an access review for verb * on resource * is denied",
				"The owner-group binding changed; the runner is not what broke", "verb=* group=* resource=*: denied"}}}})
	})
}
