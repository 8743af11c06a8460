package checks_test

import (
	"slices"
	"testing"

	"github.com/socialwebcomputer/doctor/checks"
)

// A fact's Cites reaches every finding of every check that requires it,
// directly or through another fact, without the check adding it; a check
// that does not require it, or requires it only through another check,
// does not cite it; a finding that already carries it does not repeat it.
func TestCitesReachEveryFindingOfDependents(t *testing.T) {
	cited := checks.Evidence{Source: "where", Detail: "effective cluster https://127.0.0.1:1: the rule"}
	cluster := &checks.Fact[string]{ID: "cluster", Doc: "d",
		Compute: func(*checks.Pass) (string, error) { return "https://127.0.0.1:1", nil },
		Cites: func(v string) []checks.Evidence {
			return []checks.Evidence{{Source: "where", Detail: "effective cluster " + v + ": the rule"}}
		}}
	client := &checks.Fact[int]{ID: "client", Doc: "d", Requires: []checks.Node{cluster},
		Compute: func(*checks.Pass) (int, error) { return 1, nil }}
	two := func(p *checks.Pass) error {
		p.Report(checks.Finding{Severity: checks.Info, Cause: "one"})
		p.Report(checks.Finding{Severity: checks.Info, Cause: "two", Evidence: []checks.Evidence{{Source: "own", Detail: "x"}, cited}})
		return nil
	}
	direct := mk("direct", two, cluster)
	through := mk("through", two, client)
	offside := mk("offside", two)
	behind := mk("behind", two, direct) // requires a check that requires it: not its fact
	got := run(t, []*checks.Check{direct, through, offside, behind}, checks.Options{})
	for _, id := range []string{"direct", "through"} {
		fs := got[id].Findings
		if len(fs) != 2 {
			t.Fatalf("%s: %d findings, want 2", id, len(fs))
		}
		for _, f := range fs {
			if n := count(f.Evidence, cited); n != 1 {
				t.Errorf("%s: finding %q cites the fact's evidence %d times, want once: %v", id, f.Cause, n, f.Evidence)
			}
		}
		if !slices.Contains(fs[1].Evidence, checks.Evidence{Source: "own", Detail: "x"}) {
			t.Errorf("%s: the check's own evidence is gone: %v", id, fs[1].Evidence)
		}
	}
	for _, id := range []string{"offside", "behind"} {
		if f := got[id].Findings[0]; count(f.Evidence, cited) != 0 {
			t.Errorf("%s does not require the fact, and cites it: %v", id, f.Evidence)
		}
	}
}

func count(evs []checks.Evidence, e checks.Evidence) int {
	n := 0
	for _, x := range evs {
		if x == e {
			n++
		}
	}
	return n
}

// Reads is what the seam promises to cover: a requirement through facts,
// never an Optional one, nor one of another check's facts.
func TestReads(t *testing.T) {
	f := &checks.Fact[int]{ID: "f", Doc: "d", Compute: func(*checks.Pass) (int, error) { return 1, nil }}
	via := &checks.Fact[int]{ID: "via", Doc: "d", Requires: []checks.Node{f}, Compute: func(*checks.Pass) (int, error) { return 1, nil }}
	direct, through := mk("direct", ok, f), mk("through", ok, via)
	optional, behind := mk("optional", ok, checks.Optional(f)), mk("behind", ok, direct)
	cat := []*checks.Check{direct, through, optional, behind}
	for c, want := range map[*checks.Check]bool{direct: true, through: true, optional: false, behind: false} {
		if got := checks.Reads(cat, c, f); got != want {
			t.Errorf("Reads(%s, f) = %v, want %v", c.ID, got, want)
		}
	}
}
