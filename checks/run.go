package checks

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"sync"
	"time"
)

// DefaultTimeout bounds one node when it declares none.
const DefaultTimeout = 20 * time.Second

// APICallTimeout bounds one API request inside a node. It is well under
// DefaultTimeout so that a server that does not answer becomes the node's
// own finding ("timed out", naming the address) rather than the engine
// cutting the node off as unknown.
const APICallTimeout = 8 * time.Second

// Options select what runs.
type Options struct {
	Only []string // check IDs; empty means all
	Skip []string // check IDs
	// Timeout bounds the whole run; every node's deadline is the sooner of
	// its own and this one.
	Timeout time.Duration
}

// CheckResult is how one check ended.
type CheckResult struct {
	Check    *Check
	Status   Status
	Reason   string // why unknown or skipped
	Duration time.Duration
	Findings []Finding
}

// Result is one run: every scheduled check, in catalog order.
type Result struct {
	StartedAt time.Time
	Duration  time.Duration
	Checks    []CheckResult
	// CleanupErrors are undos that failed: what doctor may have left behind.
	CleanupErrors []string
}

// CleanupTimeout bounds the undos run at the end of a run.
const CleanupTimeout = 30 * time.Second

type cleanups struct {
	mu     sync.Mutex
	names  []string
	fns    []func(context.Context) error
	closed bool // the run has ended: a late registration undoes at once
}

func (c *cleanups) add(name string, f func(context.Context) error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), CleanupTimeout)
		defer cancel()
		_ = f(ctx)
		return
	}
	defer c.mu.Unlock()
	c.names = append(c.names, name)
	c.fns = append(c.fns, f)
}

// run undoes in reverse order, on a context of its own: the run's may be
// cancelled already (Ctrl-C), and the undo must still happen.
func (c *cleanups) run() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []string
	ctx, cancel := context.WithTimeout(context.Background(), CleanupTimeout)
	defer cancel()
	for i := len(c.fns) - 1; i >= 0; i-- {
		if err := c.fns[i](ctx); err != nil {
			errs = append(errs, c.names[i]+": "+err.Error())
		}
	}
	c.fns, c.names, c.closed = nil, nil, true
	return errs
}

type nodeResult struct {
	value    any
	err      error
	status   Status
	reason   string
	worst    Severity
	findings []Finding
	duration time.Duration
	done     chan struct{}
}

// Run executes the selected checks of catalog and everything they require,
// each node once, concurrently as soon as its requirements are done.
func Run(ctx context.Context, env *Env, catalog []*Check, opt Options) (*Result, error) {
	if err := Validate(catalog); err != nil {
		return nil, err
	}
	selected, err := selectChecks(catalog, opt)
	if err != nil {
		return nil, err
	}
	if opt.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opt.Timeout)
		defer cancel()
	}
	start := time.Now()
	skip := map[string]bool{}
	for _, id := range opt.Skip {
		skip[id] = true
	}

	results := map[Node]*nodeResult{}
	var order []Node
	var visit func(n Node)
	visit = func(n Node) {
		if _, ok := results[n]; ok {
			return
		}
		results[n] = &nodeResult{done: make(chan struct{})}
		for _, r := range n.requirements() {
			r, _ = unwrap(r)
			visit(r)
		}
		order = append(order, n)
	}
	for _, c := range selected {
		visit(c)
	}

	undo := &cleanups{}
	var wg sync.WaitGroup
	for _, n := range order {
		wg.Add(1)
		go func(n Node) {
			defer wg.Done()
			r := results[n]
			defer close(r.done)
			t0 := time.Now()
			execute(ctx, env, n, r, results, skip, undo)
			r.duration = time.Since(t0)
		}(n)
	}
	wg.Wait()

	res := &Result{StartedAt: start, CleanupErrors: undo.run()}
	res.Duration = time.Since(start)
	for _, c := range catalog {
		r, ok := results[c]
		if !ok {
			continue
		}
		res.Checks = append(res.Checks, CheckResult{
			Check: c, Status: r.status, Reason: r.reason,
			Duration: r.duration, Findings: r.findings,
		})
	}
	return res, nil
}

