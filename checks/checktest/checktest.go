// Package checktest is to a check what analysistest is to an analyzer:
// run one check, and only what it requires, against a world the test
// states, and assert what the check concludes. A world comes three ways,
// from the cheapest.
//
// Facts given in their own types: the check judges the value, and nothing
// below the fact runs (no host, no cluster):
//
//	r := checktest.One(t, nodearch.Check,
//		checktest.Fact(configfacts.RunnerEntryFact, entry),
//		checktest.Fact(cluster.NodesFact, nodes))
//	checktest.WantFinding(t, r, checks.Error, "exec format error")
//
// A host laid out from testdata/<case>/ (root/ and case.json, in the
// fixtures' format of testkit/fixture, or a shared fixture of
// testdata/fixtures that case.json names), every case at once. case.json's
// want is every result, in order: the runner (its index in config.toml, 0
// for host-wide), status, reason, and each finding's severity and words:
//
//	func TestCases(t *testing.T) { checktest.Cases(t, certexpiry.Check) }
//
// A real cluster (integration tag): a kube-apiserver with etcd on loopback,
// shaped by the test, and a host whose runner holds an owner's kubeconfig
// for it:
//
//	live := checktest.Cluster(t, "")
//	live.EnsureNamespace("gitlab-runner")
//	r := checktest.ForRunner(t, live.Check(t, namespace.Check), 1)
//	checktest.WantStatus(t, r, checks.StatusPass, "")
//
// So `go test ./checks/<id>/` alone proves a check: its judging on given
// facts, its reading of hosts, and, with -tags integration, its reading of
// a real cluster. cmd/doctor/cli and cmd/doctor/e2e keep what is the CLI's: exit codes,
// flags, rendering and ranking across checks.
package checktest

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/checks"
)

// Text is everything an operator reads of a check's result: status, and each
// finding's severity, cause, fix and evidence.
func Text(r checks.CheckResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "status %s %s\n", r.Status, r.Reason)
	for _, f := range r.Findings {
		fmt.Fprintf(&b, "[%s] %s\nfix: %s\n", f.Severity, f.Cause, f.Fix)
		for _, e := range f.Evidence {
			fmt.Fprintf(&b, "  %s: %s\n", e.Source, e.Detail)
		}
	}
	return b.String()
}

// WantSays fails unless the result has the status and its text contains
// every one of says.
func WantSays(t testing.TB, r checks.CheckResult, status checks.Status, says ...string) {
	t.Helper()
	got := Text(r)
	if r.Status != status {
		t.Errorf("%s: status %s, want %s\n%s", r.Check.ID, r.Status, status, got)
	}
	for _, s := range says {
		if !strings.Contains(got, s) {
			t.Errorf("%s does not say %q:\n%s", r.Check.ID, s, got)
		}
	}
}

// Run runs one check, and what it requires, against the root at dir: One
// with Root(dir).
func Run(t testing.TB, dir string, c *checks.Check) checks.CheckResult {
	t.Helper()
	return One(t, c, Root(dir))
}

// WantPatterns fails unless each line, as the runner prints it, matches
// one of the check's Doc.Patterns, read as checks.Doc says: a fragment
// found anywhere in the line, `*` any run of characters within it.
func WantPatterns(t testing.TB, c *checks.Check, lines ...string) {
	t.Helper()
	if len(c.Doc.Patterns) == 0 && len(c.Doc.Ambiguous) == 0 {
		t.Fatalf("%s has no Doc.Patterns", c.ID)
	}
	for _, line := range lines {
		if !Matches(c.Doc, line) {
			t.Errorf("%s: no pattern of %q matches %q", c.ID, c.Doc.Patterns, line)
		}
	}
}

// Matches reports whether one of doc's Patterns, or of its Ambiguous
// patterns (the line then names the check among its other causes), matches
// line, by the contract of checks.Doc.Patterns: a fragment anywhere in the
// line, `*` any run of characters within it. For the checks' own tests;
// doctor why has its matcher, which also cleans the line (colours, the
// json and text log formats).
func Matches(doc checks.Doc, line string) bool {
	patterns := slices.Clone(doc.Patterns)
	for _, a := range doc.Ambiguous {
		patterns = append(patterns, a.Pattern)
	}
	for _, p := range patterns {
		rest, ok := line, true
		for _, part := range strings.Split(p, "*") {
			j := strings.Index(rest, part)
			if j < 0 {
				ok = false
				break
			}
			rest = rest[j+len(part):]
		}
		if ok {
			return true
		}
	}
	return false
}
