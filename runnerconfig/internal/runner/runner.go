// Package runner holds the type of [runners.monitoring]. It is named runner,
// and the type Monitoring, so that TOML type-mismatch errors name it
// "runner.Monitoring" exactly as gitlab-runner does.
package runner

import "github.com/socialwebcomputer/doctor/runnerconfig/internal/runner/monitoring"

// Monitoring is [runners.monitoring] (experimental in gitlab-runner).
type Monitoring struct {
	JobQueuingDurations []*monitoring.JobQueuingDuration `toml:"job_queuing_durations"`
}
