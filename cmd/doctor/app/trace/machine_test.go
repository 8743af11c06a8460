package trace

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The stage machine fed synthetic objects: no apiserver, no clock but the
// one the test passes.

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func at(d time.Duration) time.Time { return t0.Add(d) }

func mkJobPod(name string, created time.Time) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "gitlab-runner", UID: types.UID("uid-" + name),
			CreationTimestamp: metav1.NewTime(created),
			Labels: map[string]string{
				LabelLegacyPod: "runner-abc123-project-5-concurrent-0", LabelJobPod: "runner-abc123-project-5-concurrent-0",
				LabelProjectID: "5", LabelManagerName: "kcp-tenant-kubernetes",
			}},
		Spec:   corev1.PodSpec{Containers: []corev1.Container{{Name: "build", Image: "busybox:1.36"}, {Name: "helper", Image: "gitlab-runner-helper:x86_64"}}},
		Status: corev1.PodStatus{Phase: corev1.PodPending},
	}
}

func mkNode(name string, created time.Time, ready bool) *corev1.Node {
	st := corev1.ConditionFalse
	reason := "KubeletNotReady"
	if ready {
		st, reason = corev1.ConditionTrue, "KubeletReady"
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(created)},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: st, Reason: reason,
			LastTransitionTime: metav1.NewTime(created.Add(40 * time.Second))}}},
	}
}

func mkEvent(p *corev1.Pod, typ, reason, msg, component, fieldPath string, when time.Time) *corev1.Event {
	return &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: fmt.Sprintf("%s.%d", p.Name, when.UnixNano()), Namespace: p.Namespace},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: p.Namespace, Name: p.Name, UID: p.UID, FieldPath: fieldPath},
		Type:           typ, Reason: reason, Message: msg, Source: corev1.EventSource{Component: component},
		FirstTimestamp: metav1.NewTime(when), LastTimestamp: metav1.NewTime(when),
	}
}

func bound(p *corev1.Pod, node string) *corev1.Pod {
	q := p.DeepCopy()
	q.Spec.NodeName = node
	q.Status.Conditions = append(q.Status.Conditions, corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue})
	return q
}

func withStatus(p *corev1.Pod, phase corev1.PodPhase, states map[string]corev1.ContainerState, ready bool) *corev1.Pod {
	q := p.DeepCopy()
	q.Status.Phase = phase
	q.Status.ContainerStatuses = nil
	for _, c := range q.Spec.Containers {
		cs := corev1.ContainerStatus{Name: c.Name, Image: c.Image, State: states[c.Name], Ready: ready}
		q.Status.ContainerStatuses = append(q.Status.ContainerStatuses, cs)
	}
	return q
}

func running() corev1.ContainerState {
	return corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(t0)}}
}

func allC(s corev1.ContainerState) map[string]corev1.ContainerState {
	return map[string]corev1.ContainerState{"build": s, "helper": s}
}

func stages(recs []Record) []Step {
	var out []Step
	for _, r := range recs {
		if r.Kind == KindStage {
			out = append(out, r.Step)
		}
	}
	return out
}

func wantOrder(t *testing.T, steps []Step, want ...Stage) {
	t.Helper()
	var got []Stage
	for _, s := range steps {
		got = append(got, s.Stage)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("stages %v, want %v", got, want)
	}
}

