package fleetingconnector_test

import (
	"testing"

	"github.com/socialwebcomputer/doctor/checks/checktest"
	"github.com/socialwebcomputer/doctor/checks/fleetingconnector"
)

// TestCases runs the check on every testdata/*/case.json: the repository's
// fixtures that concern it, and the hosts of its own cases.
func TestCases(t *testing.T) { checktest.Cases(t, fleetingconnector.Check) }
