//go:build integration

package trace

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/socialwebcomputer/doctor/checks/all"
	"github.com/socialwebcomputer/doctor/checks/client/kube"
	"github.com/socialwebcomputer/doctor/checks/facts/kubefacts"
	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/testkit/testenv"
	"github.com/socialwebcomputer/doctor/testkit/testpki"
	"github.com/socialwebcomputer/doctor/testkit/testroot"
)

// The trace on a real kube-apiserver: nothing schedules or runs here, so the
// test is the cluster. It creates the job pod, the events a scaler and a
// kubelet would, the node and its status, binds the pod through the
// scheduler's own door (pods/binding), patches the pod's status, and
// deletes pod and node, waiting at each step for the trace to print the
// stage.

// traceUser is the identity the trace reads with: owner-group, so
// cluster-admin through the gateway's binding, like the guide's runner.
const traceUser = "doctor-trace-test"

type traceWorld struct {
	env   *testenv.Env
	admin kubernetes.Interface
	// client is the trace's: kubefacts.NewAPI's transport (hostio.Env.Dial,
	// bounded bodies) without the overall timeout (WatchClient).
	client kube.Interface
}

func startWorld(t *testing.T, opts ...testenv.Option) *traceWorld {
	env := testenv.Start(t, opts...)
	env.BindOwnersToClusterAdmin()
	cert, key := env.MintClient(traceUser, []string{testenv.OwnersGroup}, time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour))
	api, err := kubefacts.NewAPI(&hostio.Env{}, env.ClientConfig(cert, key))
	if err != nil {
		t.Fatal(err)
	}
	wc, err := WatchClient(api.Config)
	if err != nil {
		t.Fatal(err)
	}
	env.WaitAuthorized(traceUser, []string{testenv.OwnersGroup}, "watch", "pods")
	return &traceWorld{env: env, admin: env.Clientset(), client: wc}
}

// --- the output, read as the CLI's pipe would carry it ---

type outLine struct {
	at   time.Time
	text string
	m    map[string]any
}

func (l outLine) event() string { s, _ := l.m["event"].(string); return s }
func (l outLine) stage() string { s, _ := l.m["stage"].(string); return s }

type outReader struct {
	t    *testing.T
	w    *os.File
	ch   chan outLine
	mu   sync.Mutex
	seen []outLine
}

// pipeOutput is an os.Pipe the trace writes JSON lines to; each line is
// stamped when it arrives.
func pipeOutput(t *testing.T) *outReader {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	o := &outReader{t: t, w: w, ch: make(chan outLine, 4096)}
	go func() {
		defer r.Close()
		defer close(o.ch)
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
		for sc.Scan() {
			l := outLine{at: time.Now(), text: sc.Text()}
			if err := json.Unmarshal(sc.Bytes(), &l.m); err != nil {
				l.m = map[string]any{"event": "not-json"}
			}
			o.ch <- l
		}
	}()
	t.Cleanup(func() { w.Close() })
	return o
}

// next waits for the first line (after those already read) that match
// accepts.
func (o *outReader) next(what string, match func(outLine) bool) outLine {
	o.t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case l, ok := <-o.ch:
			if !ok {
				o.t.Fatalf("output ended before %s:\n%s", what, o.dump())
			}
			o.mu.Lock()
			o.seen = append(o.seen, l)
			o.mu.Unlock()
			if l.event() == "not-json" {
				o.t.Fatalf("a line that is not JSON: %q", l.text)
			}
			if match(l) {
				return l
			}
		case <-timeout:
			o.t.Fatalf("no %s within 10s:\n%s", what, o.dump())
		}
	}
}

func (o *outReader) stage(s Stage) outLine {
	o.t.Helper()
	return o.next("stage "+s.String(), func(l outLine) bool { return l.event() == "stage" && l.stage() == s.String() })
}

func (o *outReader) event(ev string, s Stage) outLine {
	o.t.Helper()
	return o.next(ev+" "+s.String(), func(l outLine) bool { return l.event() == ev && (s == 0 || l.stage() == s.String()) })
}

