package runnermetrics_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/checktest"
	rm "github.com/socialwebcomputer/doctor/checks/facts/runnermetrics"
	"github.com/socialwebcomputer/doctor/checks/facts/runnermetrics/runnermetricstest"
	"github.com/socialwebcomputer/doctor/checks/runnermetrics"
	"github.com/socialwebcomputer/doctor/testkit/closedport"
	"github.com/socialwebcomputer/doctor/testkit/testroot"
)

// Two Docker runners of one process, as config.toml holds them. The tokens
// shorten (helpers/shorten_token.go, v19.3.0) to the runner labels below.
const (
	tokenA = "glrt-t1_AbCdEfGhIjKlMnOpQrSt"
	tokenB = "glrt-t2_ZyXwVuTsRqPoNmLkJiHg"
	shortA = "AbCdEfGhI"
	shortB = "ZyXwVuTsR"
)

func config(listen string) string {
	return fmt.Sprintf(`concurrent = 4
check_interval = 3
listen_address = %q

[[runners]]
  name = "docker-a"
  url = "https://gitlab.example.invalid/"
  token = %q
  executor = "docker"
  limit = 2

[[runners]]
  name = "docker-b"
  url = "https://gitlab.example.invalid/"
  token = %q
  executor = "docker"
`, listen, tokenA, tokenB)
}

// host lays out a root-run runner process whose config.toml is config.
func host(t *testing.T, cfg string) *testroot.Root {
	t.Helper()
	r := testroot.New(t)
	r.Runner(4242, 0, map[string]string{"PATH": "/usr/bin:/bin"})
	r.Write("/etc/gitlab-runner/config.toml", cfg, 0o600)
	return r
}

// healthy is a runner that has run jobs and been refused nothing: the
// families doctor reads, all present, none pointing at a cause.
func healthy() *runnermetricstest.Runner {
	reg := runnermetricstest.New("", 4)
	reg.ConfigLoaded.Add(3)
	reg.APIStatuses.WithLabelValues(shortA, "s_0123456789ab", "request_job", "201", "post").Add(40)
	reg.APIStatuses.WithLabelValues(shortA, "s_0123456789ab", "request_job", "204", "post").Add(900)
	reg.APIStatuses.WithLabelValues(shortB, "s_0123456789ab", "request_job", "204", "post").Add(950)
	reg.HealthCheckFailures.WithLabelValues(shortA, "docker-a", "s_0123456789ab").Add(0)
	reg.HealthCheckFailures.WithLabelValues(shortB, "docker-b", "s_0123456789ab").Add(0)
	reg.Failed(shortA, "docker-a", "script_failure", 5)
	reg.Failed(shortA, "docker-a", "runner_system_failure", 1)
	reg.Builds(shortA, "docker-a", "s_0123456789ab", "running", 1)
	reg.Limit(shortA, "docker-a", "s_0123456789ab", 2)
	reg.Limit(shortB, "docker-b", "s_0123456789ab", 0)
	reg.Requests(shortA, "s_0123456789ab", 1, 0, 1, 1)
	reg.Requests(shortB, "s_0123456789ab", 1, 0, 1, 1)
	return reg
}

func check(t *testing.T, cfg string, opts ...checktest.Option) checks.CheckResult {
	t.Helper()
	return checktest.One(t, runnermetrics.Check, append([]checktest.Option{checktest.Root(host(t, cfg).Dir)}, opts...)...)
}

func TestHealthyExpositionGivesNoFinding(t *testing.T) {
	addr := healthy().Serve(t)
	r := check(t, config(addr))
	checktest.WantStatus(t, r, checks.StatusPass, "")
	checktest.WantNoFinding(t, r)
	var names []string
	for _, o := range r.Observations {
		names = append(names, o.Name)
	}
	for _, want := range []string{runnermetrics.ObserveReloadErrors, runnermetrics.ObserveRefused, runnermetrics.ObserveHealthFailures,
		runnermetrics.ObserveSystemFailures, runnermetrics.ObserveSlotsUsed} {
		if !strings.Contains(strings.Join(names, " "), want) {
			t.Errorf("no observation %s for the cron's textfile (have %v)", want, names)
		}
	}
}

