// Package apigatetest is the gate of every check that reads the cluster,
// for checktest: api-auth, which the checks and the cluster's facts name
// by ID (checks.Ref, kubefacts.AfterAPIAuth), and the two checks api-auth runs
// after. doctor run --only <check> brings them into the run from the
// registry; a check's own test brings them with With.
package apigatetest

import (
	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/apiauth"
	"github.com/socialwebcomputer/doctor/checks/checktest"
	"github.com/socialwebcomputer/doctor/checks/clusteroverride"
	"github.com/socialwebcomputer/doctor/checks/kubeconfigfile"
)

// Checks are api-auth and the checks it requires by ID.
func Checks() []*checks.Check {
	return []*checks.Check{apiauth.Check, kubeconfigfile.Check, clusteroverride.Check}
}

// With puts them in a checktest run's catalog.
func With() checktest.Option { return checktest.With(Checks()...) }
