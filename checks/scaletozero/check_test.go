package scaletozero

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/socialwebcomputer/doctor/checks/checktest/apigatetest"

	corev1 "k8s.io/api/core/v1"
	schedv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/checktest"
	"github.com/socialwebcomputer/doctor/checks/facts/cluster"
	"github.com/socialwebcomputer/doctor/internal/fixcode"
	"github.com/socialwebcomputer/doctor/testkit/fixproof"
	"github.com/socialwebcomputer/doctor/testkit/hostile"
	"github.com/socialwebcomputer/doctor/testkit/hostilefix"
	"github.com/socialwebcomputer/doctor/testkit/shellshape"
	"github.com/socialwebcomputer/doctor/testkit/testroot"
)

// withAPIAuth puts api-auth in the catalog of a run that lists the cluster:
// the lists gate on it by its ID (kubefacts.AfterAPIAuth).
var withAPIAuth = apigatetest.With()

// pauseConfig is the guide's runner with pause pods of PriorityClass
// gitlab-pause.
var pauseConfig = strings.Replace(testroot.GuideConfig, "    poll_timeout = 3600\n", `    poll_timeout = 3600

    [runners.kubernetes.autoscaler]
      max_pause_pods = 1
      pause_pod_image = "registry.k8s.io/pause:3.10"
      pause_pod_priority_class_name = "gitlab-pause"

      [[runners.kubernetes.autoscaler.policy]]
        idle_count = 0
        idle_time = "1m"
`, 1)

var now = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func node(name string, age time.Duration) corev1.Node {
	return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(now.Add(-age))}}
}

func pod(ns, name, node string, phase corev1.PodPhase) corev1.Pod {
	return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: corev1.PodSpec{NodeName: node}, Status: corev1.PodStatus{Phase: phase}}
}

const job = "runner-abc123-project-5-concurrent-0-x"

// judge runs the check for config's runner on the cluster lists given.
func judge(t *testing.T, config string, l *cluster.Lists) []checks.CheckResult {
	t.Helper()
	root := testroot.New(t)
	root.Write("/etc/gitlab-runner/config.toml", config, 0o600)
	l.Namespace = "gitlab-runner"
	return checktest.Check(t, Check, checktest.Root(root.Dir), checktest.Now(now), checktest.Fact(cluster.ListsFact, l))
}

func result(status checks.Status, fs ...checktest.FindingWant) checktest.ResultWant {
	return checktest.ResultWant{Runner: 1, Status: status, Findings: fs}
}

func TestIdleNodes(t *testing.T) {
	pause := pod("gitlab-runner", "pause-pod-0", "", corev1.PodPending)
	addon := pod("kube-system", "coredns-0", "", corev1.PodPending)
	for _, tc := range []struct {
		name  string
		lists cluster.Lists
		want  checktest.ResultWant
	}{
		{"zero-nodes", cluster.Lists{PendingPods: []corev1.Pod{pause}}, result(checks.StatusPass)},
		{"node-runs-a-job", cluster.Lists{Nodes: []corev1.Node{node("rented-1", 2*time.Hour)},
			RunnerPods: []corev1.Pod{pod("gitlab-runner", job, "rented-1", corev1.PodRunning)}}, result(checks.StatusPass)},
		// A node younger than poll_timeout while a job waits is the node
		// rented for it.
		{"node-rented-for-a-waiting-job", cluster.Lists{Nodes: []corev1.Node{node("rented-1", 2*time.Minute)},
			RunnerPods: []corev1.Pod{pod("gitlab-runner", job, "", corev1.PodPending)}}, result(checks.StatusPass)},
		// A finished job pod keeps no node; an add-on Pending is no intent.
		{"idle-node-nothing-pending", cluster.Lists{Nodes: []corev1.Node{node("rented-1", 2*time.Hour), node("rented-2", time.Minute)},
			RunnerPods: []corev1.Pod{pod("gitlab-runner", job, "rented-1", corev1.PodSucceeded)}, PendingPods: []corev1.Pod{addon}},
			result(checks.StatusPass, checktest.FindingWant{Severity: checks.Info, Says: []string{
				"2 nodes run no job pod and nothing non-job is Pending: scale-down should remove them", "GET nodes: 2 of 2 nodes run no job pod: rented-1, rented-2"}})},
		{"pause-pod-holds-a-node", cluster.Lists{Nodes: []corev1.Node{node("rented-1", 2*time.Hour)}, PendingPods: []corev1.Pod{pause, addon}},
			result(checks.StatusFail, checktest.FindingWant{Severity: checks.Warning, Says: []string{
				"1 node runs no job pod while 1 Pending non-job pod (pause pods or others) counts as intent: the cluster never returns to zero",
				"1 Pending pod that is neither a job nor an add-on: gitlab-runner/pause-pod-0"}})},
		{"nodes-not-listed", cluster.Lists{Errs: map[string]error{"nodes": errors.New("the server was slow")}},
			checktest.ResultWant{Runner: 1, Status: checks.StatusUnknown, Reason: "listing nodes: the server was slow"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checktest.WantResults(t, judge(t, testroot.GuideConfig, &tc.lists), tc.want)
		})
	}
}

