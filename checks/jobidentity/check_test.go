package jobidentity

import (
	"testing"

	"github.com/socialwebcomputer/doctor/checks/checktest/apigatetest"

	"github.com/socialwebcomputer/doctor/checks/checktest"
)

// The check asks the apiserver itself (a server-side dry run of the job
// pod, the namespace's service account and secrets): its judging is proven
// on a real apiserver, in check_integration_test.go; here, the hosts it
// does not apply to.
func TestCases(t *testing.T) { checktest.Cases(t, Check, apigatetest.With()) }
