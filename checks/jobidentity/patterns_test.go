package jobidentity

import (
	"testing"

	"github.com/socialwebcomputer/doctor/checks/checktest"
)

func TestPatternsMatchTheRefusals(t *testing.T) {
	for _, line := range []string{
		`ERROR: Job failed (system failure): prepare environment: setting up build pod: pods "runner-abc-project-5-concurrent-0-x" is forbidden: error looking up service account gitlab-runner/ci: serviceaccount "ci" not found`,
		`ERROR: Job failed (system failure): prepare environment: setting up build pod: pods "runner-abc-project-5-concurrent-0-x" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false (containers "init-permissions", "build", "helper" must set securityContext.allowPrivilegeEscalation=false)`,
		`ERROR: Job failed (system failure): prepare environment: setting up build pod: Timed out while waiting for ServiceAccount/ci to be present in the cluster`,
		`WARNING: Event retrieved from the cluster: Unable to retrieve some image pull secrets (registry); attempting to pull the image may not succeed.`,
	} {
		if !checktest.Matches(Check.Doc, line) {
			t.Errorf("no pattern matches %q", line)
		}
	}
	for _, line := range []string{"Job succeeded", `Using Kubernetes namespace: gitlab-runner`, `serviceaccount "ci" created`} {
		if checktest.Matches(Check.Doc, line) {
			t.Errorf("a pattern matches %q", line)
		}
	}
}
