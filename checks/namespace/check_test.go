package namespace

import (
	"testing"

	"github.com/socialwebcomputer/doctor/checks/apiauth"
	"github.com/socialwebcomputer/doctor/checks/checktest"
	"github.com/socialwebcomputer/doctor/checks/clusteroverride"
	"github.com/socialwebcomputer/doctor/checks/kubeconfigfile"
)

// The check reads the cluster itself (a GET, or the cluster's list of
// namespaces): its judging is proven on a real apiserver, in
// check_integration_test.go; here, the hosts it does not apply to.
func TestCases(t *testing.T) {
	checktest.Cases(t, Check, checktest.With(apiauth.Check, kubeconfigfile.Check, clusteroverride.Check))
}
