package pendingnonode

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/checks/checktest/apigatetest"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/checktest"
	"github.com/socialwebcomputer/doctor/checks/facts/cluster"
	"github.com/socialwebcomputer/doctor/testkit/testroot"
)

var now = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// pod is a Pending pod of the runner namespace created age ago, bound to
// node ("" for none).
func pod(name, node string, age time.Duration) corev1.Pod {
	return corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "gitlab-runner", Name: name, CreationTimestamp: metav1.NewTime(now.Add(-age))},
		Spec:       corev1.PodSpec{NodeName: node},
		Status:     corev1.PodStatus{Phase: corev1.PodPending},
	}
}

func job(i int, age time.Duration) corev1.Pod {
	return pod(fmt.Sprintf("runner-abc123-project-5-concurrent-%d-x", i), "", age)
}

func nodes(n int) []corev1.Node {
	out := make([]corev1.Node, n)
	for i := range out {
		out[i].Name = fmt.Sprintf("rented-%d", i+1)
	}
	return out
}

// judge runs the check for the guide's runner (poll_timeout 3600, or the
// config given) on the cluster lists given.
func judge(t *testing.T, config string, l *cluster.Lists) []checks.CheckResult {
	t.Helper()
	if config == "" {
		config = testroot.GuideConfig
	}
	root := testroot.New(t)
	root.Write("/etc/gitlab-runner/config.toml", config, 0o600)
	if l.Namespace == "" {
		l.Namespace = "gitlab-runner"
	}
	return checktest.Check(t, Check, checktest.Root(root.Dir), checktest.Now(now), checktest.Fact(cluster.ListsFact, l))
}

func pass() checktest.ResultWant { return checktest.ResultWant{Runner: 1, Status: checks.StatusPass} }

func fail(sev checks.Severity, says ...string) checktest.ResultWant {
	return checktest.ResultWant{Runner: 1, Status: checks.StatusFail, Findings: []checktest.FindingWant{{Severity: sev, Says: says}}}
}

func TestJudge(t *testing.T) {
	pollTimeout600 := strings.Replace(testroot.GuideConfig, "poll_timeout = 3600", "poll_timeout = 600", 1)
	for _, tc := range []struct {
		name   string
		config string
		lists  cluster.Lists
		want   checktest.ResultWant
	}{
		{name: "nothing-pending", lists: cluster.Lists{Nodes: nodes(1)}, want: pass()},
		// A bound pod, a pod that is not a job's, and a Running job pod
		// are not job pods waiting for a node.
		{name: "no-job-pod-waits", lists: cluster.Lists{RunnerPods: []corev1.Pod{
			pod("runner-abc123-project-5-concurrent-0-bound", "rented-1", 2*time.Hour),
			pod("pause-pod-0", "", 2*time.Hour),
			func() corev1.Pod { p := job(1, 2*time.Hour); p.Status.Phase = corev1.PodRunning; return p }(),
		}}, want: pass()},
		{name: "young-pod-zero-nodes-is-normal", lists: cluster.Lists{RunnerPods: []corev1.Pod{job(0, 5*time.Minute), job(1, 90*time.Second)}},
			want: checktest.ResultWant{Runner: 1, Status: checks.StatusPass, Findings: []checktest.FindingWant{{Severity: checks.Info,
				Says: []string{"2 job pods Pending for up to 5m0s with zero nodes: normal, a rented node is booting (poll_timeout 1h0m0s)",
					"2 job pods Pending with no node in gitlab-runner", "; 0 nodes",
					"pod gitlab-runner/runner-abc123-project-5-concurrent-0-x: Pending 5m0s, no node, created 2026-11-29T11:55:00Z"}}}}},
		{name: "past-poll-timeout-zero-nodes", lists: cluster.Lists{RunnerPods: []corev1.Pod{job(0, 2*time.Hour)}, PendingPods: []corev1.Pod{job(0, 2*time.Hour), pod("x", "", time.Hour)}},
			want: fail(checks.Error, "A job pod has been Pending 2h0m0s, past poll_timeout (1h0m0s), and the cluster still has zero nodes: nothing rented a node",
				"The provider is not running, or the market lost the RFP", "(2 Pending cluster-wide); 0 nodes")},
		{name: "past-poll-timeout-nodes-exist", lists: cluster.Lists{RunnerPods: []corev1.Pod{job(0, 2*time.Hour)}, Nodes: nodes(2)},
			want: fail(checks.Error, "A job pod has been Pending 2h0m0s with no node, past poll_timeout (1h0m0s), although 2 nodes exist", "See pending-unschedulable")},
		// poll_timeout is the runner's: 15 minutes is past 600 seconds.
		{name: "poll-timeout-from-config", config: pollTimeout600, lists: cluster.Lists{RunnerPods: []corev1.Pod{job(0, 15*time.Minute)}},
			want: fail(checks.Error, "Pending 15m0s, past poll_timeout (10m0s)")},
		// The evidence names the five oldest and counts the rest.
		{name: "seven-pods-waiting", lists: cluster.Lists{RunnerPods: []corev1.Pod{job(0, time.Minute), job(1, 7*time.Minute), job(2, 2*time.Minute),
			job(3, 3*time.Minute), job(4, 4*time.Minute), job(5, 5*time.Minute), job(6, 6*time.Minute)}},
			want: checktest.ResultWant{Runner: 1, Status: checks.StatusPass, Findings: []checktest.FindingWant{{Severity: checks.Info,
				Says: []string{"7 job pods Pending for up to 7m0s", "concurrent-1-x: Pending 7m0s", "concurrent-3-x: Pending 3m0s", "…: 2 more"}}}}},
		{name: "nodes-not-listed", lists: cluster.Lists{RunnerPods: []corev1.Pod{job(0, 2*time.Hour)}, Errs: map[string]error{"nodes": fmt.Errorf("the server was slow")}},
			want: checktest.ResultWant{Runner: 1, Status: checks.StatusUnknown, Reason: "listing nodes: the server was slow"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checktest.WantResults(t, judge(t, tc.config, &tc.lists), tc.want)
		})
	}
}

// withAPIAuth puts api-auth in the catalog of a run that lists the cluster:
// the lists gate on it by its ID (kubefacts.AfterAPIAuth).
var withAPIAuth = apigatetest.With()

func TestCases(t *testing.T) { checktest.Cases(t, Check, withAPIAuth) }