// The first case: a runner whose metrics show failed reloads and
// 403s on request_job. Each finding names the metric, its labels and the
// runner entry the runner label names; the token is never printed, nor
// its short form.
func TestFailedReloadsAndRefusedJobRequests(t *testing.T) {
	reg := healthy()
	reg.ConfigLoadingError.Add(2)
	reg.APIStatuses.WithLabelValues(shortB, "s_0123456789ab", "request_job", "403", "post").Add(12)
	reg.HealthCheckFailures.WithLabelValues(shortB, "docker-b", "s_0123456789ab").Add(12)
	addr := reg.Serve(t)
	r := check(t, config(addr))
	checktest.WantStatus(t, r, checks.StatusFail, "")
	reload := checktest.WantFinding(t, r, checks.Warning, "rejected 2 reloads of config.toml since the process started",
		"gitlab_runner_configuration_loading_error_total", "The file as it is now loads (config-decode passes)",
		"gitlab_runner_configuration_loading_error_total 2", "gitlab_runner_configuration_loaded_total 3",
		`/etc/gitlab-runner/config.toml:3: listen_address = "`+addr+`"`)
	if reload.Runner != nil {
		t.Errorf("the reload finding names runner %v: a reload is the process's, host-wide", reload.Runner)
	}
	refused := checktest.WantFinding(t, r, checks.Error, `[[runners]] #2 "docker-b": GitLab refused 12 of its job requests with 401 or 403`,
		`gitlab_runner_api_request_statuses_total{endpoint="request_job",method="post",status="403"} 12 (runner: [[runners]] #2 "docker-b")`,
		"runner-token")
	if refused.CausedBy != "runner-token" || refused.Runner == nil || refused.Runner.Index != 2 {
		t.Errorf("the 403 finding: causedBy %q, runner %v; want runner-token, [[runners]] #2", refused.CausedBy, refused.Runner)
	}
	health := checktest.WantFinding(t, r, checks.Warning, `[[runners]] #2 "docker-b": 12 of its job requests failed`,
		`gitlab_runner_worker_health_check_failures_total{runner_name="docker-b"} 12`)
	if health.CausedBy != "runner-token" {
		t.Errorf("the health finding of the refused runner is caused by %q, want runner-token", health.CausedBy)
	}
	if n := len(r.Findings); n != 3 {
		t.Errorf("%d findings, want 3:\n%s", n, checktest.Text(r))
	}
	text := checktest.Text(r)
	for _, secret := range []string{tokenA, tokenB, shortA, shortB} {
		if strings.Contains(text, secret) {
			t.Errorf("the output holds %.5q…: a token, or the runner label cut from it", secret)
		}
	}
}

// A reload the runner rejected while config.toml still does not load is an
// error folded under config-decode; the listen_address is read from the
// file's line as written, since the file does not decode.
func TestRejectedReloadOfAFileThatStillDoesNotLoad(t *testing.T) {
	reg := healthy()
	reg.ConfigLoadingError.Add(1)
	addr := reg.Serve(t)
	broken := strings.Replace(config(addr), "  limit = 2\n", "  limit = \"two\"\n", 1)
	r := check(t, broken)
	f := checktest.WantFinding(t, r, checks.Error, "rejected 1 reload of config.toml", "does not load either",
		"it does not decode", "the edits it holds take effect on no job")
	if f.CausedBy != "config-decode" {
		t.Errorf("causedBy %q, want config-decode", f.CausedBy)
	}
	checktest.WantSays(t, r, checks.StatusFail, "(read from the line as written: the file does not decode)")
}

func TestUnreachableListenAddressIsAWarningNamingIt(t *testing.T) {
	addr := fmt.Sprintf("127.0.0.1:%d", closedport.Reserve(t))
	r := check(t, config(addr))
	checktest.WantStatus(t, r, checks.StatusFail, "")
	checktest.WantFinding(t, r, checks.Warning, "The runner's metrics at "+addr+" cannot be read", "connection refused",
		"GET http://"+addr+"/metrics")
	if len(r.Findings) != 1 {
		t.Errorf("%d findings, want 1:\n%s", len(r.Findings), checktest.Text(r))
	}
	// A runner in a container listens in the container's network: the
	// finding says so, and how to reach it.
	root := host(t, config(addr))
	root.Write("/proc/4242/cgroup", "0::/system.slice/docker-5f3c0d2e9a41.scope\n", 0o444)
	r = checktest.One(t, runnermetrics.Check, checktest.Root(root.Dir))
	checktest.WantFinding(t, r, checks.Warning, "The runner runs in a container: its listen_address is the container's", "--metrics-url")
}

