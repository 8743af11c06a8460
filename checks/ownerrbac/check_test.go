package ownerrbac

import (
	"testing"

	"github.com/socialwebcomputer/doctor/checks/apiauth"
	"github.com/socialwebcomputer/doctor/checks/checktest"
	"github.com/socialwebcomputer/doctor/checks/clusteroverride"
	"github.com/socialwebcomputer/doctor/checks/kubeconfigfile"
)

// The check judges what a real apiserver answers (the self-review's groups,
// an access review for * on *): it is proven on one, in
// check_integration_test.go; here, the hosts it does not apply to.
func TestCases(t *testing.T) {
	checktest.Cases(t, Check, checktest.With(apiauth.Check, kubeconfigfile.Check, clusteroverride.Check))
}
