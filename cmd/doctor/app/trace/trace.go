package trace

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/socialwebcomputer/doctor/checks/client/kube"
)

// Options say what to trace and how long to wait.
type Options struct {
	// Client reads the cluster. Use one without an overall request
	// timeout (WatchClient), or every watch ends at it and is re-made.
	Client kube.Interface
	// Namespace is the runner's namespace.
	Namespace string
	// Pod follows the pod of this name; Next follows the next job pod
	// created after the trace starts. Exactly one is set.
	Pod  string
	Next bool
	// RunnerName is the [[runners]] name: with Next, a job pod labelled
	// for another runner (manager.runner.gitlab.com/name) is not followed.
	RunnerName string
	// PollTimeout is the runner's [runners.kubernetes] poll_timeout
	// (DefaultPollTimeout when zero): stages 2 to 7 share it.
	PollTimeout time.Duration
	// Budgets replace a stage's default budget (DefaultBudget); zero turns
	// a stage's budget off.
	Budgets map[Stage]time.Duration
	// Timeout ends the trace, stuck, after this long; zero waits until the
	// context ends.
	Timeout time.Duration
	// RequestTimeout bounds each list request and the start of each watch
	// (default 8s).
	RequestTimeout time.Duration
	// OnStuck is called, once per stage, when the stage the trace waits
	// for exceeds its budget; what it returns is printed in place. It runs
	// beside the trace, which goes on watching, and its context ends with
	// the trace. StageChecks names the checks that explain each stage.
	OnStuck func(ctx context.Context, s Stage) []string
}

// DefaultRequestTimeout is Options.RequestTimeout's default.
const DefaultRequestTimeout = 8 * time.Second

func (o *Options) validate() error {
	switch {
	case o.Client == nil:
		return errors.New("trace: no client")
	case o.Namespace == "":
		return errors.New("trace: no namespace")
	case o.Pod != "" && o.Next:
		return errors.New("trace: --pod and --next exclude each other")
	case o.Pod == "" && !o.Next:
		return errors.New("trace: name a pod (--pod NAME) or follow the next job pod (--next)")
	case o.Timeout < 0, o.PollTimeout < 0:
		return errors.New("trace: negative timeout")
	}
	for s, d := range o.Budgets {
		if !s.Valid() || d < 0 {
			return fmt.Errorf("trace: budget %s=%s", s, d)
		}
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = DefaultRequestTimeout
	}
	return nil
}

var errTimeout = errors.New("trace timeout")

// Run follows one job pod through the ten stages and prints each as it is
// reached. It only lists and watches (pods and events of the namespace,
// the cluster's nodes), and ends when the cluster is back at the nodes it
// had before the pod (Completed), when the pod is deleted or fails before
// it ran, at Options.Timeout, or when ctx ends (stuck in the stage it
// waited for). The error is for a trace that could not run: options, a
// refused credential, a pod list that failed.
func Run(ctx context.Context, opt Options, out Output) (Verdict, error) {
	if err := opt.validate(); err != nil {
		return Verdict{}, err
	}
	start := time.Now()
	if opt.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, opt.Timeout, errTimeout)
		defer cancel()
	}
	inner, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		stop()
		wg.Wait()
	}()
	r := newRenderer(out)
	m := newMachine(opt, start)
	ended := func(now time.Time) *Verdict {
		reason := "interrupted"
		if errors.Is(context.Cause(ctx), errTimeout) {
			reason = fmt.Sprintf("timeout (%s)", opt.Timeout)
		}
		return m.verdict(now, false, reason)
	}

	// The first lists, together: the cluster as the trace finds it.
	streams := newStreams(opt.Client, opt)
	type listed struct {
		objs []runtime.Object
		err  error
	}
	first := make([]listed, len(streams))
	var lists sync.WaitGroup
	for i, s := range streams {
		lists.Go(func() {
			objs, rv, err := firstList(inner, s, opt)
			s.rv = rv
			first[i] = listed{objs, err}
		})
	}
	lists.Wait()
	if ctx.Err() != nil {
		v := ended(time.Now())
		r.render(Record{Kind: KindVerdict, Verdict: v})
		return *v, nil
	}
	if err := first[kindPods].err; err != nil {
		return Verdict{}, fmt.Errorf("list pods in %s: %w", opt.Namespace, err)
	}
	visible := [3]bool{true, true, true}
	for _, k := range []kind{kindNodes, kindEvents} {
		if err := first[k].err; err != nil {
			if !apierrors.IsForbidden(err) {
				return Verdict{}, fmt.Errorf("list %s: %w", k, err)
			}
			visible[k] = false
		}
	}
	now := time.Now()
	m.initNodes(now, asNodes(first[kindNodes].objs), visible[kindNodes])
	m.initEvents(now, asEvents(first[kindEvents].objs), visible[kindEvents])
	m.initPods(now, asPods(first[kindPods].objs))
	r.render(Record{Kind: KindStart, Step: Step{At: now}, Start: &Start{Namespace: opt.Namespace, Pod: opt.Pod, Next: opt.Next,
		Nodes: len(m.nodes), Poll: m.poll}})
	for _, k := range []kind{kindNodes, kindEvents} {
		if !visible[k] {
			m.note(now, "%s: %v; the stages that need them are inferred", k, first[k].err)
		}
	}
	renderAll(r, m.take())

	items := make(chan item, 64)
	for i, s := range streams {
		if visible[i] {
			wg.Go(func() { s.loop(inner, items) })
		}
	}
	explained := make(chan Record)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	var tick <-chan time.Time
	if out.TTY {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		tick = t.C
	}
	var fatalErr error
	for m.end == nil {
		if dl, _, _, ok := m.deadline(); ok && !m.over[m.cur] {
			timer.Reset(time.Until(dl))
		} else {
			timer.Stop()
		}
		r.waiting(time.Now(), m)
		select {
		case <-ctx.Done():
			m.end = ended(time.Now())
		case it := <-items:
			fatalErr = m.apply(time.Now(), it)
		case <-timer.C:
			if s, ok := m.checkBudget(time.Now()); ok && opt.OnStuck != nil {
				wg.Go(func() { explain(inner, opt.OnStuck, s, explained) })
			}
		case rec := <-explained:
			r.render(rec)
		case <-tick:
		}
		renderAll(r, m.take())
	}
	stop()
	wg.Wait()
	r.render(Record{Kind: KindVerdict, Step: Step{At: m.end.At}, Verdict: m.end})
	return *m.end, fatalErr
}