// drain reads the rest, once the trace has returned and the pipe is closed.
func (o *outReader) drain() []outLine {
	o.w.Close()
	for l := range o.ch {
		o.mu.Lock()
		o.seen = append(o.seen, l)
		o.mu.Unlock()
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]outLine(nil), o.seen...)
}

func (o *outReader) dump() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	var b strings.Builder
	for _, l := range o.seen {
		b.WriteString(l.text + "\n")
	}
	return b.String()
}

// --- the cluster side: what the scheduler, the scaler and the kubelet would do ---

const jobName = "runner-abc123-project-5-concurrent-0"

// jobPodObject is a build pod as gitlab-runner v19.2.1 labels it
// (executors/kubernetes/kubernetes.go buildLabels), with its build and
// helper containers.
func jobPodObject(ns, suffix string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: jobName + "-" + suffix, Labels: map[string]string{
			LabelLegacyPod: jobName, LabelJobPod: jobName, LabelProjectID: "5", "project.runner.gitlab.com/name": "kcp-ci-probe",
			LabelManagerName: "kcp-tenant-kubernetes", "manager.runner.gitlab.com/id-short": "abc123",
		}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{
			{Name: "build", Image: "busybox:1.36"},
			{Name: "helper", Image: "registry.gitlab.com/gitlab-org/gitlab-runner/gitlab-runner-helper:x86_64-v19.2.1"},
		}},
	}
}

type driver struct {
	t    *testing.T
	w    *traceWorld
	ns   string
	pod  *corev1.Pod
	node string
	out  *outReader
}

func (d *driver) ctx() context.Context { return d.t.Context() }

func (d *driver) check(err error) {
	d.t.Helper()
	if err != nil {
		d.t.Fatal(err)
	}
}

func (d *driver) event(typ, reason, msg, component, fieldPath string) {
	d.t.Helper()
	now := metav1.NewTime(time.Now())
	ev := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Namespace: d.ns, Name: fmt.Sprintf("%s.%x", d.pod.Name, time.Now().UnixNano())},
		InvolvedObject: corev1.ObjectReference{APIVersion: "v1", Kind: "Pod", Namespace: d.ns, Name: d.pod.Name, UID: d.pod.UID,
			FieldPath: fieldPath},
		Type: typ, Reason: reason, Message: msg, Source: corev1.EventSource{Component: component},
		FirstTimestamp: now, LastTimestamp: now, Count: 1,
	}
	_, err := d.w.admin.CoreV1().Events(d.ns).Create(d.ctx(), ev, metav1.CreateOptions{})
	d.check(err)
}

func (d *driver) setStatus(phase corev1.PodPhase, state func(name string) corev1.ContainerState, ready bool) {
	d.t.Helper()
	pods := d.w.admin.CoreV1().Pods(d.ns)
	p, err := pods.Get(d.ctx(), d.pod.Name, metav1.GetOptions{})
	d.check(err)
	p.Status.Phase = phase
	p.Status.ContainerStatuses = nil
	for _, c := range p.Spec.Containers {
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{Name: c.Name, Image: c.Image, State: state(c.Name), Ready: ready})
	}
	_, err = pods.UpdateStatus(d.ctx(), p, metav1.UpdateOptions{})
	d.check(err)
}

func waiting(reason, msg string) func(string) corev1.ContainerState {
	return func(string) corev1.ContainerState {
		return corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: msg}}
	}
}

func nodeStatus(ready bool) corev1.NodeStatus {
	st := testenv.ReadyNodeStatus("2", "4Gi", 0)
	if !ready {
		st.Conditions[0].Status, st.Conditions[0].Reason, st.Conditions[0].Message = corev1.ConditionFalse, "KubeletNotReady", "container runtime network not ready"
	}
	return st
}

