package checks

import (
	"context"
	"sync"

	"github.com/socialwebcomputer/doctor/internal/hostio"
)

// Value is what Evaluate found of a fact for one runner (Runner nil: a
// host-wide fact, or a per-runner one that applied to no runner): its
// value, or in Reason why there is none, worded as a check that required
// the fact would be skipped or unknown ("needs api-client: …", "offline",
// "applies to kubernetes runners; the configured runners are docker").
type Value[T any] struct {
	Runner *RunnerRef
	Value  T
	Reason string
}

// Evaluate computes fact f and what it requires, as Run would for a check
// that needs it, and returns its value for every runner (once for a
// host-wide fact), in config order: for a command that needs a fact
// rather than a diagnosis (doctor trace's API client, --journal's unit).
// opt selects runners (Runner) and bounds the work (Timeout); executors,
// when given, restrict a per-runner fact to runners of those executors.
// f must need facts only: a check it requires (or names by Ref) is in no
// catalog here. The error is Run's: an invalid graph, or a --runner that
// matches none.
func Evaluate[T any](ctx context.Context, env *hostio.Env, f *Fact[T], opt Options, executors ...string) ([]Value[T], error) {
	var mu sync.Mutex
	got := map[RunnerRef]T{}
	// The node that reads f is the engine's own: a check in every respect
	// but that no catalog lists it and no report shows it.
	read := &Check{ID: "evaluate", Title: f.ID, Severity: Info, Requires: []Node{f}, Executors: executors, Network: f.Network,
		Run: func(p *Pass) error {
			var at RunnerRef
			if r := p.Runner(); r != nil {
				at = r.Ref
			}
			v := f.Get(p)
			mu.Lock()
			defer mu.Unlock()
			got[at] = v
			return nil
		}}
	catalog := []*Check{read}
	if err := validateGraph(catalog, false, opt.Given); err != nil {
		return nil, err
	}
	res, err := runValid(ctx, env, catalog, opt)
	if res == nil {
		return nil, err
	}
	out := make([]Value[T], 0, len(res.Checks))
	for _, cr := range res.Checks {
		v := Value[T]{Runner: cr.Runner, Reason: cr.Reason}
		if cr.Status == StatusPass {
			var at RunnerRef
			if cr.Runner != nil {
				at = *cr.Runner
			}
			v.Value = got[at]
		}
		out = append(out, v)
	}
	return out, err
}
