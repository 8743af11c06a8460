//go:build integration

package execupgrade_test

import (
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/checks/checktest/apigatetest"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/checktest"
	"github.com/socialwebcomputer/doctor/checks/execupgrade"
	"github.com/socialwebcomputer/doctor/testkit/testenv"
	"github.com/socialwebcomputer/doctor/testkit/testpki"
	"github.com/socialwebcomputer/doctor/testkit/testroot"
)

// live is the guide's exec path on loopback: the real apiserver with a
// node whose kubelet is a fake one (apimachinery's real SPDY upgrader),
// and, when front is given, real Caddy in front demanding the owner's
// client certificate as the kcp front does; the runner's kubeconfig names
// the front.
func live(t *testing.T, front *testenv.FrontOptions) *checktest.Live {
	l := checktest.Cluster(t, "", apigatetest.With())
	l.EnsureNamespace("gitlab-runner")
	l.CreateNode("rented-1", testenv.ReadyNodeStatus("4", "16Gi", l.StartFakeKubelet(t).Port))
	if front == nil {
		return l
	}
	o := *front
	// The front admits the owner's certificate and reaches the cluster as
	// the owner, as the kcp mount does.
	o.UpstreamCertPEM, o.UpstreamKeyPEM = l.OwnerCert(checktest.OwnerDID, time.Now().Add(12*time.Hour))
	server := l.StartFront(t, o).URL
	cert, key := l.OwnerCert(checktest.OwnerDID, time.Now().Add(12*time.Hour))
	root := testroot.New(t)
	root.GuideRunner(testroot.GuideConfig, testpki.Kubeconfig("tenant-ci", server, l.CAPEM, cert, key))
	return &checktest.Live{Env: l.Env, Root: root, Opts: l.Opts}
}

func TestLive(t *testing.T) {
	for _, tc := range []struct {
		name  string
		front *testenv.FrontOptions
		want  checktest.ResultWant
	}{
		{name: "direct", want: checktest.ResultWant{Runner: 1, Status: checks.StatusPass}},
		{name: "front-with-http11", front: &testenv.FrontOptions{HTTP11: true, RequireClientCert: true},
			want: checktest.ResultWant{Runner: 1, Status: checks.StatusPass}},
		// Caddy speaks HTTP/2 to the apiserver and answers the SPDY
		// upgrade with 502; plain GETs still pass.
		{name: "front-without-http11", front: &testenv.FrontOptions{HTTP11: false, RequireClientCert: true},
			want: checktest.ResultWant{Runner: 1, Status: checks.StatusFail, Findings: []checktest.FindingWant{{Severity: checks.Critical,
				Says: []string{"502", "versions 1.1", "kubectl exec", "Server: Caddy"}}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := live(t, tc.front)
			checktest.WantResults(t, l.Check(t, execupgrade.Check), tc.want)
		})
	}
}
