package dockerapi_test

import (
	"testing"

	"github.com/socialwebcomputer/doctor/checks/checktest"
	"github.com/socialwebcomputer/doctor/checks/dockerapi"
)

// TestCases runs the check on every testdata/*/case.json.
func TestCases(t *testing.T) { checktest.Cases(t, dockerapi.Check) }
