package trace

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/socialwebcomputer/doctor/checks/client/kube"
	"github.com/socialwebcomputer/doctor/checks/client/kube/keep"
	"github.com/socialwebcomputer/doctor/checks/facts/kubefacts"
)

// kind is one of the three streams a trace reads.
type kind int

const (
	kindPods kind = iota
	kindNodes
	kindEvents
)

func (k kind) String() string { return [...]string{"pods", "nodes", "events"}[k] }

// What a stream tells the trace besides watch events.
const (
	itemRelist   watch.EventType = "RELIST"   // a full list after 410 Gone
	itemNote     watch.EventType = "NOTE"     // a transient error; the stream retries
	itemDisabled watch.EventType = "DISABLED" // the credential may not read this stream
	itemFatal    watch.EventType = "FATAL"    // the trace cannot go on
)

type item struct {
	kind kind
	typ  watch.EventType
	obj  runtime.Object
	list []runtime.Object
	err  error
}

// pageSize is the limit of a list request of pods or nodes; eventPageSize
// of events, which a busy namespace has by the thousand: a relist of them
// is handed on page by page (pages), so what is held at once is the
// channel's 64 pages of 100, whatever the namespace holds.
const (
	pageSize      = 500
	eventPageSize = 100
)

// Watch timing: each watch asks the server to end it after a random 5–10
// minutes (client-go's reflector does the same), and a watch silent for
// that long plus watchSlack is abandoned, so a black-holed connection is
// re-made instead of hanging.
var (
	watchTimeout = func() time.Duration { return 5*time.Minute + rand.N(5*time.Minute) }
	watchSlack   = time.Minute
	// backoffMin and backoffMax bound the wait between failed attempts.
	backoffMin = 500 * time.Millisecond
	backoffMax = 30 * time.Second
	// testRewriteRV lets a test start a watch from a resourceVersion of its
	// choosing (an expired one, for 410 Gone).
	testRewriteRV func(k kind, rv string) string
)

// stream lists then watches one resource, for as long as its context
// lives: it re-watches from the last resourceVersion when a watch ends,
// relists on 410 Gone, and waits with a growing backoff after failures.
type stream struct {
	kind     kind
	selector string
	// pages: a relist is sent a page at a time (events: each is judged on
	// its own, and a whole namespace's would be held at once otherwise).
	pages      bool
	limit      int64
	list       func(context.Context, metav1.ListOptions) (runtime.Object, error)
	watch      func(context.Context, metav1.ListOptions) (watch.Interface, error)
	reqTimeout time.Duration
	rv         string
	// relist: the next round lists first (410 Gone, or a list that failed).
	relist bool
}

func newStreams(cs kube.Interface, o Options) []*stream {
	podSel, evSel := fields.Everything(), fields.OneTermEqualSelector("involvedObject.kind", "Pod")
	if o.Pod != "" {
		podSel = fields.OneTermEqualSelector("metadata.name", o.Pod)
		evSel = fields.AndSelectors(evSel, fields.OneTermEqualSelector("involvedObject.name", o.Pod))
	}
	pods, nodes, events := cs.CoreV1().Pods(o.Namespace), cs.CoreV1().Nodes(), cs.CoreV1().Events(o.Namespace)
	rt := o.RequestTimeout
	return []*stream{
		{kind: kindPods, selector: podSel.String(), reqTimeout: rt, limit: pageSize,
			list:  func(ctx context.Context, lo metav1.ListOptions) (runtime.Object, error) { return pods.List(ctx, lo) },
			watch: pods.Watch},
		{kind: kindNodes, reqTimeout: rt, limit: pageSize,
			list:  func(ctx context.Context, lo metav1.ListOptions) (runtime.Object, error) { return nodes.List(ctx, lo) },
			watch: nodes.Watch},
		{kind: kindEvents, selector: evSel.String(), reqTimeout: rt, pages: true, limit: eventPageSize,
			list:  func(ctx context.Context, lo metav1.ListOptions) (runtime.Object, error) { return events.List(ctx, lo) },
			watch: events.Watch},
	}
}