func TestInfrastructureFailuresSaturationAndVersion(t *testing.T) {
	reg := runnermetricstest.New("19.2.0", 2)
	reg.Failed(shortA, "docker-a", "runner_system_failure", 7)
	reg.Failed(shortA, "docker-a", "runner_external_dependency_failure", 1)
	reg.Failed(shortA, "docker-a", "script_failure", 3)
	reg.Builds(shortA, "docker-a", "s_1", "running", 2)
	reg.Limit(shortA, "docker-a", "s_1", 2)
	reg.Requests(shortB, "s_1", 1, 4, 1, 1)
	reg.APIStatuses.WithLabelValues(shortA, "s_1", "patch_trace", "502", "patch").Add(3)
	reg.APIRetries.WithLabelValues("/api/v4/jobs/1/trace", "patch").Add(6)
	root := host(t, config(reg.Serve(t)))
	root.StampedRunner("19.3.0")
	r := checktest.One(t, runnermetrics.Check, checktest.Root(root.Dir))
	checktest.WantFinding(t, r, checks.Warning, `[[runners]] #1 "docker-a": 8 of the 11 failed jobs`,
		"runner_system_failure 7, runner_external_dependency_failure 1", "against 3 script_failure",
		`gitlab_runner_failed_jobs_total{failure_reason="runner_system_failure",mode="unknown",runner_name="docker-a"} 7`)
	checktest.WantFinding(t, r, checks.Warning, "Every one of the runner's 2 concurrent slots is taken (2 jobs held", "gitlab_runner_concurrent 2")
	checktest.WantFinding(t, r, checks.Warning, `[[runners]] #1 "docker-a" holds 2 jobs, its limit (gitlab_runner_limit 2)`)
	checktest.WantFinding(t, r, checks.Info, `[[runners]] #2 "docker-b": 4 of its job requests waited for a free request slot`)
	checktest.WantFinding(t, r, checks.Warning, "answered 3 requests with a server error or 429",
		`gitlab_runner_api_request_retries_total{method="patch",path="/api/v4/jobs/1/trace"} 6`)
	checktest.WantFinding(t, r, checks.Warning, "The running runner is gitlab-runner 19.2.0 (gitlab_runner_version_info), but its binary is 19.3.0")
}

// An exposition whose labels are not the ones its own version defines is
// not judged: the check is unknown and says which family and how.
func TestLabelsOfAnotherVersionAreNotJudged(t *testing.T) {
	exposition := `# HELP gitlab_runner_version_info A metric with a constant '1' value labeled by different build stats fields.
# TYPE gitlab_runner_version_info gauge
gitlab_runner_version_info{architecture="amd64",branch="19-3-stable",built_at="x",go_version="go1.24.6",name="gitlab-runner",os="linux",revision="9cbf0074",version="19.3.0"} 1
# HELP gitlab_runner_api_request_statuses_total The total number of api requests, partitioned by runner, endpoint and status.
# TYPE gitlab_runner_api_request_statuses_total counter
gitlab_runner_api_request_statuses_total{endpoint="request_job",runner="` + shortA + `",status="403"} 9
`
	addr := runnermetricstest.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		fmt.Fprint(w, exposition)
	}))
	r := check(t, config(addr))
	checktest.WantStatus(t, r, checks.StatusUnknown,
		"gitlab_runner_api_request_statuses_total has labels {endpoint,runner,status}, gitlab-runner 19.3.0 defines {endpoint,method,runner,status,system_id}")
	checktest.WantNoFinding(t, r)
}

// Hostile endpoints are bounded: an answer that never ends stops at
// MaxBody, one that never comes at the probe's deadline, and neither is
// read as metrics.
func TestHostileEndpointsAreBounded(t *testing.T) {
	endless := runnermetricstest.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		line := []byte("go_goroutines 42\n")
		for i := 0; i < 1<<24; i++ {
			if _, err := w.Write(line); err != nil {
				return
			}
		}
	}))
	start := time.Now()
	r := check(t, config(endless))
	checktest.WantFinding(t, r, checks.Warning, fmt.Sprintf("longer than %d MiB", rm.MaxBody>>20))
	t.Logf("endless answer: %s", time.Since(start).Round(time.Millisecond))

	silent := runnermetricstest.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	start = time.Now()
	r = check(t, config(silent), checktest.Timeout(4*time.Second))
	if took := time.Since(start); took > 4*time.Second {
		t.Errorf("a silent endpoint took %s, past the run's 4s", took)
	}
	checktest.WantFinding(t, r, checks.Warning, "no answer within")

	long := runnermetricstest.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "gitlab_runner_concurrent{x=\""+strings.Repeat("a", 100<<10)+"\"} 1\n")
	}))
	r = check(t, config(long))
	checktest.WantFinding(t, r, checks.Warning, "a line longer than 64 KiB")
}

func TestNoListenAddressSkips(t *testing.T) {
	cfg := strings.Replace(config("x"), "listen_address = \"x\"\n", "", 1)
	r := check(t, cfg)
	checktest.WantStatus(t, r, checks.StatusSkipped, "config.toml sets no listen_address")
	r = check(t, config(":9252"), checktest.Offline())
	checktest.WantStatus(t, r, checks.StatusSkipped, "offline")
}
