package checks

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/internal/redact"
)

// DefaultTimeout bounds one node when it declares none.
const DefaultTimeout = 20 * time.Second

// Options select what runs.
type Options struct {
	Only []string // check IDs; empty means all
	Skip []string // check IDs
	// Runner restricts per-runner checks, and the findings of host-wide
	// ones, to one runner: its name or its position in config.toml.
	Runner string
	// Timeout bounds the whole run; every node's deadline is the sooner of
	// its own and this one.
	Timeout time.Duration
	// Progress, when set, hears each check scheduled, started and ended,
	// from the goroutines that run them (doctor run's live progress).
	Progress func(ProgressEvent)
	// Given are facts' values supplied instead of computed (Give): what a
	// check's own test seeds (checktest.Fact), so it judges a value it
	// chose without the facts below it.
	Given []Given
}

// Given is a value supplied for a fact: the fact does not run, nor does
// anything it requires but the runner list it expands over, and every node
// that requires it reads the value (in every runner's scope, for a
// per-runner fact).
type Given struct {
	node  Node
	value any
}

// Give supplies v as f's value (Options.Given).
func Give[T any](f *Fact[T], v T) Given { return Given{node: f, value: v} }

// ProgressEvent is one step of one check: scheduled (pending), started
// (its requirements are done and Run runs), or ended with its status.
type ProgressEvent struct {
	Check  string
	Runner *RunnerRef
	Step   ProgressStep
	Status Status // set when Step is Ended
}

type ProgressStep int

const (
	Scheduled ProgressStep = iota
	Started
	Ended
)

// CheckResult is how one check ended, for one runner or host-wide.
type CheckResult struct {
	Check    *Check
	Runner   *RunnerRef // nil for a host-wide check, or one that applied to no runner
	Status   Status
	Reason   string // why unknown or skipped
	Duration time.Duration
	Findings []Finding
	// Observations are values measured on the way (Pass.Observe).
	Observations []Observation
}

// Result is one run: every scheduled check, in catalog order, a per-runner
// check once per runner in config order.
type Result struct {
	StartedAt time.Time
	Duration  time.Duration
	Checks    []CheckResult
	// Runners are the runners the per-runner checks ran for.
	Runners []Subject
	// CleanupErrors are undos that failed: what doctor may have left behind.
	CleanupErrors []string
	// DeadlineHit is set when the run's --timeout ended before every node did.
	DeadlineHit bool
	// Only are the checks the operator named (--only): each must have run.
	Only []string
	// Catalog is the catalog the run was given, in which RequiredChecks
	// finds the checks a fact names by ID (Ref).
	Catalog []*Check
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
	observed []Observation
	duration time.Duration
	// computing is when the node's requirements and gates were in and it
	// began its own work; zero when it never did (skipped, blocked).
	computing time.Time
	done      chan struct{}
}

// worstFor is the worst severity among the findings that concern runner:
// those naming it and the host-wide ones. For a host-wide dependent, all.
func (r *nodeResult) worstFor(runner *Subject) Severity {
	if runner == nil {
		return r.worst
	}
	w := Default
	for _, f := range r.findings {
		if (f.Runner == nil || f.Runner.Index == runner.Ref.Index) && f.Severity > w {
			w = f.Severity
		}
	}
	return w
}

// scope holds the node results of one runner, or of the host. A per-runner
// scope looks host-wide nodes up in its parent.
type scope struct {
	cat     catalog
	given   map[Node]any
	runner  *Subject
	results map[Node]*nodeResult
	order   []Node
	parent  *scope
	perRun  map[Node]bool
}

func (s *scope) lookup(n Node) *nodeResult {
	if s.parent != nil && !s.perRun[n] {
		return s.parent.lookup(n)
	}
	return s.results[n]
}

