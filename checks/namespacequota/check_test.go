package namespacequota

import (
	"testing"

	"github.com/socialwebcomputer/doctor/checks/checktest/apigatetest"

	"github.com/socialwebcomputer/doctor/checks/checktest"
)

// The check reads the namespace's quotas and limit ranges itself: its
// judging is proven on its pure parts (judge_test.go) and on a real
// apiserver (check_integration_test.go); here, the hosts it does not apply
// to. The lists gate on api-auth by its ID (kubefacts.AfterAPIAuth).
func TestCases(t *testing.T) { checktest.Cases(t, Check, apigatetest.With()) }
