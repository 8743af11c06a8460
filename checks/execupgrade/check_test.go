package execupgrade_test

import (
	"testing"

	"github.com/socialwebcomputer/doctor/checks/checktest/apigatetest"

	"github.com/socialwebcomputer/doctor/checks/checktest"
	"github.com/socialwebcomputer/doctor/checks/execupgrade"
)

// exec-upgrade gates on api-auth (kubefacts.AfterAPIAuth), which runs after
// kubeconfig-file and cluster-override: all by ID.
func TestCases(t *testing.T) {
	checktest.Cases(t, execupgrade.Check, apigatetest.With())
}