// listAll lists every page; the resourceVersion is the list's.
func (s *stream) listAll(ctx context.Context) ([]runtime.Object, string, error) {
	var out []runtime.Object
	rv, err := s.listPages(ctx, func(items []runtime.Object, restart bool) bool {
		if restart {
			out = nil
		}
		out = append(out, items...)
		return true
	})
	if err != nil {
		return nil, "", err
	}
	return out, rv, nil
}

// listPages lists page by page, handing each to page (restart: the list
// started over, its continue token expired, so what came before is not
// the list's); page returns false to stop, and then only the first page's
// resourceVersion counts. The resourceVersion is the list's.
func (s *stream) listPages(ctx context.Context, page func(items []runtime.Object, restart bool) bool) (string, error) {
	opts := metav1.ListOptions{FieldSelector: s.selector, Limit: s.limit}
	rv, restart := "", false
	for {
		lctx, cancel := context.WithTimeout(ctx, s.reqTimeout)
		obj, err := s.list(lctx, opts)
		cancel()
		if err != nil {
			if opts.Continue != "" && isGone(err) {
				// The continue token expired between pages: start over.
				rv, opts.Continue, restart = "", "", true
				continue
			}
			return "", err
		}
		items, err := meta.ExtractList(obj)
		if err != nil {
			return "", err
		}
		lm, err := meta.ListAccessor(obj)
		if err != nil {
			return "", err
		}
		if rv == "" {
			rv = lm.GetResourceVersion()
		}
		if !page(items, restart) || lm.GetContinue() == "" {
			return rv, nil
		}
		opts.Continue, restart = lm.GetContinue(), false
	}
}

// listVersion is the resourceVersion a watch starts from, read with a list
// of one object: what the trace needs of a stream whose past it ignores.
func (s *stream) listVersion(ctx context.Context) (string, error) {
	one := *s
	one.limit = 1
	return one.listPages(ctx, func([]runtime.Object, bool) bool { return false })
}

// relist lists again after 410 Gone and hands the list on: whole, or a
// page at a time (s.pages).
func (s *stream) listAgain(ctx context.Context, out chan<- item) (string, error) {
	if !s.pages {
		objs, rv, err := s.listAll(ctx)
		if err == nil && !send(ctx, out, item{kind: s.kind, typ: itemRelist, list: objs}) {
			err = ctx.Err()
		}
		return rv, err
	}
	var sendErr error
	rv, err := s.listPages(ctx, func(items []runtime.Object, _ bool) bool {
		if !send(ctx, out, item{kind: s.kind, typ: itemRelist, list: items}) {
			sendErr = ctx.Err()
			return false
		}
		return true
	})
	if err == nil {
		err = sendErr
	}
	return rv, err
}

// loop watches until ctx ends, sending what it sees to out.
func (s *stream) loop(ctx context.Context, out chan<- item) {
	b := backoff{}
	for ctx.Err() == nil {
		if s.relist {
			rv, err := s.listAgain(ctx, out)
			if ctx.Err() != nil {
				return
			}
			if err != nil {
				if !s.failed(ctx, out, "list", err, &b) {
					return
				}
				continue
			}
			s.rv, s.relist = rv, false
		}
		rv := s.rv
		if testRewriteRV != nil {
			rv = testRewriteRV(s.kind, rv)
		}
		idle := watchTimeout()
		secs := int64(idle / time.Second)
		wctx, wcancel := context.WithCancel(ctx)
		// The watch call returns once the server answers; the stream then
		// lives as long as wctx, so only the call itself is timed.
		t := time.AfterFunc(s.reqTimeout, wcancel)
		w, err := s.watch(wctx, metav1.ListOptions{FieldSelector: s.selector, ResourceVersion: rv,
			AllowWatchBookmarks: true, TimeoutSeconds: &secs})
		t.Stop()
		if err != nil {
			wcancel()
			if isGone(err) {
				s.relist = true
			}
			if !s.failed(ctx, out, "watch", err, &b) {
				return
			}
			continue
		}
		began := time.Now()
		n, gone, err := s.consume(wctx, w, out, idle+watchSlack)
		w.Stop()
		wcancel()
		if ctx.Err() != nil {
			return
		}
		if gone {
			s.relist = true
		}
		if err != nil {
			if !s.failed(ctx, out, "watch", err, &b) {
				return
			}
			continue
		}
		// A watch that ends at once with nothing in it, again and again,
		// must not become a busy loop.
		if n == 0 && time.Since(began) < time.Second {
			if !b.wait(ctx) {
				return
			}
			continue
		}
		b.reset()
	}
}

