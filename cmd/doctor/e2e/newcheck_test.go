package e2e

import (
	"path/filepath"
	"testing"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/report"
)

// TestANewCheckTouchesNoScenario registers two checks beside the
// registry's, one that finds a warning on every root and one that passes,
// and runs every scenario: each still passes with its record as it is, and
// every remaining golden keeps every byte. What a new check may change is
// the exit code, by its own findings (a warning raises 0 to 1), which the
// test expects of it; all else a scenario asserts, its top finding and its
// no-warning promise included, holds of the other checks' findings.
func TestANewCheckTouchesNoScenario(t *testing.T) {
	doc := checks.Doc{
		Cause:   "A check the test adds to the registry.",
		Symptom: "none",
		Fix:     checks.Text("none"),
		Verify:  checks.Text("none"),
	}
	add := &added{
		checks: []*checks.Check{
			{
				ID: "added-warns", Title: "Finds a warning on every root", Doc: doc, Severity: checks.Warning,
				Run: func(p *checks.Pass) error {
					p.Report(checks.Finding{Cause: "the added check's warning"})
					return nil
				},
			},
			{
				ID: "added-passes", Title: "Passes on every root", Doc: doc, Severity: checks.Error,
				Run: func(*checks.Pass) error { return nil },
			},
		},
		exit: report.ExitWarning,
	}
	for _, dir := range scenarioDirs(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) { runScenario(t, dir, add) })
	}
}
