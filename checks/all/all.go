// Package all is the registry: one line per check, in the order the catalog
// lists them (the engine orders by the DAG, the report by rank).
package all

import (
	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/apiauth"
	"github.com/socialwebcomputer/doctor/checks/certexpiry"
	"github.com/socialwebcomputer/doctor/checks/clusteroverride"
	"github.com/socialwebcomputer/doctor/checks/configdecode"
	"github.com/socialwebcomputer/doctor/checks/configlint"
	"github.com/socialwebcomputer/doctor/checks/configunknownkeys"
	"github.com/socialwebcomputer/doctor/checks/execupgrade"
	"github.com/socialwebcomputer/doctor/checks/gitlabreach"
	"github.com/socialwebcomputer/doctor/checks/imagepull"
	"github.com/socialwebcomputer/doctor/checks/jobidentity"
	"github.com/socialwebcomputer/doctor/checks/jobterminations"
	"github.com/socialwebcomputer/doctor/checks/kubeconfigfile"
	"github.com/socialwebcomputer/doctor/checks/namespace"
	"github.com/socialwebcomputer/doctor/checks/namespacequota"
	"github.com/socialwebcomputer/doctor/checks/nodelocaldns"
	"github.com/socialwebcomputer/doctor/checks/ownerrbac"
	"github.com/socialwebcomputer/doctor/checks/pendingnonode"
	"github.com/socialwebcomputer/doctor/checks/pendingunschedulable"
	"github.com/socialwebcomputer/doctor/checks/runnerkubeconfigenv"
	"github.com/socialwebcomputer/doctor/checks/runnerprocess"
	"github.com/socialwebcomputer/doctor/checks/runnerrbac"
	"github.com/socialwebcomputer/doctor/checks/runnerservice"
	"github.com/socialwebcomputer/doctor/checks/runnertoken"
	"github.com/socialwebcomputer/doctor/checks/scaletozero"
)

// Checks returns the catalog.
func Checks() []*checks.Check {
	return []*checks.Check{
		runnerprocess.Check,
		runnerservice.Check,
		configdecode.Check,
		configunknownkeys.Check,
		runnerkubeconfigenv.Check,
		kubeconfigfile.Check,
		clusteroverride.Check,
		certexpiry.Check,
		configlint.Check,
		gitlabreach.Check,
		runnertoken.Check,
		apiauth.Check,
		ownerrbac.Check,
		runnerrbac.Check,
		namespace.Check,
		namespacequota.Check,
		jobidentity.Check,
		pendingnonode.Check,
		pendingunschedulable.Check,
		imagepull.Check,
		jobterminations.Check,
		nodelocaldns.Check,
		scaletozero.Check,
		execupgrade.Check,
	}
}
