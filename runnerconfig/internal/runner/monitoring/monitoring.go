// Package monitoring holds the element type of
// [[runners.monitoring.job_queuing_durations]].
//
// The package is named monitoring, and the type JobQueuingDuration, because
// BurntSushi/toml prints a struct's Go type ("monitoring.JobQueuingDuration")
// in its "type mismatch" errors; these names make those errors read exactly as
// gitlab-runner's own. See the runnerconfig package documentation.
package monitoring

import "time"

// JobQueuingDuration is one [[runners.monitoring.job_queuing_durations]]
// entry (gitlab-runner common/config/runner/monitoring).
type JobQueuingDuration struct {
	Periods               []string      `toml:"periods"`
	Timezone              string        `toml:"timezone"`
	Threshold             time.Duration `toml:"threshold"` // "30s" or integer nanoseconds
	JobsRunningForProject string        `toml:"jobs_running_for_project"`
}
