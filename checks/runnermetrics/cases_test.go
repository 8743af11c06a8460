package runnermetrics_test

import (
	"testing"

	"github.com/socialwebcomputer/doctor/checks/checktest"
	"github.com/socialwebcomputer/doctor/checks/runnermetrics"
)

// TestCases runs the check on every testdata/*/case.json.
func TestCases(t *testing.T) { checktest.Cases(t, runnermetrics.Check) }
