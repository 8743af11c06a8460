package configfile

import (
	"testing"

	"github.com/socialwebcomputer/doctor/checks/checktest"
)

// TestCases: testdata/*/case.json, each a host laid out from a shared
// fixture with config.toml's (or its directory's) mode and owner changed.
func TestCases(t *testing.T) { checktest.Cases(t, Check) }
