package ownerrbac

import (
	"testing"

	"github.com/socialwebcomputer/doctor/checks/checktest/apigatetest"

	"github.com/socialwebcomputer/doctor/checks/checktest"
)

// The check judges what a real apiserver answers (the self-review's groups,
// an access review for * on *): it is proven on one, in
// check_integration_test.go; here, the hosts it does not apply to.
func TestCases(t *testing.T) {
	checktest.Cases(t, Check, apigatetest.With())
}
