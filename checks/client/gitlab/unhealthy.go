package gitlab

import (
	"fmt"
	"github.com/socialwebcomputer/doctor/internal/fixcode"
	"time"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/runnerconfig"
)

// The runner stops asking for jobs for a while after its job requests fail
// in a row (commands/health_helper.go, gitlab-runner v19.3.0). Only two
// answers mark it unhealthy (network/gitlab.go RequestJob, v19.3.0): a 403,
// and clientError, which getClient returns when it cannot build a client
// for the url at all. A request that gets no HTTP answer (DNS, connect,
// TLS, timeout) is status -1 (network/client.go doJSON), logged as
// "Checking for jobs... failed" with the runner still healthy, as are a 422
// and a 5xx. After unhealthy_requests_limit unhealthy answers in a row
// (DefaultUnhealthyRequestsLimit = 3) it logs
//
//	Runner "<url><short token>" is unhealthy and will be disabled for 1h0m0s seconds!
//
// and feeds no job request for unhealthy_interval (DefaultUnhealthyInterval
// = 60 * time.Minute, common/consts.go), fixed or not.
const (
	DefaultUnhealthyRequestsLimit = 3
	DefaultUnhealthyInterval      = 60 * time.Minute
)

// UnhealthyLimits are a runner's unhealthy_requests_limit and
// unhealthy_interval, or the runner's defaults (GetUnhealthyRequestsLimit,
// GetUnhealthyInterval, common/config.go v19.3.0).
func UnhealthyLimits(r *runnerconfig.Runner) (int, time.Duration) {
	limit, interval := DefaultUnhealthyRequestsLimit, DefaultUnhealthyInterval
	if r == nil {
		return limit, interval
	}
	if r.UnhealthyRequestsLimit >= 1 {
		limit = r.UnhealthyRequestsLimit
	}
	if r.UnhealthyInterval != nil {
		interval = *r.UnhealthyInterval
	}
	return limit, interval
}

// DisabledNote is what a finding that makes job requests fail adds to its
// fix: the runner has likely disabled itself, and only a restart ends that
// before the interval does. restart is the command that restarts the
// runner on this host.
func DisabledNote(r *runnerconfig.Runner, restart fixcode.Cmd) checks.Steps {
	limit, interval := UnhealthyLimits(r)
	return checks.Steps{
		checks.Say(fmt.Sprintf("After %d failed job requests in a row (unhealthy_requests_limit) the runner logs "+
			"'Runner \"…\" is unhealthy and will be disabled for %s seconds!' and asks for no job for %s (unhealthy_interval), "+
			"even once the cause is fixed: after the fix, restart the runner.", limit, interval, interval)),
		checks.Commands(restart),
	}
}