func TestPausePriority(t *testing.T) {
	class := func(name string, value int32, globalDefault bool) schedv1.PriorityClass {
		return schedv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value, GlobalDefault: globalDefault}
	}
	prio := int32(100)
	withPriority := pod("gitlab-runner", job, "", corev1.PodPending)
	withPriority.Spec.Priority = &prio
	for _, tc := range []struct {
		name  string
		lists cluster.Lists
		want  checktest.ResultWant
	}{
		{"below-the-jobs", cluster.Lists{PriorityClasses: []schedv1.PriorityClass{class("gitlab-pause", -10, false)}}, result(checks.StatusPass)},
		{"class-missing", cluster.Lists{PriorityClasses: []schedv1.PriorityClass{class("other", 5, false)}},
			result(checks.StatusFail, checktest.FindingWant{Severity: checks.Error, Says: []string{
				`pause_pod_priority_class_name = "gitlab-pause", but no PriorityClass "gitlab-pause" exists: the runner's pause pods are refused at creation`,
				"1 class, none named gitlab-pause", "kind: PriorityClass\nmetadata:\n  name: gitlab-pause\nvalue: -10"}})},
		// The job pods' priority is the global default's when no job pod says.
		{"not-below-the-global-default", cluster.Lists{PriorityClasses: []schedv1.PriorityClass{class("gitlab-pause", 0, false), class("default", 0, true)}},
			result(checks.StatusFail, checktest.FindingWant{Severity: checks.Warning, Says: []string{
				"PriorityClass gitlab-pause has value 0, not below the job pods' 0 (the global default PriorityClass (0 when none)): a job cannot preempt a pause pod",
				"kubectl replace --force -f - <<'EOF'"}})},
		{"not-below-a-job-pod", cluster.Lists{PriorityClasses: []schedv1.PriorityClass{class("gitlab-pause", 100, false)}, RunnerPods: []corev1.Pod{withPriority}},
			result(checks.StatusFail, checktest.FindingWant{Severity: checks.Warning, Says: []string{
				"PriorityClass gitlab-pause has value 100, not below the job pods' 100 (job pod " + job + ")"}})},
		{"classes-not-listed", cluster.Lists{Errs: map[string]error{"priorityclasses": errors.New("forbidden")}},
			checktest.ResultWant{Runner: 1, Status: checks.StatusUnknown, Reason: "listing priorityclasses: forbidden"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checktest.WantResults(t, judge(t, pauseConfig, &tc.lists), tc.want)
		})
	}
	// Without pause pods the priority classes are not read.
	t.Run("no-autoscaler", func(t *testing.T) {
		checktest.WantResults(t, judge(t, testroot.GuideConfig, &cluster.Lists{Errs: map[string]error{"priorityclasses": errors.New("forbidden")}}), result(checks.StatusPass))
	})
}

func TestCases(t *testing.T) { checktest.Cases(t, Check, withAPIAuth) }

// config.toml's pause_pod_priority_class_name, whatever it holds, is
// either a PriorityClass's name (the manifest names it, whole, in one
// object) or the finding itself, with no block: a value that is not a
// name never reaches a command or a manifest.
func TestPriorityClassNameHoldsHostileValues(t *testing.T) {
	for _, v := range hostile.Values {
		if v == "" || !utf8.ValidString(v) {
			continue // "" is no name set; TOML holds UTF-8 only
		}
		config := strings.Replace(pauseConfig, `pause_pod_priority_class_name = "gitlab-pause"`, "pause_pod_priority_class_name = "+hostilefix.TOMLString(t, v), 1)
		rs := judge(t, config, &cluster.Lists{PriorityClasses: []schedv1.PriorityClass{}})
		if len(rs) != 1 || len(rs[0].Findings) != 1 {
			t.Errorf("%q: want one finding, got %+v", v, rs)
			continue
		}
		f := rs[0].Findings[0]
		if fixcode.ObjectName(v) != nil {
			if len(f.Fix.Blocks()) != 0 || !strings.Contains(f.Cause, "is not a valid object name") || f.Severity != checks.Error {
				t.Errorf("%q: not refused as the finding: %s\n%v", v, f.Cause, f.Fix)
			}
			if len(v) < 100 && !strings.Contains(f.Cause, fmt.Sprintf("%q", v)) { // a longer one is redacted as base64
				t.Errorf("%q: the cause does not quote it: %s", v, f.Cause)
			}
			continue
		}
		fixproof.Checker{}.Assert(t, "scale-to-zero fix", f.Fix)
		blocks := f.Fix.Blocks()
		if len(blocks) != 1 || blocks[0].Kind != checks.KindShell {
			t.Fatalf("%q: want one shell block: %v", v, f.Fix)
		}
		shape, err := shellshape.Parse(blocks[0].Text)
		if err != nil || len(shape.Stmts) != 1 || len(shape.Heredocs) != 1 {
			t.Fatalf("%q: the block is not one command with a heredoc (%v):\n%s", v, err, blocks[0].Text)
		}
		if want := `call("kubectl", "apply", "-f", "-") <<`; !strings.HasPrefix(shape.Stmts[0], want) {
			t.Errorf("%q: the command is %s, want %s…", v, shape.Stmts[0], want)
		}
		var pc schedv1.PriorityClass
		if err := yaml.UnmarshalStrict([]byte(shape.Heredocs[0]), &pc); err != nil || pc.Name != v || pc.Value != -10 || pc.Kind != "PriorityClass" {
			t.Errorf("%q: the manifest is %+v (%v)", v, pc, err)
		}
	}
}