func TestMachineFullTimeline(t *testing.T) {
	m := newMachine(Options{Namespace: "gitlab-runner", Next: true, RunnerName: "kcp-tenant-kubernetes"}, t0)
	old := mkJobPod("runner-abc123-project-5-concurrent-0-old", t0.Add(-time.Hour))
	m.initNodes(t0, nil, true)
	m.initEvents(t0, nil, true)
	m.initPods(t0, []corev1.Pod{*old})
	var recs []Record
	collect := func() { recs = append(recs, m.take()...) }

	// Ignored: the pod that existed before, a pause pod, another runner's job, a plain pod.
	m.podChanged(at(time.Second), withStatus(old, corev1.PodRunning, allC(running()), true), false)
	pause := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "runner-pause-abc", Namespace: "gitlab-runner", UID: "p",
		Labels: map[string]string{LabelPausePod: "true", "manager.runner.gitlab.com/id-short": "abc123"}}}
	m.podChanged(at(time.Second), pause, false)
	other := mkJobPod("runner-zzz-project-9-concurrent-0-o", at(time.Second))
	other.UID, other.Labels[LabelManagerName] = "o", "another-runner"
	m.podChanged(at(time.Second), other, false)
	m.podChanged(at(time.Second), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "gitlab-runner", UID: "w"}}, false)
	collect()
	if len(stages(recs)) != 0 || m.pod != nil {
		t.Fatalf("followed a pod that is not the next job pod: %v", recs)
	}

	p := mkJobPod("runner-abc123-project-5-concurrent-0-x1y2z3", at(2*time.Second))
	m.podChanged(at(2*time.Second), p, false)
	m.eventChanged(at(3*time.Second), mkEvent(p, "Warning", "FailedScheduling", "0/0 nodes are available", "default-scheduler", "", at(3*time.Second)))
	collect()
	wantOrder(t, stages(recs), StageCreated)
	m.eventChanged(at(5*time.Second), mkEvent(p, "Normal", "TriggeredScaleUp", "pod triggered scale-up: [{pool 0->1 (max: 3)}]", "cluster-autoscaler", "", at(5*time.Second)))
	m.nodeChanged(at(65*time.Second), mkNode("rented-1", at(64*time.Second), false), false)
	m.nodeChanged(at(95*time.Second), mkNode("rented-1", at(64*time.Second), true), false)
	p = bound(p, "rented-1")
	m.podChanged(at(96*time.Second), p, false)
	p = withStatus(p, corev1.PodPending, allC(corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}), false)
	m.podChanged(at(97*time.Second), p, false)
	m.eventChanged(at(100*time.Second), mkEvent(p, "Normal", "Pulled", `Successfully pulled image "busybox:1.36"`, "kubelet", "spec.containers{build}", at(100*time.Second)))
	collect()
	if n := len(stages(recs)); n != 5 {
		t.Fatalf("after one of two pulls: %d stages, want 5 (images-pulled waits for helper)", n)
	}
	m.eventChanged(at(104*time.Second), mkEvent(p, "Normal", "Pulled", `Container image "helper" already present on machine`, "kubelet", "spec.containers{helper}", at(104*time.Second)))
	p = withStatus(p, corev1.PodRunning, allC(running()), true)
	m.podChanged(at(105*time.Second), p, false)
	p = withStatus(p, corev1.PodSucceeded, allC(corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, StartedAt: metav1.NewTime(t0)}}), false)
	m.podChanged(at(300*time.Second), p, false)
	m.podChanged(at(301*time.Second), p, true)
	collect()
	if m.end != nil {
		t.Fatalf("ended before the node went: %v", m.end)
	}
	m.nodeChanged(at(900*time.Second), mkNode("rented-1", at(64*time.Second), true), true)
	collect()

	steps := stages(recs)
	wantOrder(t, steps, Stages()...)
	wantSince := []time.Duration{2 * time.Second, 3 * time.Second, 60 * time.Second, 30 * time.Second, time.Second,
		8 * time.Second, time.Second, 195 * time.Second, time.Second, 599 * time.Second}
	for i, s := range steps {
		if s.Skipped || s.Inferred {
			t.Errorf("%s skipped=%v inferred=%v, want seen", s.Stage, s.Skipped, s.Inferred)
		}
		if s.SincePrev != wantSince[i] {
			t.Errorf("%s: since previous %s, want %s", s.Stage, s.SincePrev, wantSince[i])
		}
	}
	for stage, want := range map[Stage]string{
		StageCreated: "cluster at 0 nodes", StageScaleDecision: "TriggeredScaleUp: pod triggered scale-up",
		StageNodeJoined: "node rented-1 joined", StageNodeReady: "Ready, 30s after it joined",
		StageScheduled: "placed on node rented-1", StageImagesPulled: "already present",
		StageRunning: "build container ready", StageFinished: "Succeeded, build exited 0", StageScaledDown: "back at 0 nodes",
	} {
		if d := steps[stage-1].Detail; !strings.Contains(d, want) {
			t.Errorf("%s detail %q, want it to contain %q", stage, d, want)
		}
	}
	if m.end == nil || !m.end.Completed || m.end.ExitCode() != 0 || len(m.end.Timeline) != NumStages {
		t.Fatalf("verdict %+v, want completed with the whole timeline", m.end)
	}
}

