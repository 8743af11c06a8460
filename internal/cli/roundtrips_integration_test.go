//go:build integration

package cli

import (
	"net/url"
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/internal/testenv"
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
	rep := runAgainst(t, pauseConfig, ownerKubeconfig(env, "https://"+proxy.Addr, time.Now().Add(12*time.Hour)), time.Hour)
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
	n := testenv.RoundTrips(evs, oneWay)
	t.Logf("%d round trips in a chain, %d connections, %d chunks through the proxy", n, conns, len(evs))
	if n > maxRoundTrips {
		t.Errorf("a healthy run waits for %d round trips one after another; the goal is at most %d (TCP, TLS, the reads, the log reads)", n, maxRoundTrips)
	}
	// One HTTP/2 connection carries every read; exec-upgrade's two probes
	// need an HTTP/1.1 connection each (an upgrade takes its connection).
	if conns > 3 {
		t.Errorf("%d connections to one target: the reads must share one, and the two exec probes take one each", conns)
	}
	if n < 3 {
		t.Errorf("%d round trips: fewer than TCP, TLS and one read; the proxy's count is broken", n)
	}
}
