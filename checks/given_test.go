package checks_test

import (
	"errors"
	"sync/atomic"
	"testing"

	"github.com/socialwebcomputer/doctor/checks"
)

// A given fact is read as supplied: it does not compute, nor does what it
// requires, and a check on it runs.
func TestGivenFactIsReadAndNothingBelowItRuns(t *testing.T) {
	var below atomic.Int32
	broken := &checks.Fact[string]{ID: "broken", Compute: func(*checks.Pass) (string, error) {
		below.Add(1)
		return "", errors.New("no such file")
	}}
	name := &checks.Fact[string]{ID: "name", Requires: []checks.Node{broken}, Compute: func(*checks.Pass) (string, error) {
		below.Add(1)
		return "computed", nil
	}}
	c := mk("says-name", func(p *checks.Pass) error {
		p.Report(checks.Finding{Cause: "name is " + name.Get(p)})
		return nil
	}, name)
	got := results(t, []*checks.Check{c}, checks.Options{Given: []checks.Given{checks.Give(name, "seeded")}})
	if len(got) != 1 || len(got[0].Findings) != 1 || got[0].Findings[0].Cause != "name is seeded" {
		t.Fatalf("got %+v, want one finding reading the given value", got)
	}
	if below.Load() != 0 {
		t.Errorf("%d nodes below the given fact computed, want 0", below.Load())
	}
	// Without the seed, the same graph blocks on the broken fact.
	got = results(t, []*checks.Check{c}, checks.Options{})
	if got[0].Status != checks.StatusSkipped {
		t.Errorf("unseeded: status %s, want skipped (needs broken)", got[0].Status)
	}
}

// A per-runner fact given is each runner's value; the runner list still
// decides the runners.
func TestGivenPerRunnerFactIsEveryRunnersValue(t *testing.T) {
	_, this := world(sub(1, "a", "kubernetes"), sub(2, "b", "kubernetes"))
	var computed atomic.Int32
	client := &checks.Fact[string]{ID: "client", Requires: []checks.Node{this}, Compute: func(p *checks.Pass) (string, error) {
		computed.Add(1)
		return "real", nil
	}}
	c := mk("uses", func(p *checks.Pass) error {
		p.Report(checks.Finding{Cause: client.Get(p)})
		return nil
	}, client)
	got := results(t, []*checks.Check{c}, checks.Options{Given: []checks.Given{checks.Give(client, "seeded")}})
	if len(got) != 2 {
		t.Fatalf("%d results, want one per runner", len(got))
	}
	for _, r := range got {
		if r.Runner == nil || len(r.Findings) != 1 || r.Findings[0].Cause != "seeded" {
			t.Errorf("%+v: want the seeded value for its runner", r)
		}
	}
	if computed.Load() != 0 {
		t.Errorf("the given fact computed %d times", computed.Load())
	}
}