func TestMachineNodeThatExisted(t *testing.T) {
	m := newMachine(Options{Namespace: "gitlab-runner", Pod: "runner-abc123-project-5-concurrent-0-a"}, t0)
	m.initNodes(t0, []corev1.Node{*mkNode("always-on", t0.Add(-24*time.Hour), true)}, true)
	m.initEvents(t0, nil, true)
	m.initPods(t0, nil)
	if len(m.take()) != 0 {
		t.Fatal("stages before the pod exists")
	}
	if v := m.verdict(at(time.Second), false, "x"); v.Stuck != StageCreated || !strings.Contains(v.Detail, "no pod runner-abc123") {
		t.Fatalf("waiting for a named pod: %+v", v)
	}
	p := mkJobPod("runner-abc123-project-5-concurrent-0-a", at(time.Second))
	m.podChanged(at(time.Second), p, false)
	m.podChanged(at(2*time.Second), bound(p, "always-on"), false)
	steps := stages(m.take())
	wantOrder(t, steps, StageCreated, StageScaleDecision, StageNodeJoined, StageNodeReady, StageScheduled)
	for _, s := range steps[1:4] {
		if !s.Skipped || !strings.Contains(s.Detail, "always-on, which existed before it") {
			t.Errorf("%s: %+v, want skipped: placed on a node that existed", s.Stage, s)
		}
	}
	if !strings.Contains(steps[0].Detail, "cluster at 1 nodes") {
		t.Errorf("created: %q", steps[0].Detail)
	}
	q := withStatus(bound(p, "always-on"), corev1.PodRunning, allC(running()), true)
	m.podChanged(at(3*time.Second), q, false)
	m.podChanged(at(4*time.Second), q, true) // deleted at once, grace 0
	steps = stages(m.take())
	wantOrder(t, steps, StageImagesPulled, StageRunning, StageFinished, StagePodDeleted, StageScaledDown)
	// The running containers' statuses prove the pull; the deletion while
	// Running proves the job's end.
	if steps[0].Inferred || !steps[2].Inferred || steps[4].Detail != "cluster back at 1 nodes" {
		t.Errorf("images-pulled seen, finished inferred, scaled-down at 1 node: %+v", steps)
	}
	if m.end == nil || !m.end.Completed {
		t.Fatalf("verdict %+v", m.end)
	}
}

func TestMachineInfersWhatFellBetweenObservations(t *testing.T) {
	m := newMachine(Options{Namespace: "gitlab-runner", Next: true}, t0)
	m.initPods(t0, nil)
	p := mkJobPod("runner-abc123-project-5-concurrent-0-b", at(time.Second))
	m.podChanged(at(time.Second), p, false)
	m.nodeChanged(at(30*time.Second), mkNode("rented-2", at(30*time.Second), false), false)
	// One update: placed on the node and running (the Ready update of the
	// node arrives later, on its own stream).
	m.podChanged(at(40*time.Second), withStatus(bound(p, "rented-2"), corev1.PodRunning, allC(running()), true), false)
	steps := stages(m.take())
	wantOrder(t, steps, StageCreated, StageScaleDecision, StageNodeJoined, StageNodeReady, StageScheduled, StageImagesPulled, StageRunning)
	for i, want := range []bool{false, true, false, true, false, false, false} {
		if steps[i].Inferred != want {
			t.Errorf("%s inferred=%v, want %v (%s)", steps[i].Stage, steps[i].Inferred, want, steps[i].Detail)
		}
	}
	if !strings.Contains(steps[1].Detail, "no scale-decision event") {
		t.Errorf("scale-decision: %q", steps[1].Detail)
	}
	m.nodeChanged(at(41*time.Second), mkNode("rented-2", at(30*time.Second), true), false)
	if len(m.take()) != 0 {
		t.Error("a late Ready added a line for a stage already inferred")
	}
}

