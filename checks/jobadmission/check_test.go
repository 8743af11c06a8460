package jobadmission

import (
	"testing"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/checktest"
	"github.com/socialwebcomputer/doctor/checks/checktest/apigatetest"
)

// The check reads the apiserver's verdict on a dry run: its stages are
// proven on a real apiserver with real webhooks (check_integration_test.go)
// and the wordings it reads on the apiserver's own (cluster's
// TestClassifyRefusal); here, the hosts it does not apply to.
func TestCases(t *testing.T) { checktest.Cases(t, Check, apigatetest.With()) }

func TestPatternsMatchTheRefusals(t *testing.T) {
	for _, line := range []string{
		`ERROR: Job failed (system failure): prepare environment: setting up build pod: admission webhook "deny.example.com" denied the request: no`,
		`ERROR: Job failed (system failure): prepare environment: setting up build pod: Internal error occurred: failed calling webhook "deny.example.com": failed to call webhook: Post "https://127.0.0.1:1/validate?timeout=10s": dial tcp 127.0.0.1:1: connect: connection refused`,
		`ERROR: Job failed (system failure): prepare environment: setting up build pod: pods "runner-abc-project-5-concurrent-0-" is forbidden: no PriorityClass with name ci-high was found`,
	} {
		if !checktest.Matches(Check.Doc, line) {
			t.Errorf("no pattern matches %q", line)
		}
	}
	if line := "Job succeeded"; checktest.Matches(Check.Doc, line) {
		t.Errorf("a pattern matches %q", line)
	}
	// A job's own kubectl, refused by a policy: one of the causes an
	// Ambiguous entry lists, never this check's alone.
	kubectl := `Error from server (Forbidden): error when creating "deploy.yaml": admission webhook "x" denied the request: no`
	if checktest.Matches(checks.Doc{Patterns: Check.Doc.Patterns}, kubectl) {
		t.Errorf("a pattern (not an ambiguous one) matches %q", kubectl)
	}
	if !checktest.Matches(Check.Doc, kubectl) {
		t.Errorf("no ambiguous entry matches %q", kubectl)
	}
}
