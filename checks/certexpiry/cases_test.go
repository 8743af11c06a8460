package certexpiry_test

import (
	"testing"

	"github.com/socialwebcomputer/doctor/checks/clusteroverride"
	"github.com/socialwebcomputer/doctor/checks/kubeconfigfile"

	"github.com/socialwebcomputer/doctor/checks/certexpiry"
	"github.com/socialwebcomputer/doctor/checks/checktest"
)

// TestCases runs the check on every testdata/*/case.json: the repository's
// fixtures that concern it, and the hosts of its own cases.
// cert-expiry runs after kubeconfig-file and cluster-override, which it
// names by ID: the catalog holds them, as doctor run --only does.
func TestCases(t *testing.T) {
	checktest.Cases(t, certexpiry.Check, checktest.With(kubeconfigfile.Check, clusteroverride.Check))
}
