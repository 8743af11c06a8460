package execupgrade_test

import (
	"testing"

	"github.com/socialwebcomputer/doctor/checks/checktest"
	"github.com/socialwebcomputer/doctor/checks/execupgrade"
)

func TestCases(t *testing.T) { checktest.Cases(t, execupgrade.Check) }
