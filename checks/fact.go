package checks

import (
	"fmt"

	"github.com/socialwebcomputer/doctor/internal/hostio"
)

// Fact is a provider: a value computed once per run from the outside world
// (files under the root, /proc, the API) and shared by every check that
// declares it in Requires. Facts are nodes of the same DAG as checks.
type Fact[T any] struct {
	ID       string // a noun ("runner", "kubeconfig"), distinct from every check ID
	Doc      string // one line: what the value is
	Requires []Node
	// Network marks facts that need the network or the API: --offline makes
	// them fail with ErrOffline, and their dependents are skipped.
	Network bool
	// ForEach makes the fact per-runner: it is computed once for each runner
	// the ForEach node lists (its value is a RunnerLister), and so is every
	// node that requires it. Pass.Runner names the runner.
	ForEach Node
	// Cites is evidence every finding of a check that requires the fact,
	// directly or through other facts, carries: what the finding stands
	// on (the cluster an API check read, and the rule that chose it).
	// The engine adds it, so no check has to remember to; nil cites
	// nothing.
	Cites func(T) []Evidence
	// Settings are the settings Compute reads (Setting.Value), for the CLI
	// to offer as flags.
	Settings []*Setting
	// Compute returns the value. An error means the value does not exist, and
	// every dependent is skipped with "needs <ID>". Facts whose absence is
	// itself a diagnosis return a value that records it instead.
	Compute func(*Pass) (T, error)
}

func (f *Fact[T]) NodeID() string { return f.ID }
func (f *Fact[T]) requirements() []Node {
	if f.ForEach != nil {
		return append([]Node{f.ForEach}, f.Requires...)
	}
	return f.Requires
}
func (f *Fact[T]) declared() []*Setting { return f.Settings }
func (f *Fact[T]) expandsOver() Node    { return f.ForEach }
func (f *Fact[T]) String() string       { return f.ID }

func (f *Fact[T]) compute(p *Pass) (any, error) {
	if f.Network && p.Env.Offline {
		return nil, hostio.ErrOffline
	}
	return f.Compute(p)
}

// Get returns the fact's value. It panics, which the engine reports as
// unknown, when the running node did not declare the fact in Requires: an
// undeclared read would race with the fact's computation.
func (f *Fact[T]) Get(p *Pass) T {
	v, ok := p.values[f]
	if !ok {
		panic(fmt.Sprintf("%s reads fact %q without requiring it", p.node.NodeID(), f.ID))
	}
	t, _ := v.(T) // an Optional requirement that produced nothing: the zero value
	return t
}

// computer is what the scheduler needs from any node.
type computer interface {
	Node
	compute(*Pass) (any, error)
}

func (c *Check) compute(p *Pass) (any, error) {
	if c.Network && p.Env.Offline {
		return nil, hostio.ErrOffline
	}
	return nil, c.Run(p)
}
