package checks

import (
	"context"
	"errors"
	"testing"

	"github.com/socialwebcomputer/doctor/internal/hostio"
)

// TestOptionalRequirement: a node runs though an optional requirement
// failed, reads its zero value, and Has tells it so; a node that requires
// the same fact outright is skipped.
func TestOptionalRequirement(t *testing.T) {
	broken := &Fact[*int]{ID: "broken", Doc: "fails", Compute: func(*Pass) (*int, error) { return nil, errors.New("no") }}
	var had, ran bool
	doc := Doc{Cause: "c", Symptom: "s", Fix: Text("f"), Verify: Text("v")}
	soft := &Check{ID: "soft", Title: "t", Doc: doc, Severity: Info, Requires: []Node{Optional(broken)},
		Run: func(p *Pass) error { ran, had = true, p.Has(broken) || broken.Get(p) != nil; return nil }}
	hard := &Check{ID: "hard", Title: "t", Doc: doc, Severity: Info, Requires: []Node{broken},
		Run: func(p *Pass) error { return nil }}
	res, err := Run(context.Background(), &hostio.Env{}, []*Check{soft, hard}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !ran || had {
		t.Errorf("soft ran=%v had=%v; want it run without the value", ran, had)
	}
	if res.Checks[0].Status != StatusPass || res.Checks[1].Status != StatusSkipped {
		t.Errorf("statuses %s, %s; want pass, skipped", res.Checks[0].Status, res.Checks[1].Status)
	}
}
