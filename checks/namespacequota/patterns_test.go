package namespacequota

import (
	"testing"

	"github.com/socialwebcomputer/doctor/checks/checktest"
)

// The lines are the apiserver's words as the real apiserver printed them
// in TestJobPodRefusalsMatchTheAPIServer and TestJobScenarios, behind the
// runner's "setting up build pod: %w" (executors/kubernetes/kubernetes.go, v19.3.0).
func TestPatternsMatchTheRefusals(t *testing.T) {
	for _, line := range []string{
		`ERROR: Job failed (system failure): prepare environment: setting up build pod: pods "runner-abc123-project-5-concurrent-0-x1y2z3" is forbidden: exceeded quota: compute, requested: limits.memory=21Gi, used: limits.memory=0, limited: limits.memory=16Gi`,
		`ERROR: Job failed (system failure): prepare environment: setting up build pod: pods "runner-abc-project-5-concurrent-0-x" is forbidden: failed quota: compute: must specify limits.cpu for: build,helper,init-permissions`,
		`ERROR: Job failed (system failure): prepare environment: setting up build pod: pods "runner-abc-project-5-concurrent-0-x" is forbidden: maximum memory usage per Container is 8Gi, but limit is 20Gi`,
	} {
		if !checktest.Matches(Check.Doc, line) {
			t.Errorf("no pattern matches %q", line)
		}
	}
	for _, line := range []string{"Running on runner-abc-project-5-concurrent-0-x via gitlab-runner...", "Job succeeded",
		`setting up build pod: namespaces "gitlab-runner" not found`} {
		if checktest.Matches(Check.Doc, line) {
			t.Errorf("a pattern matches %q", line)
		}
	}
}