// steps are what makes each stage happen, in order: steps[s-1] makes s.
func (d *driver) steps() []func() {
	nodes := d.w.admin.CoreV1().Nodes()
	return []func(){
		StageCreated - 1: func() {
			p, err := d.w.admin.CoreV1().Pods(d.ns).Create(d.ctx(), jobPodObject(d.ns, "x1y2z3"), metav1.CreateOptions{})
			d.check(err)
			d.pod = p
		},
		StageScaleDecision - 1: func() {
			d.event("Normal", "TriggeredScaleUp", "pod triggered scale-up: [{rented 0->1 (max: 2)}]", "cluster-autoscaler", "")
		},
		StageNodeJoined - 1: func() {
			n, err := nodes.Create(d.ctx(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: d.node,
				Labels: map[string]string{"kubernetes.io/hostname": d.node}}}, metav1.CreateOptions{})
			d.check(err)
			n.Status = nodeStatus(false)
			_, err = nodes.UpdateStatus(d.ctx(), n, metav1.UpdateOptions{})
			d.check(err)
		},
		StageNodeReady - 1: func() {
			n, err := nodes.Get(d.ctx(), d.node, metav1.GetOptions{})
			d.check(err)
			n.Status = nodeStatus(true)
			_, err = nodes.UpdateStatus(d.ctx(), n, metav1.UpdateOptions{})
			d.check(err)
		},
		StageScheduled - 1: func() {
			// The scheduler's way: POST pods/binding.
			d.check(d.w.admin.CoreV1().Pods(d.ns).Bind(d.ctx(), &corev1.Binding{
				ObjectMeta: metav1.ObjectMeta{Namespace: d.ns, Name: d.pod.Name},
				Target:     corev1.ObjectReference{Kind: "Node", Name: d.node},
			}, metav1.CreateOptions{}))
		},
		StageImagesPulled - 1: func() {
			d.setStatus(corev1.PodPending, waiting("ContainerCreating", ""), false)
			d.event("Normal", "Pulled", `Successfully pulled image "busybox:1.36" in 1.2s`, "kubelet", "spec.containers{build}")
			d.event("Normal", "Pulled", `Container image "registry.gitlab.com/gitlab-org/gitlab-runner/gitlab-runner-helper:x86_64-v19.2.1" already present on machine`, "kubelet", "spec.containers{helper}")
		},
		StageRunning - 1: func() {
			d.setStatus(corev1.PodRunning, func(string) corev1.ContainerState {
				return corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}
			}, true)
		},
		StageFinished - 1: func() {
			d.setStatus(corev1.PodSucceeded, func(string) corev1.ContainerState {
				return corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed",
					StartedAt: metav1.NewTime(time.Now().Add(-time.Second)), FinishedAt: metav1.Now()}}
			}, false)
		},
		StagePodDeleted - 1: func() {
			// A pod in a terminal phase is deleted at once (no kubelet to
			// confirm: pkg/registry/core/pod/strategy.go CheckGracefulDelete).
			d.check(d.w.admin.CoreV1().Pods(d.ns).Delete(d.ctx(), d.pod.Name, metav1.DeleteOptions{}))
		},
		StageScaledDown - 1: func() {
			d.check(nodes.Delete(d.ctx(), d.node, metav1.DeleteOptions{}))
		},
	}
}

// newDriver is one subtest's world: its own namespace and node name, no
// node left when it ends.
func newDriver(t *testing.T, w *traceWorld, name string) *driver {
	d := &driver{t: t, w: w, ns: "trace-" + name, node: "rented-" + name, out: pipeOutput(t)}
	w.env.WithT(t).EnsureNamespace(d.ns)
	waitNoNodes(t, w)
	t.Cleanup(func() {
		_ = w.admin.CoreV1().Nodes().Delete(context.Background(), d.node, metav1.DeleteOptions{})
	})
	return d
}

func waitNoNodes(t *testing.T, w *traceWorld) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		l, err := w.admin.CoreV1().Nodes().List(t.Context(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Items) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d nodes left by an earlier test", len(l.Items))
		}
		for _, n := range l.Items {
			_ = w.admin.CoreV1().Nodes().Delete(t.Context(), n.Name, metav1.DeleteOptions{})
		}
		time.Sleep(50 * time.Millisecond)
	}
}

type runResult struct {
	v   Verdict
	err error
}

