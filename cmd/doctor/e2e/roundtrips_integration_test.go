//go:build integration

package e2e

import (
	"net/url"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/socialwebcomputer/doctor/report"
	"github.com/socialwebcomputer/doctor/testkit/testenv"
)

// maxRoundTrips is issue 13's goal for a healthy run across the internet:
// TCP, TLS 1.3, every read that needs no earlier answer at once, and the
// one read that does (kubelet-reach's log reads need kube-system's pods).
const maxRoundTrips = 4

// TestRoundTripsOfAHealthyRun is the regression guard of the DAG's shape: a
// healthy run through a latency proxy (50 ms each way, on loopback), and
// the longest chain of round trips in the proxy's log, each sent only after
// the one before was answered. It counts, it does not time: a check that
// puts its request behind another's answer grows the chain, however fast
// the machine.
func TestRoundTripsOfAHealthyRun(t *testing.T) {
	env := testenv.Start(t)
	env.BindOwnersToClusterAdmin()
	env.EnsureNamespace("gitlab-runner")
	createNodeDNSDaemonSet(t, env)
	rentNode(t, env, "rented-1", "4", "16Gi", 0)
	createPriorityClass(t, env, "gitlab-pause", -10)
	api, err := url.Parse(env.URL)
	if err != nil {
		t.Fatal(err)
	}
	const oneWay = 50 * time.Millisecond
	proxy := testenv.StartLatencyProxy(t, api.Host, oneWay)
	kubeconfig := ownerKubeconfig(env, "https://"+proxy.Addr, time.Now().Add(12*time.Hour))
	cache := t.TempDir()
	rep := runAgainstWith(t, pauseConfig, kubeconfig, time.Hour, "--cache-dir", cache)
	n := assertRoundTrips(t, rep, proxy, maxRoundTrips)

	// The next run sends the reads of the pods this one read with its
	// first requests (--cache-dir): one round trip fewer, the same report.
	proxy.Reset()
	warm := runAgainstWith(t, pauseConfig, kubeconfig, time.Hour, "--cache-dir", cache)
	if w := assertRoundTrips(t, warm, proxy, maxRoundTrips-1); w != n-1 {
		t.Errorf("the run with the cache waits for %d round trips, the one before for %d: want one fewer", w, n)
	}
	if a, b := findingIDs(rep), findingIDs(warm); a != b {
		t.Errorf("the cache changed the findings: %s, then %s", a, b)
	}
	if a, b := checkStatuses(rep), checkStatuses(warm); a != b {
		t.Errorf("the cache changed the checks' statuses:\n%s\nthen\n%s", a, b)
	}

	// A remembered pod that is gone costs a wasted read, not a finding:
	// the check reads the node's new pod, one round trip later.
	if err := env.Clientset().CoreV1().Pods("kube-system").Delete(t.Context(), "node-dns-rented-1", metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
		t.Fatal(err)
	}
	createDNSPod(t, env, "node-dns-rented-1-b", "rented-1", testenv.PodRunning())
	proxy.Reset()
	stale := runAgainstWith(t, pauseConfig, kubeconfig, time.Hour, "--cache-dir", cache)
	if s := assertRoundTrips(t, stale, proxy, maxRoundTrips); s != n {
		t.Errorf("with the remembered pod gone, the run waits for %d round trips, want %d as without a cache", s, n)
	}
	if a, b := checkStatuses(rep), checkStatuses(stale); a != b {
		t.Errorf("a stale cache changed the checks' statuses:\n%s\nthen\n%s", a, b)
	}
}

func findingIDs(rep *report.Report) string {
	var s []string
	for _, f := range rep.Findings {
		s = append(s, f.Check+" "+f.Fingerprint)
	}
	return strings.Join(s, ", ")
}

func checkStatuses(rep *report.Report) string {
	var s []string
	for _, c := range rep.Checks {
		s = append(s, c.ID+" "+string(c.Status))
	}
	return strings.Join(s, ", ")
}

// assertRoundTrips checks a run through the proxy: no check unknown, at
// most max round trips in a chain, and the connections the run needs. It
// returns the chain's length.
func assertRoundTrips(t *testing.T, rep *report.Report, proxy *testenv.LatencyProxy, max int) int {
	t.Helper()
	for _, c := range rep.Checks {
		if c.Status == "unknown" {
			t.Errorf("%s unknown: %s", c.ID, c.Reason)
		}
	}
	evs := proxy.Events()
	conns := 0
	for _, e := range evs {
		if e.Kind == testenv.Connect {
			conns++
		}
	}
	n := testenv.RoundTrips(evs, proxy.Delay)
	t.Logf("%d round trips in a chain, %d connections, %d chunks through the proxy", n, conns, len(evs))
	if n > max {
		t.Errorf("a healthy run waits for %d round trips one after another; the goal is at most %d (TCP, TLS, the reads, the log reads unless remembered)", n, max)
	}
	// One HTTP/2 connection carries every read; exec-upgrade's two probes
	// need an HTTP/1.1 connection each (an upgrade takes its connection).
	if conns > 3 {
		t.Errorf("%d connections to one target: the reads must share one, and the two exec probes take one each", conns)
	}
	if n < 3 {
		t.Errorf("%d round trips: fewer than TCP, TLS and one read; the proxy's count is broken", n)
	}
	return n
}
