package trace

import (
	"bytes"
	"context"
	"errors"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/socialwebcomputer/doctor/checks/client/kube/kubefake"
)

// The watch loop against client-go's fake clientset: 410 Gone relists,
// failures back off instead of spinning, and Run leaves no goroutine
// behind.

func podsStream(cs *fake.Clientset) *stream {
	return newStreams(kubefake.Wrap(cs), Options{Namespace: "gitlab-runner", Next: true, RequestTimeout: time.Second})[kindPods]
}

func countVerb(cs *fake.Clientset, verb, resource string) int {
	n := 0
	for _, a := range cs.Actions() {
		if a.GetVerb() == verb && a.GetResource().Resource == resource {
			n++
		}
	}
	return n
}

func runLoop(t *testing.T, s *stream) (chan item, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	items := make(chan item, 16)
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.loop(ctx, items)
	}()
	return items, func() {
		cancel()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatal("the stream did not stop when its context ended")
		}
	}
}

func TestStreamRelistsOnGone(t *testing.T) {
	cs := fake.NewClientset(mkJobPod("runner-abc123-project-5-concurrent-0-a", t0))
	var watches atomic.Int32
	cs.PrependWatchReactor("pods", func(k8stesting.Action) (bool, watch.Interface, error) {
		w := watch.NewFakeWithChanSize(1, false)
		if watches.Add(1) == 1 {
			w.Error(&apierrors.NewResourceExpired("too old resource version: 1 (42)").ErrStatus)
		}
		return true, w, nil
	})
	s := podsStream(cs)
	if _, _, err := s.listAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	items, stop := runLoop(t, s)
	defer stop()
	select {
	case it := <-items:
		if it.typ != itemRelist || len(it.list) != 1 {
			t.Fatalf("after 410: %v %d objects, want a relist of 1 pod", it.typ, len(it.list))
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no relist after 410 Gone")
	}
	if n := countVerb(cs, "list", "pods"); n != 2 {
		t.Errorf("%d pod lists, want 2 (the first, then the relist)", n)
	}
	if !isGone(apierrors.NewGone("gone")) || !isGone(apierrors.NewResourceExpired("x")) || isGone(errors.New("410")) {
		t.Error("isGone")
	}
}

func TestStreamBacksOff(t *testing.T) {
	for _, tc := range []struct {
		name  string
		react func() (watch.Interface, error)
	}{
		{"watch refused", func() (watch.Interface, error) {
			return nil, apierrors.NewInternalError(errors.New("etcd down"))
		}},
		{"watch ends at once", func() (watch.Interface, error) {
			w := watch.NewFake()
			w.Stop()
			return w, nil
		}},
		{"watch errors at once", func() (watch.Interface, error) {
			w := watch.NewFakeWithChanSize(1, false)
			w.Error(&apierrors.NewInternalError(errors.New("decode")).ErrStatus)
			return w, nil
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cs := fake.NewClientset()
			var calls atomic.Int32
			cs.PrependWatchReactor("pods", func(k8stesting.Action) (bool, watch.Interface, error) {
				calls.Add(1)
				w, err := tc.react()
				return true, w, err
			})
			s := podsStream(cs)
			items, stop := runLoop(t, s)
			go func() {
				for range items {
				}
			}()
			time.Sleep(1600 * time.Millisecond)
			stop()
			// 0, ~0.5s, ~1.5s: a busy loop would make thousands.
			if n := calls.Load(); n < 2 || n > 4 {
				t.Errorf("%d watch calls in 1.6s, want 2 to 4 (backoff from %s)", n, backoffMin)
			}
		})
	}
}

func TestStreamFatal(t *testing.T) {
	cs := fake.NewClientset()
	cs.PrependWatchReactor("pods", func(k8stesting.Action) (bool, watch.Interface, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "", errors.New("cannot watch"))
	})
	cs.PrependWatchReactor("events", func(k8stesting.Action) (bool, watch.Interface, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "events"}, "", errors.New("cannot watch"))
	})
	streams := newStreams(kubefake.Wrap(cs), Options{Namespace: "gitlab-runner", Next: true, RequestTimeout: time.Second})
	for _, tc := range []struct {
		s    *stream
		want watch.EventType
	}{{streams[kindPods], itemFatal}, {streams[kindEvents], itemDisabled}} {
		items, stop := runLoop(t, tc.s)
		select {
		case it := <-items:
			if it.typ != tc.want || !strings.Contains(it.err.Error(), "watch "+tc.s.kind.String()) {
				t.Errorf("%s forbidden: %v %v, want %v", tc.s.kind, it.typ, it.err, tc.want)
			}
		case <-time.After(5 * time.Second):
			t.Errorf("%s forbidden: nothing", tc.s.kind)
		}
		stop()
	}
}

// traceGoroutines are the goroutines still in this package's code.
func traceGoroutines() []string {
	buf := make([]byte, 4<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		for _, fn := range []string{"trace.(*stream)", "trace.explain", "trace.Run.func", "trace.Run("} {
			if strings.Contains(g, "internal/"+fn) {
				out = append(out, g)
				break
			}
		}
	}
	return out
}

