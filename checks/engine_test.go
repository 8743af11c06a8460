package checks_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/internal/hostio"
)

// mk makes a check that Validate accepts; tests change only what they test.
func mk(id string, run func(*checks.Pass) error, req ...checks.Node) *checks.Check {
	return &checks.Check{
		ID: id, Title: "title of " + id, Severity: checks.Error,
		Doc:      checks.Doc{Cause: "c", Symptom: "s", Fix: checks.Text("f"), Verify: checks.Text("v"), Patterns: []string{"symptom of " + id}},
		Requires: req, Run: run,
	}
}

func ok(*checks.Pass) error { return nil }

func report(sev checks.Severity) func(*checks.Pass) error {
	return func(p *checks.Pass) error {
		p.Report(checks.Finding{Severity: sev, Cause: "found"})
		return nil
	}
}

func run(t *testing.T, catalog []*checks.Check, opt checks.Options) map[string]checks.CheckResult {
	t.Helper()
	res, err := checks.Run(context.Background(), &hostio.Env{Root: t.TempDir()}, catalog, opt)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]checks.CheckResult{}
	for _, cr := range res.Checks {
		out[cr.Check.ID] = cr
	}
	return out
}

func wantStatus(t *testing.T, got map[string]checks.CheckResult, id string, st checks.Status, reason string) {
	t.Helper()
	cr, ok := got[id]
	if !ok {
		t.Fatalf("%s did not run", id)
	}
	if cr.Status != st || !strings.Contains(cr.Reason, reason) {
		t.Errorf("%s: %s %q, want %s containing %q", id, cr.Status, cr.Reason, st, reason)
	}
}

func TestPanicIsUnknownWithReason(t *testing.T) {
	c := mk("boom", func(*checks.Pass) error { panic("kaboom") })
	got := run(t, []*checks.Check{c}, checks.Options{})
	wantStatus(t, got, "boom", checks.StatusUnknown, "panic: kaboom")
}

func TestTimeoutIsUnknownTimedOut(t *testing.T) {
	// The Run ignores its context, as a buggy check would; the engine must
	// still end it at its own Timeout and say so.
	release := make(chan struct{})
	defer close(release)
	c := mk("slow", func(p *checks.Pass) error {
		select {
		case <-release:
		case <-time.After(5 * time.Second):
		}
		p.Report(checks.Finding{Cause: "too late"}) // dropped: the pass is closed
		return nil
	})
	c.Timeout = 50 * time.Millisecond
	start := time.Now()
	got := run(t, []*checks.Check{c}, checks.Options{})
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("run took %s; the check's 50ms timeout did not bound it", d)
	}
	wantStatus(t, got, "slow", checks.StatusUnknown, "timed out after 50ms")
	if n := len(got["slow"].Findings); n != 0 {
		t.Errorf("a timed-out check kept %d findings", n)
	}
}

func TestRunTimeoutSaysTheRunEnded(t *testing.T) {
	c := mk("slow", func(p *checks.Pass) error { <-p.Context.Done(); return p.Context.Err() })
	got := run(t, []*checks.Check{c}, checks.Options{Timeout: 30 * time.Millisecond})
	wantStatus(t, got, "slow", checks.StatusUnknown, "timed out")
}

func TestErrorIsUnknownNotFinding(t *testing.T) {
	c := mk("cant", func(*checks.Pass) error { return errors.New("cannot read /proc/1/environ") })
	got := run(t, []*checks.Check{c}, checks.Options{})
	wantStatus(t, got, "cant", checks.StatusUnknown, "cannot read /proc/1/environ")
}

func TestFailedPrerequisiteSkipsDependents(t *testing.T) {
	a := mk("a", report(checks.Error))
	b := mk("b", ok, a)
	c := mk("c", ok, b) // transitively: b is skipped, so c is too
	got := run(t, []*checks.Check{a, b, c}, checks.Options{})
	wantStatus(t, got, "a", checks.StatusFail, "")
	wantStatus(t, got, "b", checks.StatusSkipped, "needs a")
	wantStatus(t, got, "c", checks.StatusSkipped, "needs b")
}

func TestUnknownPrerequisiteSkipsDependents(t *testing.T) {
	a := mk("a", func(*checks.Pass) error { panic("x") })
	b := mk("b", ok, a)
	got := run(t, []*checks.Check{a, b}, checks.Options{})
	wantStatus(t, got, "b", checks.StatusSkipped, "needs a")
}

func TestWarningPrerequisiteDoesNotBlock(t *testing.T) {
	for _, sev := range []checks.Severity{checks.Info, checks.Warning} {
		a := mk("a", report(sev))
		b := mk("b", ok, a)
		got := run(t, []*checks.Check{a, b}, checks.Options{})
		wantStatus(t, got, "b", checks.StatusPass, "")
	}
}

func TestSkipErrorIsSkippedWithReason(t *testing.T) {
	a := mk("a", func(*checks.Pass) error { return checks.Skip("nothing to examine: %s", "no kubeconfig") })
	got := run(t, []*checks.Check{a}, checks.Options{})
	wantStatus(t, got, "a", checks.StatusSkipped, "nothing to examine: no kubeconfig")
}

