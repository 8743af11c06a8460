// Package all is the registry: one line per check, in the order the catalog
// lists them (the engine orders by the DAG, the report by rank), and one
// line per setting the checks declare, in the order their flags are shown.
package all

import (
	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/apiauth"
	"github.com/socialwebcomputer/doctor/checks/certexpiry"
	"github.com/socialwebcomputer/doctor/checks/client/gitlab"
	"github.com/socialwebcomputer/doctor/checks/clockskew"
	"github.com/socialwebcomputer/doctor/checks/clusteroverride"
	"github.com/socialwebcomputer/doctor/checks/configdecode"
	"github.com/socialwebcomputer/doctor/checks/configfile"
	"github.com/socialwebcomputer/doctor/checks/configlint"
	"github.com/socialwebcomputer/doctor/checks/configunknownkeys"
	"github.com/socialwebcomputer/doctor/checks/dockerapi"
	"github.com/socialwebcomputer/doctor/checks/dockersocket"
	"github.com/socialwebcomputer/doctor/checks/dvppool"
	"github.com/socialwebcomputer/doctor/checks/dvprbac"
	"github.com/socialwebcomputer/doctor/checks/execupgrade"
	"github.com/socialwebcomputer/doctor/checks/facts/configfacts"
	"github.com/socialwebcomputer/doctor/checks/facts/nodedns"
	rm "github.com/socialwebcomputer/doctor/checks/facts/runnermetrics"
	"github.com/socialwebcomputer/doctor/checks/fleetingconnector"
	"github.com/socialwebcomputer/doctor/checks/fleetingplugin"
	"github.com/socialwebcomputer/doctor/checks/fleetingstate"
	"github.com/socialwebcomputer/doctor/checks/gitlabreach"
	"github.com/socialwebcomputer/doctor/checks/helperimage"
	"github.com/socialwebcomputer/doctor/checks/imagepull"
	"github.com/socialwebcomputer/doctor/checks/jobadmission"
	"github.com/socialwebcomputer/doctor/checks/jobidentity"
	"github.com/socialwebcomputer/doctor/checks/jobterminations"
	"github.com/socialwebcomputer/doctor/checks/kubeconfigfile"
	"github.com/socialwebcomputer/doctor/checks/kubeletreach"
	"github.com/socialwebcomputer/doctor/checks/kubeletserving"
	"github.com/socialwebcomputer/doctor/checks/namespace"
	"github.com/socialwebcomputer/doctor/checks/namespacequota"
	"github.com/socialwebcomputer/doctor/checks/nodearch"
	"github.com/socialwebcomputer/doctor/checks/nodelocaldns"
	"github.com/socialwebcomputer/doctor/checks/ownerrbac"
	"github.com/socialwebcomputer/doctor/checks/pendingnonode"
	"github.com/socialwebcomputer/doctor/checks/pendingunschedulable"
	"github.com/socialwebcomputer/doctor/checks/runnerkubeconfigenv"
	"github.com/socialwebcomputer/doctor/checks/runnermetrics"
	"github.com/socialwebcomputer/doctor/checks/runnerprocess"
	"github.com/socialwebcomputer/doctor/checks/runnerprovenance"
	"github.com/socialwebcomputer/doctor/checks/runnerrbac"
	"github.com/socialwebcomputer/doctor/checks/runnerservice"
	"github.com/socialwebcomputer/doctor/checks/runnertoken"
	"github.com/socialwebcomputer/doctor/checks/scaletozero"
)

// Checks returns the catalog.
func Checks() []*checks.Check {
	return []*checks.Check{
		runnerprocess.Check,
		runnerprovenance.Check,
		runnerservice.Check,
		configdecode.Check,
		configfile.Check,
		configunknownkeys.Check,
		runnerkubeconfigenv.Check,
		kubeconfigfile.Check,
		clusteroverride.Check,
		certexpiry.Check,
		configlint.Check,
		gitlabreach.Check,
		runnertoken.Check,
		runnermetrics.Check,
		apiauth.Check,
		ownerrbac.Check,
		runnerrbac.Check,
		namespace.Check,
		namespacequota.Check,
		jobidentity.Check,
		jobadmission.Check,
		pendingnonode.Check,
		pendingunschedulable.Check,
		imagepull.Check,
		jobterminations.Check,
		nodelocaldns.Check,
		kubeletserving.Check,
		kubeletreach.Check,
		nodearch.Check,
		clockskew.Check,
		scaletozero.Check,
		execupgrade.Check,
		dockersocket.Check,
		dockerapi.Check,
		helperimage.Check,
		dvppool.Check,
		dvprbac.Check,
		fleetingplugin.Check,
		fleetingconnector.Check,
		fleetingstate.Check,
	}
}

// Settings returns the settings the catalog's nodes declare (each on the
// node that reads it), in the order doctor's --help shows their flags:
// TestSettingsAreTheCatalogs proves the list is checks.Settings(Checks()).
func Settings() []*checks.Setting {
	return []*checks.Setting{
		gitlab.ResolverSetting,
		gitlab.PublicDNSSetting,
		nodedns.ServerSetting,
		configfacts.RepositoryURLSetting,
		rm.MetricsURLSetting,
		execupgrade.ProbeImageSetting,
		clusteroverride.ExpectKcpMount,
	}
}
