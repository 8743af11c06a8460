//go:build integration

package apiauth

import (
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/checks/clusteroverride"
	"github.com/socialwebcomputer/doctor/checks/kubeconfigfile"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/checktest"
	"github.com/socialwebcomputer/doctor/testkit/testroot"
)

// A real kube-apiserver authenticates the runner's certificate: the
// owner's passes, one the cluster's CA signed for an identity with no RBAC
// passes too (authenticated is all api-auth asks), and an expired one is
// answered 401, which api-auth lays on the certificate's dates.
func TestLive(t *testing.T) {
	live := checktest.Cluster(t, "", checktest.With(kubeconfigfile.Check, clusteroverride.Check))
	t.Run("owner", func(t *testing.T) {
		checktest.WantResults(t, live.Check(t, Check), checktest.ResultWant{Runner: 1, Status: checks.StatusPass})
	})
	now := time.Now()
	as := func(t *testing.T, notBefore, notAfter time.Time) []checks.CheckResult {
		cert, key := live.MintClient("ci-runner", nil, notBefore, notAfter)
		root := testroot.New(t)
		root.GuideRunner(testroot.GuideConfig, live.Kubeconfig(cert, key))
		return checktest.Check(t, Check, checktest.Root(root.Dir), checktest.With(kubeconfigfile.Check, clusteroverride.Check))
	}
	t.Run("no-rbac-is-authenticated", func(t *testing.T) {
		checktest.WantResults(t, as(t, now.Add(-time.Hour), now.Add(12*time.Hour)), checktest.ResultWant{Runner: 1, Status: checks.StatusPass})
	})
	t.Run("expired", func(t *testing.T) {
		checktest.WantResults(t, as(t, now.Add(-2*time.Hour), now.Add(-time.Hour)), checktest.ResultWant{Runner: 1, Status: checks.StatusFail,
			Findings: []checktest.FindingWant{{Severity: checks.Critical, Says: []string{
				live.URL + " answers 401 Unauthorized: the client certificate is outside its validity dates.", "CN=ci-runner"}}}})
	})
}