// firstList is what the trace reads of a stream before it watches: every
// pod and node; of the events, none with Next (they are about pods that
// existed before the trace: only the resourceVersion to watch from is
// read), and with Pod the newest maxBuffered about that name, however many
// a flood left, kept as the pages come.
func firstList(ctx context.Context, s *stream, opt Options) ([]runtime.Object, string, error) {
	if s.kind != kindEvents {
		return s.listAll(ctx)
	}
	if opt.Next {
		rv, err := s.listVersion(ctx)
		return nil, rv, err
	}
	var kept []runtime.Object
	rv, err := s.listPages(ctx, func(items []runtime.Object, restart bool) bool {
		if restart {
			kept = nil
		}
		kept = newestEvents(append(kept, items...), maxBuffered)
		return true
	})
	return kept, rv, err
}

// newestEvents is the n newest of objs (events), oldest first, as the
// machine applies them.
func newestEvents(objs []runtime.Object, n int) []runtime.Object {
	when := func(o runtime.Object) time.Time {
		if ev, ok := o.(*corev1.Event); ok {
			return eventTime(ev)
		}
		return time.Time{}
	}
	sort.SliceStable(objs, func(i, j int) bool { return when(objs[i]).Before(when(objs[j])) })
	if len(objs) <= n {
		return objs
	}
	return append([]runtime.Object(nil), objs[len(objs)-n:]...)
}

// apply feeds one stream item to the machine; an error ends the trace.
func (m *machine) apply(now time.Time, it item) error {
	switch it.typ {
	case itemNote:
		m.note(now, "%v", it.err)
	case itemDisabled:
		m.note(now, "%v; the stages that need them are inferred", it.err)
		switch it.kind {
		case kindNodes:
			m.nodesVisible = false
		case kindEvents:
			m.eventsVisible = false
		}
		m.evaluate(now, false)
	case itemFatal:
		m.note(now, "%v", it.err)
		m.end = m.verdict(now, false, "the trace could not go on: "+it.err.Error())
		return it.err
	case itemRelist:
		switch it.kind {
		case kindPods:
			m.podsRelisted(now, asPods(it.list))
		case kindNodes:
			m.nodesRelisted(now, asNodes(it.list))
		case kindEvents:
			for _, ev := range asEvents(it.list) {
				m.eventChanged(now, &ev)
			}
		}
	default:
		deleted := it.typ == watch.Deleted
		switch o := it.obj.(type) {
		case *corev1.Pod:
			m.podChanged(now, o, deleted)
		case *corev1.Node:
			m.nodeChanged(now, o, deleted)
		case *corev1.Event:
			if !deleted {
				m.eventChanged(now, o)
			}
		}
	}
	return nil
}

// explain runs OnStuck for s and hands back its lines, unless the trace
// has ended.
func explain(ctx context.Context, onStuck func(context.Context, Stage) []string, s Stage, out chan<- Record) {
	var lines []string
	func() {
		defer func() {
			if p := recover(); p != nil {
				lines = []string{fmt.Sprintf("the checks for %s failed: %v", s, p)}
			}
		}()
		lines = onStuck(ctx, s)
	}()
	select {
	case out <- Record{Kind: KindExplain, Step: Step{Stage: s, At: time.Now()}, Checks: StageChecks[s], Explain: lines}:
	case <-ctx.Done():
	}
}

func asPods(objs []runtime.Object) []corev1.Pod {
	out := make([]corev1.Pod, 0, len(objs))
	for _, o := range objs {
		if p, ok := o.(*corev1.Pod); ok {
			out = append(out, *p)
		}
	}
	return out
}

func asNodes(objs []runtime.Object) []corev1.Node {
	out := make([]corev1.Node, 0, len(objs))
	for _, o := range objs {
		if n, ok := o.(*corev1.Node); ok {
			out = append(out, *n)
		}
	}
	return out
}

func asEvents(objs []runtime.Object) []corev1.Event {
	out := make([]corev1.Event, 0, len(objs))
	for _, o := range objs {
		if e, ok := o.(*corev1.Event); ok {
			out = append(out, *e)
		}
	}
	return out
}
