//go:build integration

package bench

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/testkit/testenv"
	"github.com/socialwebcomputer/doctor/testkit/testpki"
	"github.com/socialwebcomputer/doctor/testkit/testroot"
)

// Targets of issue 13.
const (
	targetRoundTrips = 4.0
)

// TestBenchLatency puts a latency-injecting TCP proxy (testenv.LatencyProxy,
// on loopback; no tc, no netem) between doctor and the cluster, at 0, 50 and
// 150 ms of round trip, straight to the apiserver and through Caddy as the
// kcp front, and records doctor's wall time in round trips, the longest
// chain of round trips in the proxy's log, and the requests on the critical
// path from the audit log's timestamps.
func TestBenchLatency(t *testing.T) {
	if os.Getenv("DOCTOR_BENCH") != "1" {
		t.Skip("benchmark: run bench/run.sh (it sets DOCTOR_BENCH=1)")
	}
	b := setup(t)
	front := b.env.StartFront(t, testenv.FrontOptions{HTTP11: true, RequireClientCert: true})
	frontURL, err := url.Parse(front.URL)
	if err != nil {
		t.Fatal(err)
	}
	apiURL, err := url.Parse(b.env.URL)
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	// "small (3 nodes)" runs cold: each run dials a new proxy port, so its
	// target is new to doctor's cache and kubelet-reach's log reads wait
	// for kube-system's list. "small, cache warm" dials one port for all
	// its runs, as a cron does: the warm-up run leaves the pods it read in
	// the cache, and the next runs send those reads with the first requests.
	for _, shape := range []string{"resting (0 nodes)", "small (3 nodes)", "small, cache warm"} {
		if shape == "small (3 nodes)" {
			defer seedSmall(t, b.env)()
		}
		warm := shape == "small, cache warm"
		for _, via := range []struct {
			name     string
			upstream string // host:port the proxy forwards to
			host     string // the name the kubeconfig dials, for TLS
		}{
			{"apiserver", apiURL.Host, "127.0.0.1"},
			{"Caddy front", "127.0.0.1:" + frontURL.Port(), "localhost"},
		} {
			for _, rtt := range []time.Duration{0, 50 * time.Millisecond, 150 * time.Millisecond} {
				proxy := testenv.StartLatencyProxy(t, via.upstream, rtt/2)
				_, port, _ := strings.Cut(proxy.Addr, ":")
				b.useServer(fmt.Sprintf("https://%s:%s", via.host, port))
				b.runDoctorVia(via.name) // warm the page cache and the binary (and, warm, doctor's cache)
				var walls []float64
				var chains []int
				var critical []int
				for i := 0; i < 5; i++ {
					if !warm {
						// A cold run, whatever port the new proxy was given.
						b.clearDoctorCache()
					}
					proxy.Reset()
					r := b.runDoctorVia(via.name)
					walls = append(walls, r.Wall.Seconds())
					chains = append(chains, testenv.RoundTrips(proxy.Events(), rtt/2))
					critical = append(critical, criticalPath(r.Requests, rtt/2))
					if i == 0 && rtt == 150*time.Millisecond && via.name == "apiserver" {
						t.Logf("%s, %s at %s, one run's requests as the apiserver received them:\n%s\n%s", shape, via.name, rtt, timeline(r), connStats(proxy.Events(), r))
					}
					if warm {
						continue
					}
					proxy.Close()
					proxy = testenv.StartLatencyProxy(t, via.upstream, rtt/2)
					_, port, _ = strings.Cut(proxy.Addr, ":")
					b.useServer(fmt.Sprintf("https://%s:%s", via.host, port))
				}
				proxy.Close()
				sort.Float64s(walls)
				sort.Ints(chains)
				sort.Ints(critical)
				inRTT := "—"
				if rtt > 0 {
					x := median(walls) / rtt.Seconds()
					inRTT = fmt.Sprintf("%.2f %s", x, verdict(x <= targetRoundTrips, "≤ 4"))
				}
				rows = append(rows, fmt.Sprintf("| %s | %s | %d ms | %s (min %s, max %s) | %s | %v | %v |", shape, via.name, rtt.Milliseconds(),
					ms(median(walls)), ms(walls[0]), ms(walls[len(walls)-1]), inRTT, chains, critical))
				t.Logf("%s", rows[len(rows)-1])
			}
		}
	}
	b.useServer(b.env.URL)
	t.Logf("RESULTS latency\n| cluster | path | RTT | doctor wall, median of 5 | wall in RTTs | proxy chain, round trips (each run) | requests on the critical path (each run) |\n|---|---|---|---|---|---|---|\n%s",
		strings.Join(rows, "\n"))
}

