package checks

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/internal/redact"
)

// Pass is what a node's Run or Compute sees: the context carrying its
// deadline, the environment (root, clock, options), the values of the facts
// it required, and Report.
type Pass struct {
	Context context.Context
	Env     *hostio.Env

	node   Node
	values map[Node]any // only the node's declared requirements
	runner *Subject     // nil for a host-wide node
	shared *memo
	cat    catalog // resolves a Ref given to Has

	mu       sync.Mutex
	closed   bool // set when the node ended; late reports from a timed-out Run are dropped
	findings []Finding
	observed []Observation
	cleanups *cleanups
}

// Cleanup registers an undo for something Run created (the --deep probe
// pod). The engine runs every cleanup when the run ends, however it ends:
// after Run returns, after a deadline, after Ctrl-C. Register before
// creating, so a create that succeeds after a timeout is still undone.
func (p *Pass) Cleanup(name string, f func(context.Context) error) {
	p.cleanups.add(name, f)
}

// Report records a finding. Empty fields take the check's defaults: its
// severity, title, fix and README anchor.
func (p *Pass) Report(f Finding) {
	c, ok := p.node.(*Check)
	if !ok {
		panic("fact " + p.node.NodeID() + " reported a finding: facts gather, checks diagnose")
	}
	f.Check = c.ID
	if f.Severity == Default {
		f.Severity = c.Severity
	}
	if f.Title == "" {
		f.Title = c.Title
	}
	docFix := len(f.Fix) == 0 || f.Fix.Equal(c.Doc.Fix)
	if len(f.Fix) == 0 {
		f.Fix = c.Doc.Fix
	}
	if f.Docs == "" {
		f.Docs = DocsAnchor(c.ID)
	}
	if f.Evidence == nil {
		f.Evidence = []Evidence{}
	}
	if f.Runner == nil && p.runner != nil {
		ref := p.runner.Ref
		f.Runner = &ref
	}
	// The check's own documented fix is doctor's text, not input: nothing
	// to redact, and its commands ("--token …") stay as written.
	f.Cause = redact.Text(f.Cause)
	if !docFix {
		f.Fix = redactSteps(f.Fix)
	}
	for i := range f.Evidence {
		f.Evidence[i].Source = redact.Text(f.Evidence[i].Source)
		f.Evidence[i].Detail = redact.Text(f.Evidence[i].Detail)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.closed {
		p.findings = append(p.findings, f)
	}
}

// Observe records a measured value (see Observation); a per-runner pass's
// carries its runner.
func (p *Pass) Observe(o Observation) {
	if o.Runner == nil && p.runner != nil {
		ref := p.runner.Ref
		o.Runner = &ref
	}
	for k, v := range o.Labels {
		o.Labels[k] = redact.Text(v)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.closed {
		p.observed = append(p.observed, o)
	}
}

// close ends reporting and returns what was reported.
func (p *Pass) close() ([]Finding, []Observation) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	return p.findings, p.observed
}

// Runner is the runner this pass runs for; nil for a host-wide node.
func (p *Pass) Runner() *Subject { return p.runner }

// Shared computes a value once per run for every pass that asks with the
// same key: one API client per target (server and credential), one list per
// target and namespace, however many runners point there. The first caller
// computes under its own context; the others wait for it or for their own
// deadline.
func Shared[T any](p *Pass, key string, compute func() (T, error)) (T, error) {
	v, err := p.shared.do(p.Context, key, func() (any, error) { return compute() })
	t, _ := v.(T)
	return t, err
}

type memo struct {
	mu sync.Mutex
	m  map[string]*memoEntry
}

type memoEntry struct {
	done chan struct{}
	v    any
	err  error
}

func (m *memo) do(ctx context.Context, key string, compute func() (any, error)) (any, error) {
	m.mu.Lock()
	if m.m == nil {
		m.m = map[string]*memoEntry{}
	}
	e, ok := m.m[key]
	if !ok {
		e = &memoEntry{done: make(chan struct{})}
		m.m[key] = e
	}
	m.mu.Unlock()
	if !ok {
		func() {
			defer close(e.done)
			defer func() {
				if r := recover(); r != nil {
					e.err = fmt.Errorf("panic: %v", r)
				}
			}()
			e.v, e.err = compute()
		}()
	}
	select {
	case <-e.done:
		return e.v, e.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// CallTimeout bounds one probe of an endpoint: one API call's bound
// (Env.APITimeout), and never more than 8/10 of what is left of the node's
// own deadline (itself the sooner of the node's and the run's). A hung
// endpoint then ends its probe with room left for the check to say so, and
// is a finding rather than a node the run's --timeout cut short.
func (p *Pass) CallTimeout() time.Duration {
	d := p.Env.APITimeout()
	if dl, ok := p.Context.Deadline(); ok {
		if left := time.Until(dl) * 8 / 10; left < d {
			d = left
		}
	}
	return d
}

// redactSteps is redact.Text on a fix built at run time: its sentences,
// never its blocks. A block is code: redacting it would change what it
// does (a quoted word would lose its closing quote). Its values were
// checked when it was encoded instead (fixcode refuses a value that looks
// like a secret: the block is then a sentence that says why).
func redactSteps(s Steps) Steps {
	out := make(Steps, len(s))
	for i, st := range s {
		if st.Kind == KindText {
			st.Text = redact.Text(st.Text)
		}
		out[i] = st
	}
	return out
}
