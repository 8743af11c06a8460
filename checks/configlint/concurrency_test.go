package configlint_test

import (
	"context"
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/checktest"
	"github.com/socialwebcomputer/doctor/checks/configdecode"
	"github.com/socialwebcomputer/doctor/checks/configlint"
	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/testkit/testroot"
)

func lint(t *testing.T, config string) checks.CheckResult {
	t.Helper()
	root := testroot.New(t)
	root.Runner(4242, 0, map[string]string{"PATH": "/usr/bin:/bin"})
	root.Write("/etc/gitlab-runner/config.toml", config, 0o600)
	res, err := checks.Run(context.Background(), &hostio.Env{Root: root.Dir},
		[]*checks.Check{configdecode.Check, configlint.Check}, checks.Options{Only: []string{configlint.Check.ID}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range res.Checks {
		if c.Check == configlint.Check {
			return c
		}
	}
	t.Fatal("config-lint did not run")
	return checks.CheckResult{}
}

func shells(concurrent string, runners ...string) string {
	var b strings.Builder
	b.WriteString(concurrent + "\n")
	for _, r := range runners {
		b.WriteString("[[runners]]\n  name = \"r\"\n  url = \"https://gitlab.example.invalid/\"\n  token = \"glrt-x\"\n  executor = \"shell\"\n" + r + "\n")
	}
	return b.String()
}

func TestConcurrentBelowTheNumberOfRunners(t *testing.T) {
	r := lint(t, shells("concurrent = 2", "", "", ""))
	checktest.WantSays(t, r, checks.StatusFail,
		"concurrent = 2 is less than the 3 [[runners]]", "Worker starvation bottleneck: 'concurrent' setting (2) is less than number of runners (3)",
		"Set concurrent to at least 4", "/etc/gitlab-runner/config.toml:1: concurrent = 2")
}

// TestConcurrentZeroStopsTheRunner: concurrent = 0 written out is a runner
// that exits (commands/multi.go updateWorkers, v19.3.0); left out, it is
// the runner's default of 1 and one runner is no finding.
func TestConcurrentZeroStopsTheRunner(t *testing.T) {
	r := lint(t, shells("concurrent = 0", ""))
	checktest.WantSays(t, r, checks.StatusFail,
		"concurrent = 0: the runner starts no worker and exits", "'concurrent = 0' means that no jobs will be processed",
		"/etc/gitlab-runner/config.toml:1: concurrent = 0", "pause it in GitLab")
	if len(r.Findings) != 1 || r.Findings[0].Severity != checks.Critical {
		t.Errorf("want one critical finding, got %d:\n%s", len(r.Findings), checktest.Text(r))
	}
	if !checktest.Matches(configlint.Check.Doc, "Current configuration 'concurrent = 0' means that no jobs will be processed, see https://docs.gitlab.com/runner/configuration/advanced-configuration.html#the-global-section") {
		t.Error("no pattern matches the runner's line")
	}

	r = lint(t, shells("check_interval = 3", ""))
	for _, f := range r.Findings {
		if strings.Contains(f.Cause, "exits") || strings.Contains(f.Cause, "less than") {
			t.Errorf("concurrent left out (the runner's 1, one runner): %s", f.Cause)
		}
	}
}

func TestLowLimitWithOneRequest(t *testing.T) {
	r := lint(t, shells("concurrent = 4", "  limit = 1", "  limit = 1\n  request_concurrency = 2", "  request_concurrency = 8"))
	checktest.WantSays(t, r, checks.StatusFail,
		`[[runners]] #1 "r": limit = 1 with request_concurrency = 1`, "Build limit bottleneck",
		`[[runners]] #3 "r": request_concurrency = 8 is larger than concurrent = 4`)
	for _, f := range r.Findings {
		if f.Runner != nil && f.Runner.Index == 2 {
			t.Errorf("runner #2 (limit 1, request_concurrency 2) has a finding: %s", f.Cause)
		}
	}
}

func TestEnoughConcurrencySaysNothingOfIt(t *testing.T) {
	r := lint(t, shells("concurrent = 4", "", "  limit = 4"))
	for _, f := range r.Findings {
		if strings.Contains(f.Cause, "long poll") || strings.Contains(f.Cause, "request_concurrency") {
			t.Errorf("finding about concurrency: %s", f.Cause)
		}
	}
}

func TestPatternsMatchTheRunnersWarning(t *testing.T) {
	// commands/multi.go checkConfigConcurrency, v19.3.0, as logged for two runners and concurrent = 1.
	for _, line := range []string{
		"WARNING: CONFIGURATION: Long polling issues detected.",
		"  - Worker starvation bottleneck: 'concurrent' setting (1) is less than number of runners (2)",
		"  - Build limit bottleneck: 1 runners have low 'limit' settings (≤2) with request_concurrency=1",
	} {
		if !checktest.Matches(configlint.Check.Doc, line) {
			t.Errorf("no pattern matches %q", line)
		}
	}
	if checktest.Matches(configlint.Check.Doc, "Configuration loaded                                builds=0 max_builds=2") {
		t.Error("a pattern matches the runner's healthy start line")
	}
}
