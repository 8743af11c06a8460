package namespace

import (
	"testing"

	"github.com/socialwebcomputer/doctor/checks/checktest/apigatetest"

	"github.com/socialwebcomputer/doctor/checks/checktest"
)

// The check reads the cluster itself (a GET, or the cluster's list of
// namespaces): its judging is proven on a real apiserver, in
// check_integration_test.go; here, the hosts it does not apply to.
func TestCases(t *testing.T) {
	checktest.Cases(t, Check, apigatetest.With())
}
