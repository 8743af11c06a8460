//go:build integration

package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/testkit/testenv"
	"github.com/socialwebcomputer/doctor/testkit/testpki"
	"github.com/socialwebcomputer/doctor/testkit/testroot"
)

// viewUser is the identity of TestViewOnlyIdentityRunsToTheEnd: a client
// certificate bound only to the built-in view ClusterRole.
const viewUser = "ci-viewer"

// TestViewOnlyIdentityRunsToTheEnd runs doctor with a kubeconfig bound
// only to the built-in view ClusterRole. doctor runs every check to the
// end; each one it cannot perform is unknown and names the RBAC it lacks
// (verb, resource, API group), never skipped as if there were nothing to
// check, and the run does not exit 0.
func TestViewOnlyIdentityRunsToTheEnd(t *testing.T) {
	env := testenv.Start(t)
	env.EnsureNamespace("gitlab-runner")
	env.AggregateClusterRoles()
	env.BindUserToClusterRole(viewUser, "view")
	env.WaitAuthorized(viewUser, nil, "list", "pods")
	cert, key := env.MintClient(viewUser, nil, time.Now().Add(-time.Hour), time.Now().Add(12*time.Hour))
	// An image pull secret makes job-identity read a Secret, which view
	// does not grant.
	config := strings.Replace(pauseConfig, "    poll_timeout = 3600\n", "    poll_timeout = 3600\n    image_pull_secrets = [\"regcred\"]\n", 1)
	if config == pauseConfig {
		t.Fatal("pauseConfig has no poll_timeout line to put image_pull_secrets after")
	}
	root := testroot.New(t)
	root.GuideRunner(config, testpki.Kubeconfig("tenant-ci", env.URL, env.CAPEM, cert, key))
	start := time.Now()
	rep, _ := runReport(t, "run", "--root", root.Dir, "-o", "json", "--now", time.Now().Add(time.Hour).UTC().Format(time.RFC3339),
		"--timeout", "60s", "--skip", "gitlab-reachability")
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("the run took %s: a view-only identity must not wait out deadlines", took)
	}

	nodes := `verb "list" on resource "nodes" in API group ""`
	want := map[string]string{
		"pending-no-node":       nodes,
		"pending-unschedulable": nodes,
		"node-arch":             nodes,
		"scale-to-zero":         nodes,
		"kubelet-reach":         nodes,
		"kubelet-serving":       nodes,
		"node-local-dns":        nodes,
		"job-identity":          `verb "get" on resource "secrets" in API group ""`,
	}
	status := map[string]string{}
	for _, c := range rep.Checks {
		status[c.ID] = string(c.Status)
		if c.Status == "" {
			t.Errorf("%s has no status: the run did not finish", c.ID)
		}
		if c.Status == "skipped" && (strings.Contains(c.Reason, "forbidden") || strings.Contains(c.Reason, "may not")) {
			t.Errorf("%s is skipped for want of RBAC; want unknown: %s", c.ID, c.Reason)
		}
		if c.Status == "unknown" && !strings.Contains(c.Reason, "its RBAC lacks verb ") {
			t.Errorf("%s is unknown without naming the RBAC it lacks: %s", c.ID, c.Reason)
		}
		if need, ok := want[c.ID]; ok {
			delete(want, c.ID)
			if c.Status != "unknown" || !strings.Contains(c.Reason, need) {
				t.Errorf("%s is %s (%s); want unknown naming %s", c.ID, c.Status, c.Reason, need)
			}
		}
	}
	for id := range want {
		t.Errorf("%s did not run", id)
	}
	// The checks view does allow still ran and passed.
	for _, id := range []string{"api-auth", "namespace", "namespace-quota", "image-pull", "job-terminations"} {
		if st := status[id]; st != "pass" {
			t.Errorf("%s is %s; view grants what it reads", id, st)
		}
	}
	if rep.Summary.ExitCode == 0 || len(rep.Summary.Incomplete) == 0 {
		t.Errorf("exit %d, incomplete %q: a run that could not check is not a clean exit", rep.Summary.ExitCode, rep.Summary.Incomplete)
	}
}