// start runs the trace into the pipe and waits for its first line.
func (d *driver) start(ctx context.Context, o Options) <-chan runResult {
	o.Client, o.Namespace = d.w.client, d.ns
	done := make(chan runResult, 1)
	go func() {
		v, err := Run(ctx, o, Output{W: d.out.w})
		done <- runResult{v, err}
	}()
	d.out.event("start", 0)
	return done
}

func (d *driver) wait(done <-chan runResult) runResult {
	d.t.Helper()
	select {
	case r := <-done:
		return r
	case <-time.After(15 * time.Second):
		d.t.Fatalf("the trace did not end:\n%s", d.out.dump())
	}
	return runResult{}
}

// assertTimeline checks the stage lines: the stages given, in order, each
// once, times that never go back, and the verdict line naming the end.
func assertTimeline(t *testing.T, lines []outLine, want []Stage) {
	t.Helper()
	var got []string
	var prev time.Time
	for _, l := range lines {
		if l.event() != "stage" {
			continue
		}
		got = append(got, l.stage())
		at, err := time.Parse(time.RFC3339Nano, l.m["at"].(string))
		if err != nil {
			t.Fatalf("at %v: %v", l.m["at"], err)
		}
		if at.Before(prev) {
			t.Errorf("%s at %s, before the stage before it (%s)", l.stage(), at, prev)
		}
		prev = at
		if ms, ok := l.m["sincePrevMs"].(float64); !ok || ms < 0 {
			t.Errorf("%s: sincePrevMs %v", l.stage(), l.m["sincePrevMs"])
		}
		if l.m["skipped"] == true || l.m["inferred"] == true {
			t.Errorf("%s was not seen: %s", l.stage(), l.text)
		}
	}
	var names []string
	for _, s := range want {
		names = append(names, s.String())
	}
	if !slices.Equal(got, names) {
		t.Errorf("timeline %v, want %v", got, names)
	}
}