// add schedules n and what it requires in this scope; host-wide
// requirements of a per-runner scope were scheduled in the host scope.
func (s *scope) add(n Node) {
	if s.parent != nil && !s.perRun[n] {
		return
	}
	if _, ok := s.results[n]; ok {
		return
	}
	s.results[n] = &nodeResult{done: make(chan struct{})}
	if _, ok := s.given[n]; ok {
		s.order = append(s.order, n)
		return
	}
	for _, r := range n.requirements() {
		r, _ = s.cat.unwrap(r)
		s.add(r)
	}
	s.order = append(s.order, n)
}

// run holds what every node of one Run shares.
type run struct {
	ctx    context.Context
	env    *hostio.Env
	skip   map[string]bool
	undo   *cleanups
	shared *memo
	wg     sync.WaitGroup
	// lister lists the runners; host is where its result is. A host-wide
	// check that declares executors waits for it, to skip when none of the
	// configured runners has them.
	lister Node
	host   *scope
	// perRun marks the nodes that run once per runner (perRunnerNodes).
	perRun map[Node]bool
	// progress is Options.Progress; nil hears nothing.
	progress func(ProgressEvent)
	// given are Options.Given by fact.
	given map[Node]any
	// began is when the run began: --v=5 logs each node's times from it.
	began time.Time
}

// tell reports a check's step to the progress listener.
func (x *run) tell(s *scope, n Node, step ProgressStep, status Status) {
	c, ok := n.(*Check)
	if !ok || x.progress == nil {
		return
	}
	var ref *RunnerRef
	if s.runner != nil {
		r := s.runner.Ref
		ref = &r
	}
	x.progress(ProgressEvent{Check: c.ID, Runner: ref, Step: step, Status: status})
}

func (x *run) start(s *scope) {
	for _, n := range s.order {
		x.tell(s, n, Scheduled, "")
	}
	for _, n := range s.order {
		x.wg.Add(1)
		go func(n Node) {
			defer x.wg.Done()
			r := s.results[n]
			defer close(r.done)
			t0 := time.Now()
			execute(x, s, n, r)
			r.duration = time.Since(t0)
			x.logTimes(s, n, r, t0)
			x.tell(s, n, Ended, r.status)
		}(n)
	}
}

// logTimes logs, at --v=5, when a node was scheduled, began its own work
// (its requirements in) and ended, in ms since the run began: where a slow
// run waited, and on what (bench/RESULTS.md reads the critical path so).
func (x *run) logTimes(s *scope, n Node, r *nodeResult, scheduled time.Time) {
	if x.env == nil || x.env.Log == nil {
		return
	}
	at := func(t time.Time) string {
		if t.IsZero() {
			return "-"
		}
		return fmt.Sprintf("%.1f", float64(t.Sub(x.began).Microseconds())/1000)
	}
	who := ""
	if s.runner != nil {
		who = " runner " + strconv.Itoa(s.runner.Ref.Index)
	}
	x.env.Logf(5, "node %s%s: %s; scheduled %s, working %s, ended %s ms", n.NodeID(), who, r.status, at(scheduled), at(r.computing), at(scheduled.Add(r.duration)))
}

// Run executes the selected checks of catalog and everything they require,
// each node once per scope, concurrently as soon as its requirements are
// done. Per-runner nodes wait for the runner list, then run once for each
// runner their check applies to.
func Run(ctx context.Context, env *hostio.Env, catalog []*Check, opt Options) (*Result, error) {
	if err := validate(catalog, false, opt.Given); err != nil {
		return nil, err
	}
	return runValid(ctx, env, catalog, opt)
}