// failed reports an error and decides: false ends the stream (the
// context ended, or the error is one retrying cannot fix).
func (s *stream) failed(ctx context.Context, out chan<- item, what string, err error, b *backoff) bool {
	if ctx.Err() != nil {
		return false
	}
	err = fmt.Errorf("%s %s: %w", what, s.kind, err)
	switch {
	case apierrors.IsForbidden(err) && s.kind != kindPods:
		send(ctx, out, item{kind: s.kind, typ: itemDisabled, err: err})
		return false
	case fatal(err):
		send(ctx, out, item{kind: s.kind, typ: itemFatal, err: err})
		return false
	case isGone(err):
		// Relist once at once; the backoff still bounds repeats.
	default:
		if !send(ctx, out, item{kind: s.kind, typ: itemNote, err: fmt.Errorf("%w; retrying in %s", err, round(b.next()))}) {
			return false
		}
	}
	return b.wait(ctx)
}

// consume reads one watch until it ends: n events, gone on 410, err on
// another error event.
func (s *stream) consume(ctx context.Context, w watch.Interface, out chan<- item, idle time.Duration) (n int, gone bool, err error) {
	timer := time.NewTimer(idle)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return n, false, nil
		case <-timer.C:
			return n, false, nil // silent past its own timeout: re-watch
		case ev, ok := <-w.ResultChan():
			if !ok {
				return n, false, nil
			}
			timer.Reset(idle)
			switch ev.Type {
			case watch.Error:
				e := apierrors.FromObject(ev.Object)
				if isGone(e) {
					return n, true, nil
				}
				return n, false, e
			case watch.Bookmark:
				if rv := resourceVersion(ev.Object); rv != "" {
					s.rv = rv
				}
			case watch.Added, watch.Modified, watch.Deleted:
				if rv := resourceVersion(ev.Object); rv != "" {
					s.rv = rv
				}
				n++
				if !send(ctx, out, item{kind: s.kind, typ: ev.Type, obj: ev.Object}) {
					return n, false, nil
				}
			}
		}
	}
}

func resourceVersion(o runtime.Object) string {
	if a, err := meta.Accessor(o); err == nil {
		return a.GetResourceVersion()
	}
	return ""
}

func send(ctx context.Context, out chan<- item, it item) bool {
	select {
	case out <- it:
		return true
	case <-ctx.Done():
		return false
	}
}

// isGone is 410: the resourceVersion is older than the server keeps
// (Expired, "too old resource version") or Gone.
func isGone(err error) bool {
	if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
		return true
	}
	var st apierrors.APIStatus
	return errors.As(err, &st) && st.Status().Code == 410
}

// fatal errors end the trace: the credential is refused, the pods may not
// be read, or the run's bound on API bytes or on decoded objects is spent
// (a flood of events): retrying would only meet it again.
func fatal(err error) bool {
	var big *kubefacts.ErrBodyTooLarge
	if errors.As(err, &big) && big.Run {
		return true
	}
	var much *keep.ErrTooMuch
	if errors.As(err, &much) && much.What == "decoded" || keep.Spent() {
		// A watch event past the bound reaches here as the text of
		// client-go's decode error; the budget itself says it.
		return true
	}
	return apierrors.IsUnauthorized(err) || apierrors.IsForbidden(err) || apierrors.IsNotFound(err) && !isGone(err)
}

// backoff doubles from backoffMin to backoffMax, with jitter.
type backoff struct{ d time.Duration }

func (b *backoff) next() time.Duration {
	if b.d == 0 {
		return backoffMin
	}
	return b.d
}

func (b *backoff) wait(ctx context.Context) bool {
	d := b.next()
	b.d = min(2*d, backoffMax)
	d += time.Duration(rand.Int64N(int64(d)/5 + 1)) // up to +20%
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func (b *backoff) reset() { b.d = 0 }
