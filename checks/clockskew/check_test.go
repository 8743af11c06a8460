package clockskew

import (
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/checks/checktest/apigatetest"
	"github.com/socialwebcomputer/doctor/checks/configdecode"
	"github.com/socialwebcomputer/doctor/checks/gitlabreach"
	"github.com/socialwebcomputer/doctor/checks/runnertoken"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/checktest"
	"github.com/socialwebcomputer/doctor/checks/client/gitlab"
	"github.com/socialwebcomputer/doctor/checks/client/gitlab/gitlabtest"
	"github.com/socialwebcomputer/doctor/checks/facts/kubefacts"
	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/testkit/testroot"
)

func TestMain(m *testing.M) {
	os.Setenv(hostio.LoopbackOnlyVar, "1")
	os.Exit(m.Run())
}

// skewedServer answers every request with a Date header skew ahead of the
// wall clock (negative: behind), as a server with a wrong clock does.
func skewedServer(t *testing.T, skew time.Duration) *httptest.Server {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// net/http keeps a Date the handler set.
		w.Header().Set("Date", time.Now().Add(skew).UTC().Format(http.TimeFormat))
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"kind":"Namespace","apiVersion":"v1","metadata":{"name":"gitlab-runner"}}`))
	}))
	t.Cleanup(s.Close)
	return s
}

// TestAPIClientRecordsDate: the API client doctor uses for every check
// records the Date of its answers, so clock-skew needs no request.
func TestAPIClientRecordsDate(t *testing.T) {
	for _, skew := range []time.Duration{0, 90 * time.Second, -45 * time.Second} {
		s := skewedServer(t, skew)
		env := &hostio.Env{Clocks: &hostio.ServerClocks{}}
		api, err := kubefacts.NewAPI(env, &rest.Config{Host: s.URL})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := api.Client.CoreV1().Namespaces().Get(t.Context(), "gitlab-runner", metav1.GetOptions{}); err != nil {
			t.Fatal(err)
		}
		d, ok := env.Clocks.Date(kubefacts.ClockAPIServer, s.URL)
		if !ok {
			t.Fatalf("no Date recorded for %s", s.URL)
		}
		if got := d.Skew(); (got - skew).Abs() > 2*time.Second {
			t.Errorf("skew %s, want about %s", got, skew)
		}
	}
}

// gitlabAt is the guide's config.toml with its runner's url at gl: a
// closed port of loopback, so the GitLab checks clock-skew waits for
// (gitlab-reachability, runner-token) are refused on this machine.
func gitlabAt(gl string) string {
	return strings.Replace(testroot.GuideConfig, "https://gitlab.example.invalid:8443/", gl+"/", 1)
}

// skewed is a Date header a server skew ahead of this host's clock sent
// (negative: behind).
type skewed struct {
	kind, server string
	skew         time.Duration
}

// record puts the answers of servers in clocks, as the clients record
// them (SawDate: the header, and this host's clock when it arrived). A
// Date header has one-second resolution: the header is written half a
// second past the skew, so the skew measured rounds to the skew given,
// and written again in the rare case the clock ticked between the two
// reads.
func record(t *testing.T, clocks *hostio.ServerClocks, servers ...skewed) {
	t.Helper()
	env := &hostio.Env{Clocks: clocks}
	for _, s := range servers {
		for try := 0; ; try++ {
			now := time.Now()
			env.SawDate(s.kind, s.server, http.Header{"Date": {now.Add(s.skew + 500*time.Millisecond).UTC().Format(http.TimeFormat)}}, now.Add(-5*time.Millisecond))
			if d, _ := clocks.Date(s.kind, s.server); (d.Skew() - s.skew).Abs() < 500*time.Millisecond {
				break
			}
			if try == 10 {
				t.Fatalf("%s %s: the skew recorded does not round to %s", s.kind, s.server, s.skew)
			}
		}
	}
}

// dials is every address the run dialled (hostio.Env.Dial logs each at
// level 2).
type dials struct {
	mu    sync.Mutex
	addrs []string
}

func (d *dials) log(level int, format string, args ...any) {
	if level == 2 && strings.HasPrefix(format, "dial %s %s") && len(args) >= 2 {
		d.mu.Lock()
		d.addrs = append(d.addrs, args[1].(string))
		d.mu.Unlock()
	}
}

// onlyLoopback fails unless every dial of the run went to loopback.
func (d *dials) onlyLoopback(t *testing.T) {
	t.Helper()
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, a := range d.addrs {
		if !strings.HasPrefix(a, "127.0.0.1:") {
			t.Errorf("the run dialled %s, not loopback", a)
		}
	}
}

// runSeen runs the check for the guide's runner, its GitLab at gl, on a host
// whose apiserver client is for api (a given fact, and api-auth's review of
// it answered), with the Dates seen recorded: what the clients of api-auth,
// gitlab-reachability and runner-token record when they are answered.
func runSeen(t *testing.T, api, gl string, seen ...skewed) []checks.CheckResult {
	t.Helper()
	root := testroot.New(t)
	root.Write("/etc/gitlab-runner/config.toml", gitlabAt(gl), 0o600)
	clocks := &hostio.ServerClocks{}
	record(t, clocks, seen...)
	d := &dials{}
	rs := checktest.Check(t, Check, checktest.Root(root.Dir), gates,
		checktest.Fact(kubefacts.APIClientFact, &kubefacts.APIClient{Server: api}),
		checktest.Fact(kubefacts.IdentityFact, &kubefacts.Identity{User: "ci-runner", Server: api}),
		checktest.Env(func(e *hostio.Env) { e.Clocks, e.Log = clocks, d.log }))
	d.onlyLoopback(t)
	return rs
}

func pass() checktest.ResultWant { return checktest.ResultWant{Runner: 1, Status: checks.StatusPass} }

func fail(sev checks.Severity, says ...string) checktest.ResultWant {
	return checktest.ResultWant{Runner: 1, Status: checks.StatusFail, Findings: []checktest.FindingWant{{Severity: sev, Says: says}}}
}

func TestJudge(t *testing.T) {
	const api, gl = "https://127.0.0.1:6443", "https://127.0.0.1:1"
	s := time.Second
	apiserver := func(skew time.Duration) skewed { return skewed{kubefacts.ClockAPIServer, api, skew} }
	gitLab := func(skew time.Duration) skewed { return skewed{gitlab.ClockKind, gl, skew} }
	for _, tc := range []struct {
		name string
		seen []skewed
		want checktest.ResultWant
	}{
		{"none-seen", nil, checktest.ResultWant{Runner: 1, Status: checks.StatusSkipped,
			Reason: "no answer from the apiserver or GitLab carried a Date header to compare with"}},
		// A Date recorded for another server is not this runner's.
		{"other-servers-only", []skewed{{kubefacts.ClockAPIServer, "https://127.0.0.2:6443", 95 * s}, {gitlab.ClockKind, "https://127.0.0.2:1", 95 * s}},
			checktest.ResultWant{Runner: 1, Status: checks.StatusSkipped, Reason: "no answer from the apiserver or GitLab carried a Date header"}},
		{"in-step", []skewed{apiserver(0), gitLab(s)}, pass()},
		// The resolution of the header and the round trip are no skew.
		{"within-measurement", []skewed{apiserver(9 * s)}, pass()},
		{"apiserver-wrong", []skewed{apiserver(95 * s), gitLab(0)}, fail(checks.Error,
			`[[runners]] #1 "kcp-tenant-kubernetes": The apiserver at `+api+" has a clock 1m35s ahead of this host's, while the GitLab at "+gl+" agrees with it: that server's clock is wrong",
			"x509: certificate has expired or is not yet valid", "machine that serves "+api,
			"Date header from apiserver "+api, "server 1m35s ahead", "Date header from GitLab "+gl, "in step")},
		{"gitlab-wrong-warning", []skewed{apiserver(0), gitLab(-20 * s)}, fail(checks.Warning,
			"The GitLab at "+gl+" has a clock 20s behind of this host's, while the apiserver at "+api+" agrees with it", "machine that serves "+gl)},
		{"host-wrong", []skewed{apiserver(-40 * s), gitLab(-42 * s)}, fail(checks.Error,
			"This host's clock is 42s ahead: the apiserver at "+api+" and GitLab at "+gl+" agree with each other and not with it", "timedatectl set-ntp true",
			"server 40s behind", "server 42s behind")},
		{"one-clock-only", []skewed{gitLab(15 * s)}, fail(checks.Warning,
			"This host's clock and the GitLab's at "+gl+" disagree by 15s (the server is ahead); with no third clock to ask, either may be wrong",
			"Compare both with a trusted clock")},
		{"both-off-differently", []skewed{apiserver(60 * s), gitLab(-60 * s)}, fail(checks.Error, "disagree by 1m0s", "either may be wrong")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checktest.WantResults(t, runSeen(t, api, gl, tc.seen...), tc.want)
		})
	}
}