// runValid is Run of a catalog whose graph is known to be valid: schedule
// the host-wide nodes, then, once the runner list is in, a scope per
// runner, and collect the results when every node has ended.
func runValid(ctx context.Context, env *hostio.Env, catalog []*Check, opt Options) (*Result, error) {
	selected, err := selectChecks(catalog, opt)
	if err != nil {
		return nil, err
	}
	if opt.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opt.Timeout)
		defer cancel()
	}
	if env.Clocks == nil {
		env.Clocks = &hostio.ServerClocks{}
	}
	start := time.Now()
	x := newRun(ctx, env, catalog, opt)
	x.began = start
	perRunner := x.scheduleHost(selected)
	// The runner list decides which per-runner scopes exist; they start as
	// soon as it is known, while the host scope goes on.
	var rs runnerScopes
	if len(perRunner) > 0 {
		x.wg.Add(1)
		go func() {
			defer x.wg.Done()
			rs = x.scheduleRunners(perRunner, opt.Runner)
		}()
	}
	x.wg.Wait()
	return x.result(catalog, rs, start, opt), rs.err
}

// newRun is what every node of one run shares: the skipped IDs, which
// nodes run per runner and over which runner list, and the host scope.
func newRun(ctx context.Context, env *hostio.Env, catalog []*Check, opt Options) *run {
	x := &run{ctx: ctx, env: env, skip: map[string]bool{}, undo: &cleanups{}, shared: &memo{}, progress: opt.Progress, given: map[Node]any{}}
	for _, id := range opt.Skip {
		x.skip[id] = true
	}
	for _, g := range opt.Given {
		x.given[g.node] = g.value
	}
	cat := catalogOf(catalog)
	x.perRun, x.lister = perRunnerNodes(cat, catalog)
	x.host = &scope{cat: cat, given: x.given, results: map[Node]*nodeResult{}, perRun: x.perRun}
	return x
}

// scheduleHost schedules and starts in the host scope every host-wide node
// the selected checks need (the runner list too, for a host-wide check that
// declares executors), and returns the selected checks that run per runner.
func (x *run) scheduleHost(selected []*Check) []*Check {
	var perRunner []*Check
	for _, c := range selected {
		if x.perRun[c] {
			perRunner = append(perRunner, c)
		}
		hostRequirements(x.host, c, x.perRun)
		if !x.perRun[c] && len(c.Executors) > 0 && x.lister != nil {
			x.host.add(x.lister)
		}
	}
	// Per-runner checks wait for the runner list; their requirements bring
	// it in, unless a fact between was given (Options.Given).
	if len(perRunner) > 0 && x.lister != nil {
		x.host.add(x.lister)
	}
	x.start(x.host)
	return perRunner
}

// runnerScopes are a run's per-runner scopes, the per-runner checks that
// applied to no runner (and why), and the error of a --runner that matched
// none.
type runnerScopes struct {
	scopes     []*scope
	notApplied map[*Check]string
	err        error
}

// scheduleRunners waits for the runner list, then schedules and starts one
// scope per runner (those sel selects) with the per-runner checks that
// apply to its executor.
func (x *run) scheduleRunners(perRunner []*Check, sel string) runnerScopes {
	rs := runnerScopes{notApplied: map[*Check]string{}}
	lr := x.host.results[x.lister]
	<-lr.done
	subjects, none := listRunners(x.lister, lr, sel)
	if sel != "" && len(subjects) == 0 && none == "" {
		rs.err = fmt.Errorf("--runner %s matches no [[runners]] of config.toml", sel)
	}
	for i := range subjects {
		s := &scope{cat: x.host.cat, given: x.given, runner: &subjects[i], results: map[Node]*nodeResult{}, parent: x.host, perRun: x.perRun}
		for _, c := range perRunner {
			if c.AppliesTo(subjects[i].Executor) {
				s.add(c)
			}
		}
		rs.scopes = append(rs.scopes, s)
	}
	for _, c := range perRunner {
		if reason := notApplying(c, subjects, none); reason != "" {
			rs.notApplied[c] = reason
		}
	}
	for _, s := range rs.scopes {
		x.start(s)
	}
	return rs
}

