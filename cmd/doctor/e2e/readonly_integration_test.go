//go:build integration

package e2e

import (
	"sort"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/socialwebcomputer/doctor/checks/execupgrade"
	"github.com/socialwebcomputer/doctor/testkit/testenv"
)

// reviews are the only writes doctor may send: they ask the authorizer a
// question and store nothing.
var reviews = map[string]bool{
	"selfsubjectreviews":       true,
	"selfsubjectaccessreviews": true,
	"selfsubjectrulesreviews":  true,
}

// TestReadOnlyByAuditLog proves the default mode is read-only from the
// apiserver's own record: every request doctor's identity made is a get,
// list or watch, an access/self review, or the dry-run create of the job
// pod (dryRun=All: the apiserver runs admission and stores nothing), and
// the pods are those that were there before.
func TestReadOnlyByAuditLog(t *testing.T) {
	env := testenv.Start(t)
	env.BindOwnersToClusterAdmin()
	env.EnsureNamespace("gitlab-runner")
	createNodeDNSDaemonSet(t, env)
	rentNode(t, env, "rented-1", "4", "16Gi", 0)
	env.CreatePod("gitlab-runner", "runner-abc123-project-5-concurrent-0-x1y2z3", "")
	createPriorityClass(t, env, "gitlab-pause", -10)
	before := podNames(t, env)
	rep := runAgainst(t, pauseConfig, ownerKubeconfig(env, env.URL, time.Now().Add(12*time.Hour)), time.Hour)
	for _, c := range rep.Checks {
		if c.Status == "unknown" {
			t.Errorf("%s unknown: %s", c.ID, c.Reason)
		}
	}

	// The audit log is written after each response; wait for the last
	// request doctor made to land.
	deadline := time.Now().Add(10 * time.Second)
	var mine []testenv.AuditEvent
	for time.Now().Before(deadline) {
		events, err := env.AuditEvents()
		if err != nil {
			t.Fatal(err)
		}
		mine = mine[:0]
		for _, e := range events {
			if e.User.Username == ownerDID {
				mine = append(mine, e)
			}
		}
		if len(mine) >= 7 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(mine) < 7 {
		t.Fatalf("audit log has %d requests from %s; want at least the review and the five lists", len(mine), ownerDID)
	}
	dryRuns := 0
	for _, e := range mine {
		switch {
		case e.Verb == "get" || e.Verb == "list" || e.Verb == "watch":
		case e.Verb == "create" && reviews[e.ObjectRef.Resource]:
		case e.Verb == "create" && e.ObjectRef.Resource == "pods" && e.ObjectRef.Subresource == "" && strings.Contains(e.RequestURI, "dryRun=All"):
			// job-admission's question: the job pod as a dry run.
			dryRuns++
		case e.Verb == "create" && e.ObjectRef.Subresource == "exec" && e.ObjectRef.Name == execupgrade.ProbePod && e.ResponseStatus.Code == 404:
			// exec-upgrade's probe: an upgrade request for a pod that does
			// not exist, answered 404; nothing is created or run.
		default:
			t.Errorf("doctor sent %s %s (%s/%s): default mode must be read-only", e.Verb, e.RequestURI, e.ObjectRef.Resource, e.ObjectRef.Subresource)
		}
	}
	if dryRuns == 0 {
		t.Errorf("no dry-run create of the job pod in the audit log")
	}
	if after := podNames(t, env); after != before {
		t.Errorf("the cluster's pods changed: %s before the run, %s after", before, after)
	}
	t.Logf("%d requests from doctor's identity, all reads, reviews or dry runs (%d)", len(mine), dryRuns)
}

// podNames are the cluster's pods, namespace/name, sorted.
func podNames(t *testing.T, env *testenv.Env) string {
	t.Helper()
	pods, err := env.Clientset().CoreV1().Pods("").List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range pods.Items {
		names = append(names, p.Namespace+"/"+p.Name)
	}
	sort.Strings(names)
	return strings.Join(names, ",")
}