func TestMachineEndsStuckWhenThePodGoesBeforeItRan(t *testing.T) {
	for _, tc := range []struct {
		name   string
		do     func(m *machine, p *corev1.Pod)
		stuck  Stage
		reason string
	}{
		{"deleted while pending", func(m *machine, p *corev1.Pod) { m.podChanged(at(200*time.Second), p, true) },
			StageScaleDecision, "deleted while waiting for scale-decision: the runner gave up on it (poll_timeout 3m0s)"},
		{"failed at admission", func(m *machine, p *corev1.Pod) {
			q := bound(p, "n1")
			q.Status.Phase, q.Status.Reason, q.Status.Message = corev1.PodFailed, "OutOfcpu", "Node didn't have enough resource: cpu"
			m.podChanged(at(20*time.Second), q, false)
		}, StageImagesPulled, "failed before it ran: OutOfcpu: Node didn't have enough resource: cpu"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newMachine(Options{Namespace: "gitlab-runner", Next: true}, t0)
			m.initNodes(t0, []corev1.Node{*mkNode("n1", t0.Add(-time.Hour), true)}, true)
			m.initPods(t0, nil)
			p := mkJobPod("runner-abc123-project-5-concurrent-0-c", at(time.Second))
			m.podChanged(at(time.Second), p, false)
			tc.do(m, p)
			if m.end == nil || m.end.Completed || m.end.Stuck != tc.stuck || !strings.Contains(m.end.Reason, tc.reason) {
				t.Fatalf("verdict %+v, want stuck in %s: %s", m.end, tc.stuck, tc.reason)
			}
			if m.end.ExitCode() != 2 {
				t.Errorf("exit %d", m.end.ExitCode())
			}
		})
	}
}

func TestMachineRunnerCleanupFinishesTheJob(t *testing.T) {
	m := newMachine(Options{Namespace: "gitlab-runner", Next: true}, t0)
	m.initNodes(t0, []corev1.Node{*mkNode("n1", t0.Add(-time.Hour), true)}, true)
	m.initPods(t0, nil)
	p := mkJobPod("runner-abc123-project-5-concurrent-0-d", at(time.Second))
	m.podChanged(at(time.Second), p, false)
	p = withStatus(bound(p, "n1"), corev1.PodRunning, allC(running()), true)
	m.podChanged(at(2*time.Second), p, false)
	m.take()
	now := metav1.NewTime(at(60 * time.Second))
	p.DeletionTimestamp = &now
	m.podChanged(at(60*time.Second), p, false)
	steps := stages(m.take())
	wantOrder(t, steps, StageFinished)
	if !strings.Contains(steps[0].Detail, "the runner deleted the pod after the job") {
		t.Errorf("finished: %q", steps[0].Detail)
	}
	if v := m.verdict(at(61*time.Second), false, "x"); v.Stuck != StagePodDeleted || !strings.Contains(v.Detail, "Terminating since") {
		t.Errorf("waiting for the deletion: %+v", v)
	}
	m.podChanged(at(90*time.Second), p, true)
	wantOrder(t, stages(m.take()), StagePodDeleted, StageScaledDown)
}