// result is the run's Result once every node has ended: the undos run,
// then every scheduled check in catalog order, a per-runner one once per
// runner, and one that applied to no runner as skipped.
func (x *run) result(catalog []*Check, rs runnerScopes, start time.Time, opt Options) *Result {
	res := &Result{StartedAt: start, CleanupErrors: x.undo.run(), DeadlineHit: x.ctx.Err() != nil, Only: opt.Only, Catalog: catalog}
	res.Duration = time.Since(start)
	for _, s := range rs.scopes {
		res.Runners = append(res.Runners, *s.runner)
	}
	for _, c := range catalog {
		if r, ok := x.host.results[c]; ok {
			kept, status := keptFindings(r.findings, res.Runners, opt.Runner), r.status
			if status == StatusFail && worst(kept) < Warning {
				status = StatusPass // what failed concerns runners --runner left out
			}
			res.Checks = append(res.Checks, CheckResult{Check: c, Status: status, Reason: r.reason,
				Duration: r.duration, Findings: kept, Observations: r.observed})
			continue
		}
		for _, s := range rs.scopes {
			if r, ok := s.results[c]; ok {
				ref := s.runner.Ref
				res.Checks = append(res.Checks, CheckResult{Check: c, Runner: &ref, Status: r.status,
					Reason: r.reason, Duration: r.duration, Findings: r.findings, Observations: r.observed})
			}
		}
		if reason, ok := rs.notApplied[c]; ok {
			res.Checks = append(res.Checks, CheckResult{Check: c, Status: StatusSkipped, Reason: reason})
		}
	}
	return res
}

// keptFindings are the findings of a host-wide check that --runner (sel)
// keeps: the host's own, and those of the runners it selected.
func keptFindings(fs []Finding, runners []Subject, sel string) []Finding {
	if sel == "" {
		return fs
	}
	var out []Finding
	for _, f := range fs {
		if f.Runner == nil || selectedRunner(runners, f.Runner) {
			out = append(out, f)
		}
	}
	return out
}

// worst is the worst severity of fs, Default for none.
func worst(fs []Finding) Severity {
	w := Default
	for _, f := range fs {
		w = max(w, f.Severity)
	}
	return w
}

func selectedRunner(rs []Subject, ref *RunnerRef) bool {
	for _, s := range rs {
		if s.Ref.Index == ref.Index {
			return true
		}
	}
	return false
}

// hostRequirements schedules in the host scope every host-wide node n
// needs, looking through per-runner nodes for the host nodes below them.
func hostRequirements(host *scope, n Node, perRun map[Node]bool) {
	if !perRun[n] {
		host.add(n)
		return
	}
	if _, ok := host.given[n]; ok {
		return // nothing below a given node runs; scheduleHost adds the runner list
	}
	for _, r := range n.requirements() {
		r, _ = host.cat.unwrap(r)
		hostRequirements(host, r, perRun)
	}
}

// listRunners reads the runner list once it is done: the runners, filtered
// by --runner, or why there are none.
func listRunners(lister Node, lr *nodeResult, sel string) ([]Subject, string) {
	if reason, blocked := blockedBy(lister, lr, nil); blocked {
		return nil, reason
	}
	l, ok := lr.value.(RunnerLister)
	if !ok {
		return nil, "needs " + lister.NodeID() + ": no runner list"
	}
	all := l.Subjects()
	if len(all) == 0 {
		return nil, l.NoRunners()
	}
	if sel == "" {
		return all, ""
	}
	var out []Subject
	for _, s := range all {
		if MatchRunner(sel, s) {
			out = append(out, s)
		}
	}
	return out, ""
}

// notApplying is why a per-runner check ran for no runner, "" when it ran.
func notApplying(c *Check, subjects []Subject, none string) string {
	if none != "" {
		return none
	}
	var have []string
	for _, s := range subjects {
		if c.AppliesTo(s.Executor) {
			return ""
		}
		if !slices.Contains(have, s.Executor) {
			have = append(have, s.Executor)
		}
	}
	if len(subjects) == 0 {
		return "no runner selected"
	}
	return fmt.Sprintf("applies to %s runners; the configured runners are %s", c.ExecutorList(), strings.Join(have, ", "))
}