// execute waits for n's requirements, then runs it under its deadline.
func execute(ctx context.Context, env *Env, n Node, r *nodeResult, all map[Node]*nodeResult, skip map[string]bool, undo *cleanups) {
	values := map[Node]any{}
	for _, req := range n.requirements() {
		req, opt := unwrap(req)
		rr := all[req]
		<-rr.done
		if reason, blocked := blockedBy(req, rr); blocked {
			if opt {
				values[req] = nil // declared, absent: Get gives the zero value
				continue
			}
			r.status, r.reason, r.err = StatusSkipped, reason, errors.New(reason)
			return
		}
		values[req] = rr.value
	}
	if skip[n.NodeID()] {
		r.status, r.reason, r.err = StatusSkipped, "--skip", errors.New("skipped by --skip")
		return
	}

	timeout := DefaultTimeout
	if c, ok := n.(*Check); ok && c.Timeout > 0 {
		timeout = c.Timeout
	}
	nctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	p := &Pass{Context: nctx, Env: env, node: n, values: values, cleanups: undo}

	type outcome struct {
		value any
		err   error
	}
	out := make(chan outcome, 1)
	go func() {
		defer func() {
			if v := recover(); v != nil {
				out <- outcome{err: fmt.Errorf("panic: %v\n%s", v, firstFrames(debug.Stack()))}
			}
		}()
		v, err := n.(computer).compute(p)
		out <- outcome{v, err}
	}()

	var o outcome
	select {
	case o = <-out:
	case <-nctx.Done():
		// The node ignored its context. Report the deadline as a deadline and
		// move on; anything it reports later is dropped by Pass.close.
		o.err = fmt.Errorf("timed out after %s", timeout.Round(time.Millisecond))
		if ctx.Err() != nil {
			o.err = errors.New("timed out: the run's --timeout ended first")
		}
	}
	r.findings = p.close()
	r.value, r.err = o.value, o.err
	for _, f := range r.findings {
		if f.Severity > r.worst {
			r.worst = f.Severity
		}
	}
	var skipErr *SkipError
	switch {
	case errors.As(o.err, &skipErr):
		r.status, r.reason = StatusSkipped, skipErr.Reason
	case errors.Is(o.err, ErrOffline):
		r.status, r.reason = StatusSkipped, "offline"
	case o.err != nil:
		r.status, r.reason = StatusUnknown, Redact(o.err.Error())
		if IsTimeout(o.err) && !strings.Contains(r.reason, "timed out") {
			r.reason = "timed out: " + r.reason
		}
	case r.worst >= Warning:
		r.status = StatusFail
	default:
		r.status = StatusPass
	}
}

// blockedBy says whether a finished requirement stops its dependent, and why.
// A fact blocks when it has no value; a check blocks when it could not run
// or found an error or worse (a warning leaves the facts usable).
func blockedBy(req Node, rr *nodeResult) (string, bool) {
	if rr.status == StatusSkipped && rr.reason == "offline" {
		return "offline", true
	}
	if c, ok := req.(*Check); ok {
		if c.blocks(rr) {
			return "needs " + c.ID, true
		}
		return "", false
	}
	if rr.err != nil {
		if strings.HasPrefix(rr.err.Error(), "needs ") {
			return rr.err.Error(), true
		}
		return fmt.Sprintf("needs %s: %v", req.NodeID(), rr.err), true
	}
	return "", false
}

func selectChecks(catalog []*Check, opt Options) ([]*Check, error) {
	byID := map[string]*Check{}
	for _, c := range catalog {
		byID[c.ID] = c
	}
	for _, id := range append(append([]string{}, opt.Only...), opt.Skip...) {
		if byID[id] == nil {
			return nil, fmt.Errorf("unknown check %q (see `doctor checks`)", id)
		}
	}
	if len(opt.Only) == 0 {
		return catalog, nil
	}
	var out []*Check
	for _, id := range opt.Only {
		out = append(out, byID[id])
	}
	return out, nil
}

// firstFrames keeps a panic's reason readable in a report: the frames after
// the runtime's own, a few lines.
func firstFrames(stack []byte) string {
	lines := strings.Split(string(stack), "\n")
	var keep []string
	for i := 0; i < len(lines) && len(keep) < 6; i++ {
		l := strings.TrimSpace(lines[i])
		if strings.HasPrefix(l, "/") && !strings.Contains(l, "/runtime/") && !strings.Contains(l, "/checks/run.go") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}
