package clockskew

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/checktest"
	"github.com/socialwebcomputer/doctor/checks/facts"
	"github.com/socialwebcomputer/doctor/internal/hostio"
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
		api, err := facts.NewAPI(env, &rest.Config{Host: s.URL})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := api.Client.CoreV1().Namespaces().Get(t.Context(), "gitlab-runner", metav1.GetOptions{}); err != nil {
			t.Fatal(err)
		}
		d, ok := env.Clocks.Date(facts.ClockAPIServer, s.URL)
		if !ok {
			t.Fatalf("no Date recorded for %s", s.URL)
		}
		if got := d.Skew(); (got - skew).Abs() > 2*time.Second {
			t.Errorf("skew %s, want about %s", got, skew)
		}
	}
}

func date(kind, server string, skew time.Duration) hostio.ServerDate {
	now := time.Now()
	return hostio.ServerDate{Kind: kind, Server: server, Date: now.Add(skew), Local: now, RTT: 5 * time.Millisecond}
}

// runJudge runs the check's judgement through the engine, with the dates
// given instead of recorded.
func runJudge(t *testing.T, seen ...hostio.ServerDate) checks.CheckResult {
	t.Helper()
	c := *Check
	c.Requires = nil
	c.Run = func(p *checks.Pass) error { return judge(p, `[[runners]] #1 "k"`, seen) }
	res, err := checks.Run(context.Background(), &hostio.Env{Root: t.TempDir()}, []*checks.Check{&c}, checks.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return res.Checks[0]
}

func TestJudge(t *testing.T) {
	const api, gl = "https://127.0.0.1:6443", "https://gitlab.example.invalid:8443"
	s := time.Second
	cases := []struct {
		name   string
		seen   []hostio.ServerDate
		status checks.Status
		sev    checks.Severity
		says   []string
	}{
		{"none-seen", nil, checks.StatusSkipped, 0, []string{"no answer from the apiserver or GitLab carried a Date header"}},
		{"in-step", []hostio.ServerDate{date("apiserver", api, 0), date("GitLab", gl, s)}, checks.StatusPass, 0, nil},
		// The resolution of the header and the round trip are no skew.
		{"within-measurement", []hostio.ServerDate{date("apiserver", api, 9*s)}, checks.StatusPass, 0, nil},
		{"apiserver-wrong", []hostio.ServerDate{date("apiserver", api, 95*s), date("GitLab", gl, 0)}, checks.StatusFail, checks.Error,
			[]string{"The apiserver at " + api + " has a clock 1m35s ahead of this host's, while the GitLab at " + gl + " agrees with it: that server's clock is wrong",
				"x509: certificate has expired or is not yet valid", "machine that serves " + api}},
		{"host-wrong", []hostio.ServerDate{date("apiserver", api, -40*s), date("GitLab", gl, -42*s)}, checks.StatusFail, checks.Error,
			[]string{"This host's clock is 42s ahead: the apiserver at " + api + " and GitLab at " + gl + " agree with each other", "timedatectl set-ntp true"}},
		{"one-clock-only", []hostio.ServerDate{date("GitLab", gl, 15*s)}, checks.StatusFail, checks.Warning,
			[]string{"This host's clock and the GitLab's at " + gl + " disagree by 15s (the server is ahead); with no third clock to ask, either may be wrong"}},
		{"both-off-differently", []hostio.ServerDate{date("apiserver", api, 60*s), date("GitLab", gl, -60*s)}, checks.StatusFail, checks.Error,
			[]string{"disagree by 1m0s", "either may be wrong"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := runJudge(t, tc.seen...)
			checktest.WantSays(t, r, tc.status, tc.says...)
			if tc.sev != 0 && (len(r.Findings) == 0 || r.Findings[0].Severity != tc.sev) {
				t.Errorf("want a %s finding:\n%s", tc.sev, checktest.Text(r))
			}
			if tc.status == checks.StatusPass && len(r.Findings) > 0 {
				t.Errorf("want no finding:\n%s", checktest.Text(r))
			}
		})
	}
}