func TestMachineScaleDecisions(t *testing.T) {
	for _, tc := range []struct {
		reason, component, typ string
		want                   Decision
	}{
		{"TriggeredScaleUp", "cluster-autoscaler", "Normal", ScaleUp},
		{"NotTriggerScaleUp", "cluster-autoscaler", "Normal", NoScaleUp},
		{"Nominated", "karpenter", "Normal", ScaleUp},
		{"FailedScheduling", "karpenter", "Warning", NoScaleUp},
		{"Provision", "socialweb-provider", "Normal", ScaleUp},
		{"FailedScheduling", "default-scheduler", "Warning", NoDecision},
		{"Scheduled", "default-scheduler", "Normal", NoDecision},
		{"Pulled", "kubelet", "Normal", NoDecision},
	} {
		ev := mkEvent(mkJobPod("p", t0), tc.typ, tc.reason, "m", tc.component, "", t0)
		if got := ScaleDecision(ev); got != tc.want {
			t.Errorf("%s from %s: %v, want %v", tc.reason, tc.component, got, tc.want)
		}
	}
	// A refusal is a decision (stage 2), and says so.
	m := newMachine(Options{Namespace: "gitlab-runner", Next: true}, t0)
	m.initPods(t0, nil)
	p := mkJobPod("runner-abc123-project-5-concurrent-0-e", at(time.Second))
	// Seen before the pod itself: the events stream is not ordered with
	// the pods stream, so it waits for the pod.
	m.eventChanged(at(time.Second), mkEvent(p, "Normal", "NotTriggerScaleUp", "pod didn't trigger scale-up: max total nodes in cluster reached", "cluster-autoscaler", "", at(time.Second)))
	m.podChanged(at(2*time.Second), p, false)
	steps := stages(m.take())
	wantOrder(t, steps, StageCreated, StageScaleDecision)
	if !strings.HasPrefix(steps[1].Detail, "no scale-up: NotTriggerScaleUp") {
		t.Errorf("detail %q", steps[1].Detail)
	}
}

func TestMachineHistorical(t *testing.T) {
	// --pod of a pod that is already running when the trace starts: the
	// stages come from the objects' own timestamps.
	p := mkJobPod("runner-abc123-project-5-concurrent-0-f", t0)
	p = bound(p, "rented-3")
	p.Status.Conditions[0].LastTransitionTime = metav1.NewTime(at(100 * time.Second))
	p = withStatus(p, corev1.PodRunning, allC(running()), true)
	p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.ContainersReady, Status: corev1.ConditionTrue,
		LastTransitionTime: metav1.NewTime(at(130 * time.Second))})
	n := mkNode("rented-3", at(50*time.Second), true) // Ready 40s after it was created
	m := newMachine(Options{Namespace: "gitlab-runner", Pod: p.Name}, at(time.Hour))
	m.initNodes(at(time.Hour), []corev1.Node{*n}, true)
	m.initEvents(at(time.Hour), []corev1.Event{
		*mkEvent(p, "Normal", "TriggeredScaleUp", "pod triggered scale-up", "cluster-autoscaler", "", at(10*time.Second)),
		*mkEvent(p, "Normal", "Pulled", "pulled build", "kubelet", "spec.containers{build}", at(110*time.Second)),
		*mkEvent(p, "Normal", "Pulled", "pulled helper", "kubelet", "spec.containers{helper}", at(120*time.Second)),
	}, true)
	m.initPods(at(time.Hour), []corev1.Pod{*p})
	steps := stages(m.take())
	wantOrder(t, steps, StageCreated, StageScaleDecision, StageNodeJoined, StageNodeReady, StageScheduled, StageImagesPulled, StageRunning)
	want := []time.Duration{0, 10 * time.Second, 40 * time.Second, 40 * time.Second, 10 * time.Second, 20 * time.Second, 10 * time.Second}
	for i, s := range steps {
		if s.Inferred || s.Skipped || s.SincePrev != want[i] {
			t.Errorf("%s: since %s inferred=%v skipped=%v, want since %s, seen", s.Stage, s.SincePrev, s.Inferred, s.Skipped, want[i])
		}
	}
	if len(m.boots) != 1 || m.boots[0] != 40*time.Second {
		t.Errorf("boots %v, want [40s] from the node's Ready transition", m.boots)
	}
}