func TestTraceIntegration(t *testing.T) {
	w := startWorld(t)

	t.Run("timeline", func(t *testing.T) {
		d := newDriver(t, w, "timeline")
		// Pods that are not the next job pod: one there before the trace,
		// and a pause pod of [runners.kubernetes.autoscaler] after.
		_, err := w.admin.CoreV1().Pods(d.ns).Create(t.Context(), jobPodObject(d.ns, "before"), metav1.CreateOptions{})
		d.check(err)
		done := d.start(t.Context(), Options{Next: true, RunnerName: "kcp-tenant-kubernetes", PollTimeout: time.Hour})
		_, err = w.admin.CoreV1().Pods(d.ns).Create(t.Context(), &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: d.ns, Name: "gitlab-runner-pause-abc123-0", Labels: map[string]string{
				LabelPausePod: "true", "manager.runner.gitlab.com/id-short": "abc123"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "pause", Image: "registry.k8s.io/pause:3.10"}}},
		}, metav1.CreateOptions{})
		d.check(err)
		began := time.Now()
		for i, step := range d.steps() {
			step()
			if i == 0 {
				// What the scheduler says of a pod at zero nodes is not a
				// scale decision.
				d.event("Warning", "FailedScheduling", "0/0 nodes are available: no nodes available to schedule pods.", "default-scheduler", "")
			}
			d.out.stage(Stage(i + 1))
		}
		r := d.wait(done)
		lines := d.out.drain()
		t.Logf("10 stages in %s:\n%s", time.Since(began).Round(time.Millisecond), d.out.dump())
		if r.err != nil || !r.v.Completed || r.v.ExitCode() != 0 || r.v.Pod != d.pod.Name || r.v.Phase != corev1.PodSucceeded {
			t.Fatalf("verdict %+v, %v; want completed for %s", r.v, r.err, d.pod.Name)
		}
		assertTimeline(t, lines, Stages())
		last := lines[len(lines)-1]
		if last.event() != "verdict" || last.m["verdict"] != "completed" || last.m["exitCode"] != 0.0 || len(last.m["timeline"].([]any)) != NumStages {
			t.Errorf("verdict line %s", last.text)
		}
		for _, l := range lines {
			if l.event() == "stage" && l.stage() == "created" && !strings.Contains(l.m["detail"].(string), d.pod.Name+" Pending, cluster at 0 nodes") {
				t.Errorf("created: %s", l.text)
			}
			if l.event() == "stage" && l.stage() == "scale-decision" && !strings.Contains(l.m["detail"].(string), "TriggeredScaleUp") {
				t.Errorf("the scheduler's FailedScheduling was taken for the decision: %s", l.text)
			}
		}
		assertNoGoroutines(t)
	})

	t.Run("runner-cleanup", func(t *testing.T) {
		// The runner deletes a Running pod when the job ends; the kubelet
		// (here, the test) removes it after the grace period.
		d := newDriver(t, w, "cleanup")
		done := d.start(t.Context(), Options{Next: true})
		steps := d.steps()
		for s := StageCreated; s <= StageRunning; s++ {
			steps[s-1]()
			d.out.stage(s)
		}
		d.check(w.admin.CoreV1().Pods(d.ns).Delete(t.Context(), d.pod.Name, metav1.DeleteOptions{}))
		fin := d.out.stage(StageFinished)
		if !strings.Contains(fin.m["detail"].(string), "the runner deleted the pod after the job") {
			t.Errorf("finished: %s", fin.text)
		}
		zero := int64(0)
		d.check(w.admin.CoreV1().Pods(d.ns).Delete(t.Context(), d.pod.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero}))
		d.out.stage(StagePodDeleted)
		steps[StageScaledDown-1]()
		r := d.wait(done)
		assertTimeline(t, d.out.drain(), Stages())
		if !r.v.Completed {
			t.Fatalf("verdict %+v", r.v)
		}
	})

	// Stuck in each stage: the trace is driven through the stages before
	// it, the stage's budget runs out, OnStuck is called for it and what it
	// returns is printed, and the end (Ctrl-C or the timeout, alternately)
	// names it.
	for _, stuck := range Stages() {
		t.Run(fmt.Sprintf("stuck/%d-%s", stuck, stuck), func(t *testing.T) {
			d := newDriver(t, w, fmt.Sprintf("stuck-%d", stuck))
			byTimeout := stuck%2 == 0
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			var mu sync.Mutex
			var asked []Stage
			o := Options{Next: true, Budgets: map[Stage]time.Duration{stuck: 200 * time.Millisecond},
				OnStuck: func(_ context.Context, s Stage) []string {
					mu.Lock()
					asked = append(asked, s)
					mu.Unlock()
					return []string{"explained " + s.String(), "checks " + strings.Join(StageChecks[s], ",")}
				}}
			if byTimeout {
				o.Timeout = 2500 * time.Millisecond
			}
			done := d.start(ctx, o)
			if stuck == StageCreated {
				// Not the next job pod: a plain pod.
				_, err := w.admin.CoreV1().Pods(d.ns).Create(t.Context(), &corev1.Pod{
					ObjectMeta: metav1.ObjectMeta{Namespace: d.ns, Name: "web-0"},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx"}}},
				}, metav1.CreateOptions{})
				d.check(err)
			}
			steps := d.steps()
			for s := StageCreated; s < stuck; s++ {
				steps[s-1]()
				d.out.stage(s)
			}
			switch stuck { // what holds the stage, as a real cluster says it
			case StageScaleDecision:
				d.event("Warning", "FailedScheduling", "0/0 nodes are available", "default-scheduler", "")
			case StageScheduled:
				d.event("Warning", "FailedScheduling", "0/1 nodes are available: 1 Insufficient cpu.", "default-scheduler", "")
			case StageImagesPulled:
				d.setStatus(corev1.PodPending, waiting("ImagePullBackOff", `Back-off pulling image "registry.example.invalid/nope:1"`), false)
			}
			over := d.out.event("over-budget", stuck)
			if checks := over.m["checks"].([]any); len(checks) != len(StageChecks[stuck]) {
				t.Errorf("over-budget checks %v, want %v", checks, StageChecks[stuck])
			}
			ex := d.out.event("explain", stuck)
			if lines := ex.m["lines"].([]any); len(lines) != 2 || lines[0] != "explained "+stuck.String() {
				t.Errorf("explain line %s", ex.text)
			}
			if !byTimeout {
				cancel() // Ctrl-C
			}
			r := d.wait(done)
			lines := d.out.drain()
			wantReason := "interrupted"
			if byTimeout {
				wantReason = "timeout (2.5s)"
			}
			if r.err != nil || r.v.Completed || r.v.Stuck != stuck || r.v.Reason != wantReason || r.v.ExitCode() != 2 {
				t.Fatalf("verdict %+v, %v; want stuck in %s, %s\n%s", r.v, r.err, stuck, wantReason, d.out.dump())
			}
			assertTimeline(t, lines, Stages()[:stuck-1])
			last := lines[len(lines)-1]
			if last.event() != "verdict" || last.m["verdict"] != "stuck" || last.stage() != stuck.String() || last.m["n"] != float64(stuck) ||
				last.m["exitCode"] != 2.0 || len(last.m["timeline"].([]any)) != int(stuck)-1 {
				t.Errorf("verdict line %s", last.text)
			}
			mu.Lock()
			if !slices.Contains(asked, stuck) {
				t.Errorf("OnStuck asked for %v, not %s", asked, stuck)
			}
			mu.Unlock()
			switch stuck {
			case StageScheduled:
				if !strings.Contains(r.v.Detail, "Insufficient cpu") {
					t.Errorf("detail %q", r.v.Detail)
				}
			case StageImagesPulled:
				if !strings.Contains(r.v.Detail, "ImagePullBackOff") {
					t.Errorf("detail %q", r.v.Detail)
				}
			case StageScaledDown:
				if !strings.Contains(r.v.Detail, "1 nodes remain ("+d.node+"), 0 before the pod") {
					t.Errorf("detail %q", r.v.Detail)
				}
			}
			assertNoGoroutines(t)
		})
	}

	t.Run("relist-after-410", func(t *testing.T) {
		// The first pod watch starts from a resourceVersion etcd has
		// compacted away: the apiserver answers 410 Expired ("The
		// resourceVersion for the provided watch is too old"), and the trace
		// lists again and goes on. Without the watch cache the watch is
		// served from etcd, which compacts every second here.
		w := startWorld(t, testenv.WithAPIServerArgs("--watch-cache=false", "--etcd-compaction-interval=1s"))
		d := newDriver(t, w, "gone")
		time.Sleep(2500 * time.Millisecond) // two compactions: revision 1 is gone
		var first atomic.Bool
		testRewriteRV = func(k kind, rv string) string {
			if k == kindPods && first.CompareAndSwap(false, true) {
				return "1"
			}
			return rv
		}
		defer func() { testRewriteRV = nil }()
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		done := d.start(ctx, Options{Pod: jobName + "-x1y2z3"})
		steps := d.steps()
		for s := StageCreated; s <= StageScheduled; s++ {
			steps[s-1]()
			d.out.stage(s)
		}
		cancel()
		r := d.wait(done)
		assertTimeline(t, d.out.drain(), Stages()[:StageScheduled])
		if r.v.Stuck != StageImagesPulled {
			t.Errorf("verdict %+v", r.v)
		}
		lists := 0
		for _, e := range auditOf(t, w) {
			if e.Verb == "list" && e.ObjectRef.Resource == "pods" && e.ObjectRef.Namespace == d.ns {
				lists++
			}
		}
		if lists < 2 {
			t.Errorf("%d pod lists in %s: want the first and the relist after 410", lists, d.ns)
		}
	})

	t.Run("resolve-and-explain", func(t *testing.T) {
		// The CLI's wiring, minus cobra: the guide's runner on a fake host,
		// its target resolved as doctor run resolves it, and the checks of
		// the stuck stage run for it through Explainer.
		waitNoNodes(t, w)
		w.env.WithT(t).EnsureNamespace("gitlab-runner")
		cert, key := w.env.OwnerCert("did:plc:tracetr4cetr4cetr4cetr4ce", time.Now().Add(12*time.Hour))
		root := testroot.New(t)
		root.GuideRunner(testroot.GuideConfig, testpki.Kubeconfig("tenant-ci", w.env.URL, w.env.CAPEM, cert, key))
		cenv := &hostio.Env{Root: root.Dir}
		tgt, err := Resolve(t.Context(), cenv, "")
		if err != nil {
			t.Fatal(err)
		}
		if tgt.Namespace != "gitlab-runner" || tgt.PollTimeout != time.Hour || tgt.RunnerName != "kcp-tenant-kubernetes" || tgt.Selector() != "1" {
			t.Fatalf("target %+v", tgt)
		}
		if _, err := Resolve(t.Context(), cenv, "nope"); err == nil {
			t.Error("--runner nope resolved")
		}
		// A node that exists, too small for the job.
		w.env.WithT(t).CreateNode("small-1", testenv.ReadyNodeStatus("1", "2Gi", 0))
		defer w.admin.CoreV1().Nodes().Delete(context.Background(), "small-1", metav1.DeleteOptions{})
		out := pipeOutput(t)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		done := make(chan runResult, 1)
		go func() {
			v, err := Run(ctx, Options{Client: tgt.Client, Namespace: tgt.Namespace, Next: true, RunnerName: tgt.RunnerName,
				PollTimeout: tgt.PollTimeout, Budgets: map[Stage]time.Duration{StageScaleDecision: 300 * time.Millisecond},
				OnStuck: Explainer(cenv, all.Checks(), tgt.Selector())}, Output{W: out.w})
			done <- runResult{v, err}
		}()
		out.event("start", 0)
		p := jobPodObject("gitlab-runner", "big")
		p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("64")}
		created, err := w.admin.CoreV1().Pods("gitlab-runner").Create(t.Context(), p, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		out.stage(StageCreated)
		d := &driver{t: t, w: w, ns: "gitlab-runner", pod: created}
		d.event("Warning", "FailedScheduling", "0/1 nodes are available: 1 Insufficient cpu.", "default-scheduler", "")
		out.event("over-budget", StageScaleDecision)
		ex := out.event("explain", StageScaleDecision)
		text := fmt.Sprint(ex.m["lines"])
		if !strings.Contains(text, "pending-unschedulable") || !strings.Contains(text, "cpu 64 > 1") {
			t.Errorf("explain: %s", ex.text)
		}
		cancel()
		select {
		case r := <-done:
			if r.v.Stuck != StageScaleDecision {
				t.Errorf("verdict %+v", r.v)
			}
		case <-time.After(15 * time.Second):
			t.Fatal("no verdict")
		}
		t.Logf("explain lines:\n%s", strings.Join(anyStrings(ex.m["lines"]), "\n"))
		assertNoGoroutines(t)
	})

	t.Run("read-only", func(t *testing.T) {
		// Everything the trace identity sent, in every subtest above: lists
		// and watches, nothing else.
		verbs := map[string]int{}
		watched := map[string]bool{}
		for _, e := range auditOf(t, w) {
			verbs[e.Verb]++
			if e.Verb == "watch" {
				watched[e.ObjectRef.Resource] = true
			}
			if e.Verb != "list" && e.Verb != "watch" {
				t.Errorf("the trace sent %s %s", e.Verb, e.RequestURI)
			}
		}
		if !watched["pods"] || !watched["nodes"] || !watched["events"] {
			t.Errorf("watched %v, want pods, nodes and events", watched)
		}
		t.Logf("requests of the trace identity by verb: %v", verbs)
		if os.Getenv("TRACE_DEBUG") != "" {
			for _, e := range auditOf(t, w) {
				t.Logf("%s %s %d", e.Verb, e.RequestURI, e.ResponseStatus.Code)
			}
		}
	})
}

func auditOf(t *testing.T, w *traceWorld) []testenv.AuditEvent {
	t.Helper()
	time.Sleep(200 * time.Millisecond) // the audit backend writes just after the response
	evs, err := w.env.AuditEvents()
	if err != nil {
		t.Fatal(err)
	}
	var out []testenv.AuditEvent
	for _, e := range evs {
		if e.User.Username == traceUser {
			out = append(out, e)
		}
	}
	return out
}

func anyStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, fmt.Sprint(x))
	}
	return out
}
