//go:build integration

package nodelocaldns

import (
	"strings"
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/checks/checktest/apigatetest"

	"github.com/miekg/dns"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/checktest"
	"github.com/socialwebcomputer/doctor/checks/client/dnsq/dnsqtest"
	"github.com/socialwebcomputer/doctor/checks/facts/configfacts"
	"github.com/socialwebcomputer/doctor/checks/facts/nodedns"
	"github.com/socialwebcomputer/doctor/report"
	"github.com/socialwebcomputer/doctor/testkit/fixture"
	"github.com/socialwebcomputer/doctor/testkit/nodednsworld"
	"github.com/socialwebcomputer/doctor/testkit/testenv"
)

// jobToken rides in the repository URL, as CI_REPOSITORY_URL carries it; no
// finding may repeat it.
const jobToken = "job-token-must-not-leak"

// TestLive is the guide's "Could not resolve host" row on a real apiserver
// (checktest.Cluster, the guide's runner with an owner's kubeconfig) and a
// real DNS server on loopback given as --dns-server ("" gives none, so the
// direct probe must not run). Each case's result is exact, and each
// finding folds where it must: a probe that finds no server is the
// consequence of a cluster where no node runs one.
func TestLive(t *testing.T) {
	withDNS := func(live *checktest.Live) {
		nodednsworld.DaemonSet(t, live.Env)
		nodednsworld.Node(t, live.Env, "rented-1", "4", "16Gi", 0, true)
		nodednsworld.DNSPod(t, live.Env, "node-dns-rented-1", "rented-1", testenv.PodRunning())
	}
	healthy := func(t *testing.T) (string, func() int64) {
		s := dnsqtest.Healthy(t, "127.0.0.9")
		return s.Addr, s.Queries
	}
	none := func(*testing.T) (string, func() int64) { return "", nil }
	finding := func(sev checks.Severity, says ...string) checktest.FindingWant {
		return checktest.FindingWant{Severity: sev, Says: says}
	}
	for _, tc := range []struct {
		name   string
		shape  func(live *checktest.Live)
		server func(t *testing.T) (addr string, queries func() int64)
		want   checktest.ResultWant
		// folded maps text of a finding to the check it must fold under
		// ("" for a root).
		folded  map[string]string
		probed  bool // the server must have been asked
		elapsed time.Duration
	}{
		{name: "healthy", shape: withDNS, server: healthy, probed: true, want: checktest.ResultWant{Status: checks.StatusPass}},
		{name: "no-daemonset-at-rest", shape: func(*checktest.Live) {}, server: none,
			want: checktest.ResultWant{Status: checks.StatusFail, Findings: []checktest.FindingWant{
				finding(checks.Warning, "the provider's add-on pass never applied the node network add-ons", "zero nodes")}}},
		{name: "no-daemonset-with-a-node-probe-refused", shape: func(live *checktest.Live) {
			nodednsworld.Node(t, live.Env, "rented-1", "4", "16Gi", 0, true)
		}, server: func(t *testing.T) (string, func() int64) { return dnsqtest.Closed(t), nil },
			want: checktest.ResultWant{Status: checks.StatusFail, Findings: []checktest.FindingWant{
				finding(checks.Error, "The one node does not run a DNS server"),
				finding(checks.Error, "refuses DNS over UDP and TCP")}},
			folded: map[string]string{"add-on pass": "", "refuses DNS": ID}},
		{name: "node-without-label", shape: func(live *checktest.Live) {
			nodednsworld.DaemonSet(t, live.Env)
			nodednsworld.Node(t, live.Env, "rented-1", "4", "16Gi", 0, false)
		}, server: healthy, probed: true,
			want: checktest.ResultWant{Status: checks.StatusFail, Findings: []checktest.FindingWant{
				finding(checks.Error, "Node rented-1 is not labelled socialweb.computer/node-local-dns=true", "older user_data")}}},
		{name: "dns-pod-not-ready-probe-times-out", shape: func(live *checktest.Live) {
			nodednsworld.DaemonSet(t, live.Env)
			nodednsworld.Node(t, live.Env, "rented-1", "4", "16Gi", 0, true)
			nodednsworld.DNSPod(t, live.Env, "node-dns-rented-1", "rented-1", testenv.PodWaiting("CrashLoopBackOff", "back-off 5m0s restarting failed container"))
		}, server: func(t *testing.T) (string, func() int64) { return dnsqtest.Silent(t).Addr, nil },
			want: checktest.ResultWant{Status: checks.StatusFail, Findings: []checktest.FindingWant{
				finding(checks.Error, "pod on node rented-1 is not Ready", "CrashLoopBackOff"),
				finding(checks.Error, "Nothing answers DNS at")}},
			folded:  map[string]string{"is not Ready": "", "Nothing answers": ID},
			elapsed: 8 * time.Second},
		{name: "dns-pod-ready-server-fails", shape: withDNS, server: func(t *testing.T) (string, func() int64) {
			s := dnsqtest.Rcode(t, dns.RcodeServerFailure)
			return s.Addr, s.Queries
		}, probed: true,
			want: checktest.ResultWant{Status: checks.StatusFail, Findings: []checktest.FindingWant{
				finding(checks.Error, "answers SERVFAIL for git.example.invalid", "Could not resolve host: git.example.invalid")}},
			folded: map[string]string{"SERVFAIL": ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			live := checktest.Cluster(t, "", apigatetest.With())
			live.EnsureNamespace("gitlab-runner")
			tc.shape(live)
			addr, queries := tc.server(t)
			opts := []checktest.Option{checktest.Setting(configfacts.RepositoryURLSetting.Name, "https://gitlab-ci-token:"+jobToken+"@git.example.invalid/group/project.git")}
			if addr != "" {
				opts = append(opts, checktest.Setting(nodedns.ServerSetting.Name, addr))
			}
			start := time.Now()
			rs := live.Check(t, Check, opts...)
			if tc.elapsed > 0 && time.Since(start) > tc.elapsed {
				t.Errorf("run took %s, want under %s", time.Since(start), tc.elapsed)
			}
			tc.want.Runner = 1
			checktest.WantResults(t, rs, tc.want)
			assertFolded(t, report.Build(&checks.Result{Checks: rs}, nil, "test", time.Now()), tc.folded)
			if queries != nil && (queries() > 0) != tc.probed {
				t.Errorf("the DNS server was asked %d questions; want asked: %v", queries(), tc.probed)
			}
			for _, r := range rs {
				if text := checktest.Text(r); strings.Contains(text, jobToken) {
					t.Errorf("a finding repeats the job token from --repository-url:\n%s", text)
				} else if strings.Contains(text, "169.254.20.10:53,") || strings.Contains(text, "udp 169.254.20.10") {
					t.Errorf("a finding shows a query to the production default:\n%s", text)
				}
			}
		})
	}
}

// assertFolded finds each finding by its text and checks what it folds
// under: one check reports both the cause and its consequence.
func assertFolded(t *testing.T, rep *report.Report, want map[string]string) {
	t.Helper()
	for text, by := range want {
		var f *report.Finding
		for i := range rep.Findings {
			if strings.Contains(rep.Findings[i].Cause, text) {
				f = &rep.Findings[i]
				break
			}
		}
		if f == nil {
			t.Errorf("no finding says %q", text)
			continue
		}
		if got := fixture.Deref(f.CausedBy); got != by {
			t.Errorf("finding %q folds under %q, want %q", text, got, by)
		}
	}
}
