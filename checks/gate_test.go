package checks_test

import (
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/checks"
)

// A gated check starts while its gate is still running (its I/O goes out
// in the same round trip), and its result counts only once the gate has
// passed: when the gate fails it is skipped, as if it had waited, and what
// it found is dropped.
func TestGateStartsEarlyAndPublishesAfter(t *testing.T) {
	for _, gateFails := range []bool{false, true} {
		started := make(chan struct{})
		gate := mk("gate", func(p *checks.Pass) error {
			select {
			case <-started: // the gated check is already running
			case <-time.After(5 * time.Second):
				t.Error("the gated check did not start while its gate ran")
			}
			if gateFails {
				p.Report(checks.Finding{Severity: checks.Error, Cause: "refused"})
			}
			return nil
		})
		gated := mk("gated", func(p *checks.Pass) error {
			close(started)
			p.Report(checks.Finding{Severity: checks.Error, Cause: "found while the gate ran"})
			return nil
		}, checks.Gate(gate))
		got := run(t, []*checks.Check{gate, gated}, checks.Options{})
		if gateFails {
			wantStatus(t, got, "gated", checks.StatusSkipped, "needs gate")
			if n := len(got["gated"].Findings); n != 0 {
				t.Errorf("a gated check behind a failed gate kept %d findings", n)
			}
		} else {
			wantStatus(t, got, "gated", checks.StatusFail, "")
		}
	}
}

// A fact gated on a check it names by ID (Gate(Ref(id))), as a fact that
// may not import the check is, behaves as one gated on the check itself:
// the check is scheduled with it, blocks it when it fails, and is among
// what RequiredChecks lists of a check that needs the fact.
func TestGateOnARefIsTheCheck(t *testing.T) {
	for _, gateFails := range []bool{false, true} {
		gate := mk("gate", func(p *checks.Pass) error {
			if gateFails {
				p.Report(checks.Finding{Severity: checks.Error, Cause: "refused"})
			}
			return nil
		})
		read := &checks.Fact[int]{ID: "read", Requires: []checks.Node{checks.Gate(checks.Ref("gate"))},
			Compute: func(*checks.Pass) (int, error) { return 1, nil }}
		user := mk("user", func(p *checks.Pass) error {
			if read.Get(p) != 1 {
				p.Report(checks.Finding{Severity: checks.Error, Cause: "no value"})
			}
			return nil
		}, read)
		catalog := []*checks.Check{gate, user}
		got := run(t, catalog, checks.Options{Only: []string{"user"}})
		if _, ok := got["gate"]; !ok {
			t.Error("the check a Ref names was not scheduled with the fact")
		}
		if gateFails {
			wantStatus(t, got, "user", checks.StatusSkipped, "needs gate")
		} else {
			wantStatus(t, got, "user", checks.StatusPass, "")
		}
		if req := checks.RequiredChecks(catalog, user); len(req) != 1 || req[0] != gate {
			t.Errorf("RequiredChecks(user) = %v, want [gate]", req)
		}
	}
}