// perRunnerNodes marks every node reachable from the checks that runs once
// per runner: a fact with ForEach, and whatever requires one. It returns the
// runner list they expand over (Validate ensures there is at most one).
func perRunnerNodes(cat catalog, cs []*Check) (map[Node]bool, Node) {
	memo := map[Node]bool{}
	var lister Node
	var visit func(n Node) bool
	visit = func(n Node) bool {
		if v, ok := memo[n]; ok {
			return v
		}
		memo[n] = false // a cycle is Validate's to report
		per := false
		if e, ok := n.(interface{ expandsOver() Node }); ok && e.expandsOver() != nil {
			per, lister = true, e.expandsOver()
		}
		for _, r := range n.requirements() {
			r, _ = cat.unwrap(r)
			if visit(r) {
				per = true
			}
		}
		memo[n] = per
		return per
	}
	for _, c := range cs {
		visit(c)
	}
	return memo, lister
}

// execute runs node n of scope s into r: it waits for n's requirements,
// honours --skip and the executors a host-wide check declares, runs n under
// its deadline, and settles its status once its gates have passed.
func execute(x *run, s *scope, n Node, r *nodeResult) {
	if v, ok := x.given[n]; ok {
		r.value = v
		r.settle(nil)
		return
	}
	values, gates, ok := awaitRequirements(s, n, r)
	if !ok || x.skipped(s, n, r) {
		return
	}
	o, p, cancel := x.compute(s, n, values)
	defer cancel() // the node's context lives until its gates have passed
	r.findings, r.observed = p.close()
	r.value, r.err = o.value, o.err
	if reason, grr, blocked := waitGates(s, gates); blocked {
		// What the node found stands on a gate that failed: it is dropped,
		// and the node is blocked as if it had waited.
		r.findings, r.observed, r.value = nil, nil, nil
		block(r, reason, grr)
		return
	}
	if c, ok := n.(*Check); ok {
		r.findings = cite(s, c, r.findings)
	}
	r.settle(o.err)
}

// awaitRequirements waits for each requirement of n that is not a gate and
// gathers their values; the gates are returned, to wait for after n ran.
// A requirement that blocks n (an Optional one gives its zero value)
// leaves r blocked and ok false.
func awaitRequirements(s *scope, n Node, r *nodeResult) (values map[Node]any, gates []Node, ok bool) {
	values = map[Node]any{}
	for _, req := range n.requirements() {
		if isGate(req) {
			gates = append(gates, req)
			continue
		}
		req, opt := s.cat.unwrap(req)
		rr := s.lookup(req)
		<-rr.done
		if reason, blocked := blockedBy(req, rr, s.runner); blocked {
			if opt {
				values[req] = nil // declared, absent: Get gives the zero value
				continue
			}
			// A gate listed before it blocks in its place, as it would have
			// had the node waited for it: the result names the root cause.
			if gr, grr, gblocked := waitGates(s, gates); gblocked {
				reason, rr = gr, grr
			}
			block(r, reason, rr)
			return nil, nil, false
		}
		values[req] = rr.value
	}
	return values, gates, true
}

// skipped says whether n does not run although its requirements are met,
// and leaves r skipped with why: --skip names it, or it is a host-wide
// check that declares executors no configured runner has.
func (x *run) skipped(s *scope, n Node, r *nodeResult) bool {
	if x.skip[n.NodeID()] {
		r.status, r.reason, r.err = StatusSkipped, "--skip", errors.New("skipped by --skip")
		return true
	}
	if c, ok := n.(*Check); ok && s.runner == nil && len(c.Executors) > 0 && x.lister != nil {
		lr := x.host.results[x.lister]
		<-lr.done
		// With no runner list (config.toml did not decode) the check still
		// examines what it can; with one, only when a runner has its executor.
		if subjects, _ := listRunners(x.lister, lr, ""); len(subjects) > 0 {
			if reason := notApplying(c, subjects, ""); reason != "" {
				r.status, r.reason, r.err = StatusSkipped, reason, errors.New(reason)
				return true
			}
		}
	}
	return false
}

