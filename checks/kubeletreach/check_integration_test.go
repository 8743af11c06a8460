//go:build integration

package kubeletreach_test

import (
	"slices"
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/checks/checktest/apigatetest"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/checktest"
	"github.com/socialwebcomputer/doctor/checks/kubeletreach"
	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/testkit/nodednsworld"
	"github.com/socialwebcomputer/doctor/testkit/testenv"
)

// TestLive: the one-byte log read of the node-local DNS pod goes through
// a real kube-apiserver to a kubelet on loopback (the fake kubelet, a
// closed port, one that never answers), on a node rented as the provider
// joins it.
func TestLive(t *testing.T) {
	for _, tc := range []struct {
		name    string
		kubelet func(t *testing.T, l *checktest.Live) (port int, requests func() []string)
		timeout time.Duration // --request-timeout
		elapsed time.Duration
		want    checktest.ResultWant
	}{
		{name: "healthy", kubelet: func(t *testing.T, l *checktest.Live) (int, func() []string) {
			k := l.StartFakeKubelet(t)
			return k.Port, k.Requests
		}, want: checktest.ResultWant{Status: checks.StatusPass}},
		{name: "kubelet-port-refused", kubelet: func(t *testing.T, _ *checktest.Live) (int, func() []string) {
			return testenv.ClosedKubeletPort(t), nil
		}, want: checktest.ResultWant{Status: checks.StatusFail, Findings: []checktest.FindingWant{{Severity: checks.Error,
			Says: []string{"cannot reach the kubelet of node rented-1", "connection refused", "1 of 1 node sampled"}}}}},
		// A kubelet that accepts and never answers: the read is bounded by
		// --request-timeout, and the finding says it went unanswered.
		{name: "kubelet-never-answers", timeout: 3 * time.Second, elapsed: 20 * time.Second,
			kubelet: func(t *testing.T, _ *checktest.Live) (int, func() []string) {
				return testenv.StartSilentKubelet(t), nil
			},
			want: checktest.ResultWant{Status: checks.StatusFail, Findings: []checktest.FindingWant{{Severity: checks.Error,
				Says: []string{"cannot reach the kubelet of node rented-1", "i/o timeout"}}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := checktest.Cluster(t, "", apigatetest.With())
			l.EnsureNamespace("gitlab-runner")
			port, requests := tc.kubelet(t, l)
			nodednsworld.Node(t, l.Env, "rented-1", "4", "16Gi", port, true)
			nodednsworld.DNSPod(t, l.Env, "node-dns-rented-1", "rented-1", testenv.PodRunning())
			start := time.Now()
			rs := l.Check(t, kubeletreach.Check, apigatetest.With(), checktest.Env(func(e *hostio.Env) { e.RequestTimeout = tc.timeout }))
			if tc.elapsed > 0 && time.Since(start) > tc.elapsed {
				t.Errorf("run took %s, want under %s", time.Since(start), tc.elapsed)
			}
			tc.want.Runner = 1
			checktest.WantResults(t, rs, tc.want)
			if requests != nil {
				// The read went through the apiserver to the kubelet, once,
				// for one byte of the node-local DNS pod's log.
				want := "GET /containerLogs/kube-system/node-dns-rented-1/" + testenv.ContainerName
				if got := requests(); len(slices.DeleteFunc(slices.Clone(got), func(r string) bool { return r != want })) != 1 {
					t.Errorf("the kubelet saw %v, want %q once", got, want)
				}
			}
		})
	}
}
