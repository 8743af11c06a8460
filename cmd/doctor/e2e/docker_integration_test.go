//go:build integration

package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/testkit/testenv"
	"github.com/socialwebcomputer/doctor/testkit/testroot"
)

// TestDockerExecutorScenarios runs doctor against a real Docker Engine
// (Debian's docker.io) listening on /var/run/docker.sock inside the
// scenario's root: a healthy Docker runner has no finding of error or
// worse from any check. Each Docker check's own cases on the same daemon
// are beside it (checks/dockersocket, checks/helperimage: TestLive*).
func TestDockerExecutorScenarios(t *testing.T) {
	h := testenv.StartDockerHost(t)
	h.Root.DockerRunner(testroot.DeckhouseDockerConfig("v19.3.1"), fmt.Sprintf("1001 %d", h.Group))
	rep, _ := runReport(t, "run", "--root", h.Root.Dir, "-o", "json", "--now", time.Now().UTC().Format(time.RFC3339),
		"--timeout", "30s", "--skip", "gitlab-reachability,runner-token")
	for _, f := range rep.Findings {
		if f.Severity >= checks.Error {
			t.Errorf("healthy Docker runner has %s %s: %s", f.Severity, f.Check, f.Cause)
		}
	}
	status := map[string]string{}
	for _, c := range rep.Checks {
		status[c.ID] = string(c.Status)
	}
	for _, id := range []string{"docker-socket", "helper-image"} {
		if s := status[id]; s != "pass" {
			t.Errorf("%s is %q, want pass", id, s)
		}
	}
}
