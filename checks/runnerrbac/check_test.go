package runnerrbac

import (
	"testing"

	"github.com/socialwebcomputer/doctor/checks/checktest/apigatetest"

	"github.com/socialwebcomputer/doctor/checks/checktest"
)

// The check judges what a real apiserver answers (the self-review's user,
// an access review of each verb the executor needs): it is proven on one, in
// check_integration_test.go; here, the hosts it does not apply to.
func TestCases(t *testing.T) {
	checktest.Cases(t, Check, apigatetest.With())
}

func TestServiceAccountNamespace(t *testing.T) {
	for user, want := range map[string]string{
		"system:serviceaccount:gitlab:gitlab-runner": "gitlab",
		"system:serviceaccount:ci":                   "ci",
		"did:plc:ewvi7nxzyoun6zhxrhs64oiz":           "",
		"":                                           "",
	} {
		if got := serviceAccountNamespace(user); got != want {
			t.Errorf("serviceAccountNamespace(%q) = %q, want %q", user, got, want)
		}
	}
}
