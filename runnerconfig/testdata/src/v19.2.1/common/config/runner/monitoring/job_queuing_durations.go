// Trimmed copy of gitlab-runner v19.2.1 (tag commit
// a470182f2a48e0e03ed11c3c4a2026b6597ecd26), made by
// internal/source/runnerversion/keygen: only the package clause, the imports and,
// byte for byte, the declarations the config.toml key walk reads. Copyright
// (c) 2015-2019 GitLab Inc., MIT License; the full text is in
// runnerconfig/testdata/src/LICENSE.

package monitoring

import (
	"fmt"
	"regexp"
	"time"

	"gitlab.com/gitlab-org/gitlab-runner/helpers/timeperiod"
)

type JobQueuingDurations []*JobQueuingDuration

type JobQueuingDuration struct {
	Periods  []string `toml:"periods" long:"periods"`
	Timezone string   `toml:"timezone" long:"timezone" json:",omitempty"`

	Threshold             time.Duration `toml:"threshold" long:"threshold"`
	JobsRunningForProject string        `toml:"jobs_running_for_project,omitempty" long:"jobs-running-for-project" json:",omitempty"`

	jobsRunningForProjectRx *regexp.Regexp
	timePeriod              *timeperiod.TimePeriod

	timer func() time.Time
}