// clearDoctorCache empties doctor's cache (XDG_CACHE_HOME of cmdEnv).
func (b *bench) clearDoctorCache() {
	if err := os.RemoveAll(filepath.Join(b.dir, "cache")); err != nil {
		b.t.Fatal(err)
	}
}

// useServer rewrites the runner's kubeconfig to dial server.
func (b *bench) useServer(server string) {
	kc := testpki.Kubeconfig("tenant-ci", server, b.env.CAPEM, b.cert, b.key)
	if err := os.WriteFile(filepath.Join(b.root, testroot.KubeconfigPath), kc, 0o600); err != nil {
		b.t.Fatal(err)
	}
}

// runDoctorVia is runDoctor for a run whose requests may reach the
// apiserver through the front, as the front's identity. It runs doctor
// without peakrss: these rows report no RSS.
func (b *bench) runDoctorVia(via string) doctorRun {
	offset := b.auditSize()
	r := b.execDoctor(false)
	if via == "apiserver" {
		r.Requests = b.waitRequests(offset, doctorUA)
	} else {
		r.Requests = b.waitRequestsAnyUser(offset, doctorUA)
	}
	return r
}

// criticalPath is the longest chain of requests in which each reached the
// apiserver only after the one before had been answered and the answer had
// crossed the network back and the next request forth: received at least
// one one-way delay after the other was done.
func criticalPath(evs []auditEvent, oneWay time.Duration) int {
	sorted := append([]auditEvent(nil), evs...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Received.Before(sorted[j].Received) })
	depth := make([]int, len(sorted))
	best := 0
	for j, e := range sorted {
		depth[j] = 1
		for i := 0; i < j; i++ {
			if !e.Received.Before(sorted[i].Done.Add(oneWay)) && depth[i]+1 > depth[j] {
				depth[j] = depth[i] + 1
			}
		}
		best = max(best, depth[j])
	}
	return best
}

// timeline lists a run's requests by when the apiserver received them,
// from the run's start.
func timeline(r doctorRun) string {
	evs := append([]auditEvent(nil), r.Requests...)
	sort.Slice(evs, func(i, j int) bool { return evs[i].Received.Before(evs[j].Received) })
	var sb strings.Builder
	for _, e := range evs {
		uri := e.RequestURI
		if j := strings.Index(uri, "continue="); j >= 0 {
			uri = uri[:j] + "continue=…"
		}
		fmt.Fprintf(&sb, "%7.1f ms → %7.1f ms  %s %s %d\n", ms0(e.Received.Sub(r.Start)), ms0(e.Done.Sub(r.Start)), e.Verb, uri, e.ResponseStatus.Code)
	}
	return sb.String()
}

func ms0(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// connStats counts the TCP connections a run opened through the proxy, and
// splits its wall time: start-up before its first connection, and the
// time from the last answer it received to its exit.
func connStats(evs []testenv.ProxyEvent, r doctorRun) string {
	n := 0
	var first, last time.Time
	for _, e := range evs {
		switch e.Kind {
		case testenv.Connect:
			n++
			if first.IsZero() || e.Read.Before(first) {
				first = e.Read
			}
		case testenv.Down:
			// What the proxy still forwards after the exit (a GOAWAY) is
			// not an answer the run waited for.
			if e.Sent.After(last) && e.Sent.Before(r.Start.Add(r.Wall)) {
				last = e.Sent
			}
		}
	}
	end := r.Start.Add(r.Wall)
	return fmt.Sprintf("%d connections; first connect %.1f ms after start; last answer %.1f ms before exit", n, ms0(first.Sub(r.Start)), ms0(end.Sub(last)))
}