func TestMachineBudgets(t *testing.T) {
	for _, tc := range []struct {
		poll  time.Duration
		stage Stage
		boots []time.Duration
		want  time.Duration
		ok    bool
	}{
		{180 * time.Second, StageScaleDecision, nil, 30 * time.Second, true},
		{3600 * time.Second, StageScaleDecision, nil, 2 * time.Minute, true},
		{600 * time.Second, StageScheduled, nil, 100 * time.Second, true},
		{180 * time.Second, StageNodeReady, nil, 0, false},
		{180 * time.Second, StageNodeReady, []time.Duration{60 * time.Second, 80 * time.Second}, 140 * time.Second, true},
		{180 * time.Second, StageNodeReady, []time.Duration{5 * time.Second}, 30 * time.Second, true},
		{180 * time.Second, StageImagesPulled, nil, 0, false},
		{180 * time.Second, StageFinished, nil, 0, false},
		{180 * time.Second, StagePodDeleted, nil, 2 * time.Minute, true},
		{180 * time.Second, StageScaledDown, nil, 20 * time.Minute, true},
	} {
		got, ok := DefaultBudget(tc.stage, tc.poll, tc.boots)
		if got != tc.want || ok != tc.ok {
			t.Errorf("DefaultBudget(%s, poll %s, boots %v) = %s, %v; want %s, %v", tc.stage, tc.poll, tc.boots, got, ok, tc.want, tc.ok)
		}
	}

	// poll_timeout is shared by stages 2 to 7, from the pod's creation.
	m := newMachine(Options{Namespace: "gitlab-runner", Next: true, PollTimeout: 60 * time.Second}, t0)
	m.initPods(t0, nil)
	m.podChanged(at(time.Second), mkJobPod("runner-abc123-project-5-concurrent-0-g", at(time.Second)), false)
	m.eventChanged(at(2*time.Second), mkEvent(m.pod, "Normal", "TriggeredScaleUp", "up", "cluster-autoscaler", "", at(2*time.Second)))
	m.take()
	dl, budget, why, ok := m.deadline()
	if !ok || !dl.Equal(at(61*time.Second)) || budget != 59*time.Second || !strings.Contains(why, "poll_timeout 1m0s") {
		t.Fatalf("node-joined deadline %s (%s, %q), want created+poll_timeout", dl, budget, why)
	}
	if _, over := m.checkBudget(at(60 * time.Second)); over {
		t.Fatal("over budget before the deadline")
	}
	s, over := m.checkBudget(at(61 * time.Second))
	recs := m.take()
	if !over || s != StageNodeJoined || len(recs) != 1 || recs[0].Kind != KindOverBudget || recs[0].Waited != 59*time.Second ||
		strings.Join(recs[0].Checks, ",") != "pending-no-node,pending-unschedulable,scale-to-zero" {
		t.Fatalf("over budget: %v %v %+v", s, over, recs)
	}
	if _, again := m.checkBudget(at(120 * time.Second)); again {
		t.Error("the same stage went over budget twice")
	}

	// A flag replaces the default and the shared poll_timeout; 0 turns it off.
	m.budgets = map[Stage]time.Duration{StageNodeJoined: 10 * time.Minute}
	if dl, _, why, _ := m.deadline(); !dl.Equal(at(2*time.Second+10*time.Minute)) || !strings.Contains(why, "(flag)") {
		t.Errorf("flag budget: %s %q", dl, why)
	}
	m.budgets = map[Stage]time.Duration{StageNodeJoined: 0}
	if _, _, _, ok := m.deadline(); ok {
		t.Error("a budget of 0 still has a deadline")
	}
}

func TestMachineRelist(t *testing.T) {
	m := newMachine(Options{Namespace: "gitlab-runner", Next: true}, t0)
	m.initNodes(t0, nil, true)
	m.initPods(t0, nil)
	// The pod appears only in a relist (its ADDED fell into a 410 gap).
	p := mkJobPod("runner-abc123-project-5-concurrent-0-h", at(time.Second))
	m.podsRelisted(at(5*time.Second), []corev1.Pod{*p})
	m.nodesRelisted(at(6*time.Second), []corev1.Node{*mkNode("rented-4", at(5*time.Second), true)})
	wantOrder(t, stages(m.take()), StageCreated, StageScaleDecision, StageNodeJoined, StageNodeReady)
	// Scheduled and running, then gone from a relist: deleted meanwhile.
	m.podChanged(at(7*time.Second), withStatus(bound(p, "rented-4"), corev1.PodRunning, allC(running()), true), false)
	m.podsRelisted(at(8*time.Second), nil)
	m.nodesRelisted(at(9*time.Second), nil)
	wantOrder(t, stages(m.take()), StageScheduled, StageImagesPulled, StageRunning, StageFinished, StagePodDeleted, StageScaledDown)
	if m.end == nil || !m.end.Completed {
		t.Fatalf("verdict %+v", m.end)
	}
}

