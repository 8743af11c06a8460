package checktest

import (
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/checks"
)

// WantStatus fails unless r has the status and, when reason is not empty,
// a reason (why unknown or skipped) that contains it.
func WantStatus(t testing.TB, r checks.CheckResult, status checks.Status, reason string) {
	t.Helper()
	if r.Status != status {
		t.Errorf("%s%s: status %s, want %s\n%s", r.Check.ID, runnerSuffix(r), r.Status, status, Text(r))
	}
	if reason != "" && !strings.Contains(r.Reason, reason) {
		t.Errorf("%s%s: reason %q, want it to contain %q", r.Check.ID, runnerSuffix(r), r.Reason, reason)
	}
}

// WantFinding fails unless r has a finding of severity sev whose text
// (cause, fix, evidence) contains every one of says. It returns that
// finding, for what a test asserts beyond.
func WantFinding(t testing.TB, r checks.CheckResult, sev checks.Severity, says ...string) checks.Finding {
	t.Helper()
	for _, f := range r.Findings {
		if f.Severity == sev && containsAll(findingText(f), says) {
			return f
		}
	}
	t.Errorf("%s%s: no %s finding saying %q:\n%s", r.Check.ID, runnerSuffix(r), sev, says, Text(r))
	return checks.Finding{}
}

// WantNoFinding fails when r has any finding.
func WantNoFinding(t testing.TB, r checks.CheckResult) {
	t.Helper()
	if len(r.Findings) > 0 {
		t.Errorf("%s%s: want no finding, got:\n%s", r.Check.ID, runnerSuffix(r), Text(r))
	}
}

// ForRunner is the result of runs for the runner at index (its position in
// config.toml), failing the test when there is none.
func ForRunner(t testing.TB, rs []checks.CheckResult, index int) checks.CheckResult {
	t.Helper()
	for _, r := range rs {
		if r.Runner != nil && r.Runner.Index == index {
			return r
		}
	}
	t.Fatalf("no result for [[runners]] #%d:\n%s", index, texts(rs))
	return checks.CheckResult{}
}

func findingText(f checks.Finding) string {
	var b strings.Builder
	b.WriteString(f.Cause + "\n" + f.Fix.String() + "\n")
	for _, e := range f.Evidence {
		b.WriteString(e.Source + ": " + e.Detail + "\n")
	}
	return b.String()
}

func containsAll(s string, parts []string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

func runnerSuffix(r checks.CheckResult) string {
	if r.Runner == nil {
		return ""
	}
	return " for " + r.Runner.String()
}

func texts(rs []checks.CheckResult) string {
	var b strings.Builder
	for _, r := range rs {
		b.WriteString("-- " + r.Check.ID + runnerSuffix(r) + "\n" + Text(r))
	}
	return b.String()
}
