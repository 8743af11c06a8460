package configlint_test

import (
	"testing"

	"github.com/socialwebcomputer/doctor/checks/configdecode"

	"github.com/socialwebcomputer/doctor/checks/checktest"
	"github.com/socialwebcomputer/doctor/checks/configlint"
)

// TestCases runs the check on every testdata/*/case.json: the repository's
// fixtures that concern it, and the hosts of its own cases.
// config-lint runs once config-decode passed, which it names by ID.
func TestCases(t *testing.T) {
	checktest.Cases(t, configlint.Check, checktest.With(configdecode.Check))
}