func assertNoGoroutines(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for {
		left := traceGoroutines()
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines left behind:\n%s", len(left), strings.Join(left, "\n\n"))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestRunOnFakeCluster(t *testing.T) {
	cs := fake.NewClientset()
	block := make(chan struct{})
	var explained atomic.Int32
	var out bytes.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	type result struct {
		v   Verdict
		err error
	}
	done := make(chan result)
	go func() {
		v, err := Run(ctx, Options{Client: kubefake.Wrap(cs), Namespace: "gitlab-runner", Next: true,
			Budgets: map[Stage]time.Duration{StageCreated: 50 * time.Millisecond},
			OnStuck: func(ctx context.Context, s Stage) []string {
				explained.Add(1)
				select { // a slow check, cut off when the trace ends
				case <-block:
				case <-ctx.Done():
				}
				return []string{"never printed"}
			}}, Output{W: &out})
		done <- result{v, err}
	}()
	deadline := time.Now().Add(5 * time.Second)
	for explained.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	r := <-done
	if r.err != nil || r.v.Completed || r.v.Stuck != StageCreated || r.v.Reason != "interrupted" || r.v.ExitCode() != 2 {
		t.Fatalf("verdict %+v, %v; want stuck in created, interrupted", r.v, r.err)
	}
	if explained.Load() != 1 {
		t.Errorf("OnStuck called %d times", explained.Load())
	}
	if !strings.Contains(out.String(), `"event":"over-budget","stage":"created"`) || strings.Contains(out.String(), "never printed") {
		t.Errorf("output:\n%s", out.String())
	}
	assertNoGoroutines(t)

	// The timeout ends a trace the same way, and says so.
	v, err := Run(context.Background(), Options{Client: kubefake.Wrap(cs), Namespace: "gitlab-runner", Pod: "runner-x-project-1-concurrent-0-y",
		Timeout: 100 * time.Millisecond}, Output{W: &out})
	if err != nil || v.Stuck != StageCreated || v.Reason != "timeout (100ms)" || !strings.Contains(v.Detail, "no pod runner-x") {
		t.Fatalf("verdict %+v, %v", v, err)
	}
	assertNoGoroutines(t)
}

func TestRunOptions(t *testing.T) {
	cs := fake.NewClientset()
	for _, o := range []Options{
		{Namespace: "ns", Next: true},
		{Client: kubefake.Wrap(cs), Next: true},
		{Client: kubefake.Wrap(cs), Namespace: "ns"},
		{Client: kubefake.Wrap(cs), Namespace: "ns", Next: true, Pod: "p"},
		{Client: kubefake.Wrap(cs), Namespace: "ns", Next: true, Budgets: map[Stage]time.Duration{StageNodeReady: -time.Second}},
	} {
		if _, err := Run(context.Background(), o, Output{W: &bytes.Buffer{}}); err == nil {
			t.Errorf("Run(%+v) accepted", o)
		}
	}
	// A refused pod list is an error: the trace could not run.
	cs.PrependReactor("list", "pods", func(k8stesting.Action) (bool, k8sruntime.Object, error) {
		return true, nil, apierrors.NewUnauthorized("certificate expired")
	})
	if _, err := Run(context.Background(), Options{Client: kubefake.Wrap(cs), Namespace: "ns", Next: true}, Output{W: &bytes.Buffer{}}); err == nil ||
		!strings.Contains(err.Error(), "list pods in ns") {
		t.Errorf("refused list: %v", err)
	}
	assertNoGoroutines(t)
}

// Watch events reach the machine: a pod created on the fake cluster after
// the trace started is followed.
func TestRunFollowsTheNextPod(t *testing.T) {
	cs := fake.NewClientset()
	var out syncBuffer
	done := make(chan Verdict, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		v, _ := Run(ctx, Options{Client: kubefake.Wrap(cs), Namespace: "gitlab-runner", Next: true}, Output{W: &out})
		done <- v
	}()
	waitFor(t, &out, `"event":"start"`)
	// The fake's watch starts a moment after its list; give it that moment.
	time.Sleep(100 * time.Millisecond)
	p := mkJobPod("runner-abc123-project-5-concurrent-0-z", time.Now())
	if _, err := cs.CoreV1().Pods("gitlab-runner").Create(ctx, p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, &out, `"stage":"created"`)
	p = withStatus(bound(p, "n1"), corev1.PodSucceeded, allC(corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{StartedAt: metav1.Now()}}), false)
	if _, err := cs.CoreV1().Pods("gitlab-runner").UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cs.CoreV1().Pods("gitlab-runner").Delete(ctx, p.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case v := <-done:
		if !v.Completed {
			t.Fatalf("verdict %+v\n%s", v, out.String())
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("no verdict:\n%s", out.String())
	}
	assertNoGoroutines(t)
}