func TestMachineForbiddenStreams(t *testing.T) {
	m := newMachine(Options{Namespace: "gitlab-runner", Next: true}, t0)
	m.initNodes(t0, nil, false)
	m.initEvents(t0, nil, false)
	m.initPods(t0, nil)
	p := mkJobPod("runner-abc123-project-5-concurrent-0-i", at(time.Second))
	m.podChanged(at(time.Second), p, false)
	if w := m.waitingOn(); !strings.Contains(w, "events cannot be read") {
		t.Errorf("waiting on %q", w)
	}
	p = withStatus(bound(p, "n9"), corev1.PodRunning, allC(running()), true)
	m.podChanged(at(2*time.Second), p, false)
	m.podChanged(at(3*time.Second), p, true)
	steps := stages(m.take())
	wantOrder(t, steps, Stages()...)
	if !strings.Contains(steps[2].Detail, "nodes cannot be listed") || !steps[9].Skipped {
		t.Errorf("node stages: %+v / %+v", steps[2], steps[9])
	}
	if m.end == nil || !m.end.Completed {
		t.Fatalf("verdict %+v", m.end)
	}
}

func TestIsJobPod(t *testing.T) {
	pod := func(name string, labels map[string]string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	}
	for _, tc := range []struct {
		p    *corev1.Pod
		want bool
	}{
		{pod("runner-abc123-project-5-concurrent-0-x1y2z3", nil), true},
		{pod("anything", map[string]string{LabelJobPod: "runner-abc-project-5-concurrent-0"}), true},
		{pod("anything", map[string]string{LabelProjectID: "5"}), true},
		{pod("anything", map[string]string{LabelLegacyPod: "runner-abc-project-5-concurrent-0"}), true},
		{pod("runner-abc123-project-5-concurrent-0-p", map[string]string{LabelPausePod: "true", "manager.runner.gitlab.com/id-short": "abc123"}), false},
		{pod("gitlab-runner-5fd7489954-jx682", map[string]string{"app": "gitlab-runner", "manager.runner.gitlab.com/id-short": "x"}), false},
		{pod("web", map[string]string{LabelLegacyPod: "web"}), false},
	} {
		if got := IsJobPod(tc.p); got != tc.want {
			t.Errorf("IsJobPod(%s %v) = %v", tc.p.Name, tc.p.Labels, got)
		}
	}
	if got := SanitizeLabel("kcp tenant/kubernetes!"); got != "kcp_tenant_kubernetes" {
		t.Errorf("SanitizeLabel: %q", got)
	}
}

func TestParseStageAndBudgets(t *testing.T) {
	for i, s := range Stages() {
		if p, err := ParseStage(s.String()); err != nil || p != s {
			t.Errorf("ParseStage(%q) = %v, %v", s, p, err)
		}
		if p, _ := ParseStage(fmt.Sprint(i + 1)); p != s {
			t.Errorf("ParseStage(%d) = %v", i+1, p)
		}
	}
	if _, err := ParseStage("nodes"); err == nil {
		t.Error("ParseStage accepted an unknown name")
	}
	b, err := ParseBudgets([]string{"node-ready=5m", "scheduled=90,finished=0"})
	if err != nil || b[StageNodeReady] != 5*time.Minute || b[StageScheduled] != 90*time.Second || b[StageFinished] != 0 || len(b) != 3 {
		t.Fatalf("ParseBudgets: %v %v", b, err)
	}
	if FormatBudgets(b) != "node-ready=5m0s,scheduled=1m30s,finished=0s" {
		t.Errorf("FormatBudgets: %s", FormatBudgets(b))
	}
	for _, bad := range []string{"node-ready", "nope=5m", "scheduled=-1s", "scheduled=soon"} {
		if _, err := ParseBudgets([]string{bad}); err == nil {
			t.Errorf("ParseBudgets(%q) accepted", bad)
		}
	}
}
