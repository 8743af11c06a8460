package runnerconfig

import (
	"time"
)

// DefaultPollTimeout is the runner's, when config.toml sets none.
const DefaultPollTimeout = 180 * time.Second

// PollTimeout is [runners.kubernetes] poll_timeout, or the runner's default.
func PollTimeout(r *Runner) time.Duration {
	if r.Kubernetes != nil && r.Kubernetes.PollTimeout > 0 {
		return time.Duration(r.Kubernetes.PollTimeout) * time.Second
	}
	return DefaultPollTimeout
}