func TestFactErrorSkipsDependentsAndIsComputedOnce(t *testing.T) {
	calls := 0
	bad := &checks.Fact[int]{ID: "thing", Compute: func(*checks.Pass) (int, error) {
		calls++
		return 0, errors.New("cannot list /proc")
	}}
	a := mk("a", ok, bad)
	b := mk("b", ok, bad)
	got := run(t, []*checks.Check{a, b}, checks.Options{})
	wantStatus(t, got, "a", checks.StatusSkipped, "needs thing: cannot list /proc")
	wantStatus(t, got, "b", checks.StatusSkipped, "needs thing")
	if calls != 1 {
		t.Errorf("fact computed %d times, want once", calls)
	}
}

func TestFactValueReachesChecks(t *testing.T) {
	f := &checks.Fact[string]{ID: "word", Compute: func(*checks.Pass) (string, error) { return "hello", nil }}
	var seen string
	a := mk("a", func(p *checks.Pass) error { seen = f.Get(p); return nil }, f)
	run(t, []*checks.Check{a}, checks.Options{})
	if seen != "hello" {
		t.Errorf("check saw %q", seen)
	}
}

func TestUndeclaredFactReadIsUnknown(t *testing.T) {
	f := &checks.Fact[string]{ID: "word", Compute: func(*checks.Pass) (string, error) { return "x", nil }}
	a := mk("a", ok, f)
	b := mk("b", func(p *checks.Pass) error { f.Get(p); return nil }) // no Requires
	got := run(t, []*checks.Check{a, b}, checks.Options{})
	wantStatus(t, got, "b", checks.StatusUnknown, `reads fact "word" without requiring it`)
}

func TestOfflineSkipsNetworkNodes(t *testing.T) {
	net := mk("net", ok)
	net.Network = true
	f := &checks.Fact[int]{ID: "api", Network: true, Compute: func(*checks.Pass) (int, error) { return 1, nil }}
	dep := mk("dep", ok, f)
	res, err := checks.Run(context.Background(), &hostio.Env{Offline: true}, []*checks.Check{net, dep}, checks.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, cr := range res.Checks {
		if cr.Status != checks.StatusSkipped || cr.Reason != "offline" {
			t.Errorf("%s: %s %q, want skipped offline", cr.Check.ID, cr.Status, cr.Reason)
		}
	}
}

func TestOnlyRunsSelectionAndItsRequirements(t *testing.T) {
	a := mk("a", ok)
	b := mk("b", ok, a)
	c := mk("c", ok)
	got := run(t, []*checks.Check{a, b, c}, checks.Options{Only: []string{"b"}})
	if _, ran := got["c"]; ran {
		t.Error("--only b ran c")
	}
	wantStatus(t, got, "a", checks.StatusPass, "")
	wantStatus(t, got, "b", checks.StatusPass, "")
}

func TestSkipMarksSkippedAndBlocksDependents(t *testing.T) {
	a := mk("a", report(checks.Critical))
	b := mk("b", ok, a)
	got := run(t, []*checks.Check{a, b}, checks.Options{Skip: []string{"a"}})
	wantStatus(t, got, "a", checks.StatusSkipped, "--skip")
	wantStatus(t, got, "b", checks.StatusSkipped, "needs a")
	if len(got["a"].Findings) != 0 {
		t.Error("a skipped check reported findings")
	}
}

func TestOnlyAndSkipRejectUnknownIDs(t *testing.T) {
	a := mk("a", ok)
	for _, opt := range []checks.Options{{Only: []string{"nope"}}, {Skip: []string{"nope"}}} {
		_, err := checks.Run(context.Background(), &hostio.Env{}, []*checks.Check{a}, opt)
		if err == nil || !strings.Contains(err.Error(), `unknown check "nope"`) {
			t.Errorf("%+v: err %v", opt, err)
		}
	}
}

func TestReportFillsDefaultsAndRedacts(t *testing.T) {
	c := mk("a", func(p *checks.Pass) error {
		p.Report(checks.Finding{
			Cause:    "token = glrt-abcdefghijklmnop leaked",
			Evidence: []checks.Evidence{{Source: "x", Detail: "Authorization: Bearer abcdefghijklmnopqrstuvwxyz"}},
		})
		return nil
	})
	got := run(t, []*checks.Check{c}, checks.Options{})
	f := got["a"].Findings[0]
	if f.Check != "a" || f.Severity != checks.Error || f.Title != "title of a" || f.Fix.String() != "f" || f.Docs != "README.md#a" {
		t.Errorf("defaults not filled: %+v", f)
	}
	if strings.Contains(f.Cause, "abcdefghijklmnop") || strings.Contains(f.Evidence[0].Detail, "abcdefghijklmnopqrstuvwxyz") {
		t.Errorf("secret survived Report: %q / %q", f.Cause, f.Evidence[0].Detail)
	}
}

func TestEachNodeRunsOnceAcrossDiamond(t *testing.T) {
	n := 0
	base := mk("base", func(*checks.Pass) error { n++; return nil })
	l := mk("l", ok, base)
	r := mk("r", ok, base)
	top := mk("top", ok, l, r)
	run(t, []*checks.Check{base, l, r, top}, checks.Options{})
	if n != 1 {
		t.Errorf("base ran %d times", n)
	}
}
