// Trimmed copy of gitlab-runner v19.2.1 (tag commit
// a470182f2a48e0e03ed11c3c4a2026b6597ecd26), made by
// internal/source/runnerversion/keygen: only the package clause, the imports and,
// byte for byte, the declarations the config.toml key walk reads. Copyright
// (c) 2015-2019 GitLab Inc., MIT License; the full text is in
// runnerconfig/testdata/src/LICENSE.

package runner

import (
	"fmt"

	"gitlab.com/gitlab-org/gitlab-runner/common/config/runner/monitoring"
)

type Monitoring struct {
	JobQueuingDurations monitoring.JobQueuingDurations `toml:"job_queuing_durations,omitempty" long:"job-queuing-duration" json:",omitempty"`
}