// TestRecordedByTheClients: nothing given but, for the apiserver, its
// client. GitLab's Date arrives with gitlab-reachability's and
// runner-token's requests to a GitLab on loopback (TLS, its name resolved
// by a DNS server on loopback), the apiserver's with api-auth's own
// self-review; each server keeps a clock of its own, and clock-skew
// compares what the clients recorded.
func TestRecordedByTheClients(t *testing.T) {
	const token = "glrt-valid-clock-token-0123456789"
	// A Date header has one-second resolution: the words of a live skew
	// name no number the second it was stamped in could change.
	for _, tc := range []struct {
		name        string
		gitlab, api time.Duration
		noAPI       bool
		want        func(gl, api string) checktest.ResultWant
	}{
		{name: "gitlab-in-step", noAPI: true, want: func(string, string) checktest.ResultWant { return pass() }},
		{name: "gitlab-ahead", gitlab: 2 * time.Minute, noAPI: true, want: func(gl, _ string) checktest.ResultWant {
			return fail(checks.Error, "This host's clock and the GitLab's at "+gl+" disagree by ", "(the server is ahead)",
				"x509: certificate has expired or is not yet valid", "Date header from GitLab "+gl, "s ahead, round trip")
		}},
		{name: "apiserver-ahead", api: 5 * time.Minute, want: func(gl, api string) checktest.ResultWant {
			return fail(checks.Error, "The apiserver at "+api+" has a clock ", " ahead of this host's, while the GitLab at "+gl+" agrees with it",
				"Date header from apiserver "+api, "Date header from GitLab "+gl)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gl := gitlabtest.NewGitLab(t, gitlabtest.Options{Tokens: map[string]int{token: 200}, DateSkew: tc.gitlab})
			dns := gitlabtest.NewDNS(t, map[string][]string{gitlabtest.Host: {"127.0.0.1"}})
			root := gitlabtest.NewRoot(t, gitlabtest.Config(gitlabtest.Runner{Name: "kcp-tenant-kubernetes", URL: gl.URL(),
				Token: token, CAFile: gitlabtest.CAPath}), gl.CA)
			d := &dials{}
			opts := []checktest.Option{checktest.Root(root.Dir), checktest.Env(func(e *hostio.Env) {
				e.Settings, e.Log = gitlabtest.Settings(dns.Addr, dns.Addr, 5*time.Second), d.log
			})}
			apiURL := ""
			if !tc.noAPI {
				// The root holds no kubeconfig: the client is given, and
				// records into the run's clocks.
				s := skewedServer(t, tc.api)
				apiURL = s.URL
				clocks := &hostio.ServerClocks{}
				api, err := kubefacts.NewAPI(&hostio.Env{Clocks: clocks, Log: d.log}, &rest.Config{Host: s.URL})
				if err != nil {
					t.Fatal(err)
				}
				opts = append(opts, checktest.Fact(kubefacts.APIClientFact, api), checktest.Env(func(e *hostio.Env) { e.Clocks = clocks }))
			}
			rs := checktest.Check(t, Check, append(opts, gates)...)
			d.onlyLoopback(t)
			checktest.WantResults(t, rs, tc.want(strings.TrimSuffix(gl.URL(), "/"), apiURL))
		})
	}
}

// gates are the checks clock-skew reads the clients of, by ID (api-auth's
// apiserver client, runner-token's GitLab answers), and what they run
// after: they run, as under doctor run --only clock-skew.
var gates = checktest.With(append(apigatetest.Checks(), runnertoken.Check, gitlabreach.Check, configdecode.Check)...)