// outcome is what a node's Run or Compute returned, or the deadline or
// panic that ended it.
type outcome struct {
	value any
	err   error
}

// compute runs n under its deadline (its Timeout, else DefaultTimeout; the
// run's own when sooner) on a goroutine of its own, so a node that ignores
// its context is left behind at the deadline; a panic is an error. The
// caller ends the node's context with cancel.
func (x *run) compute(s *scope, n Node, values map[Node]any) (outcome, *Pass, context.CancelFunc) {
	timeout := DefaultTimeout
	if c, ok := n.(*Check); ok && c.Timeout > 0 {
		timeout = c.Timeout
	}
	nctx, cancel := context.WithTimeout(x.ctx, timeout)
	s.results[n].computing = time.Now()
	x.tell(s, n, Started, "")
	p := &Pass{Context: nctx, Env: x.env, node: n, values: values, cleanups: x.undo, runner: s.runner, shared: x.shared, cat: s.cat}

	out := make(chan outcome, 1)
	go func() {
		growStack()
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
		if x.ctx.Err() != nil {
			o.err = errors.New("timed out: the run's --timeout ended first")
		}
	}
	return o, p, cancel
}

// settle sets the status of a node that ran from its findings and the
// error it returned: a Skip or --offline is skipped, another error unknown
// (a deadline says so), a finding of warning or worse fail.
func (r *nodeResult) settle(err error) {
	for _, f := range r.findings {
		if f.Severity > r.worst {
			r.worst = f.Severity
		}
	}
	var skipErr *SkipError
	switch {
	case errors.As(err, &skipErr):
		r.status, r.reason = StatusSkipped, skipErr.Reason
	case errors.Is(err, hostio.ErrOffline):
		r.status, r.reason = StatusSkipped, "offline"
	case err != nil:
		r.status, r.reason = StatusUnknown, redact.Text(err.Error())
		if hostio.IsTimeout(err) && !strings.Contains(r.reason, "timed out") {
			r.reason = "timed out: " + r.reason
		}
	case r.worst >= Warning:
		r.status = StatusFail
	default:
		r.status = StatusPass
	}
}

// waitGates waits for a node's gates, and says whether one blocks it.
func waitGates(s *scope, gates []Node) (string, *nodeResult, bool) {
	for _, g := range gates {
		g, _ = s.cat.unwrap(g)
		rr := s.lookup(g)
		<-rr.done
		if reason, blocked := blockedBy(g, rr, s.runner); blocked {
			return reason, rr, true
		}
	}
	return "", nil, false
}

// block marks r as stopped by the requirement whose result is rr: skipped,
// or unknown when that requirement could not check (and so are r's own
// dependents: the mark is kept).
func block(r *nodeResult, reason string, rr *nodeResult) {
	r.status, r.reason, r.err = StatusSkipped, reason, errors.New(reason)
	if rr.err != nil && errors.Is(rr.err, ErrCouldNotCheck) {
		r.status, r.err = StatusUnknown, CouldNotCheck(r.err)
	}
}

// blockedBy says whether a finished requirement stops its dependent, and why.
// A fact blocks when it has no value; a check blocks when it could not run
// or found an error or worse (a warning leaves the facts usable).
func blockedBy(req Node, rr *nodeResult, runner *Subject) (string, bool) {
	if rr.status == StatusSkipped && rr.reason == "offline" {
		return "offline", true
	}
	if c, ok := req.(*Check); ok {
		if c.blocks(rr, runner) {
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
