package report

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/checks"
)

// world is a synthetic catalog: checks by ID, and their findings.
type world struct {
	checks   map[string]*checks.Check
	order    []string
	findings map[string][]checks.Finding
}

func newWorld() *world {
	return &world{checks: map[string]*checks.Check{}, findings: map[string][]checks.Finding{}}
}

// check adds a check that requires the named checks and explains others.
func (w *world) check(id string, explains []string, requires ...string) *world {
	c := &checks.Check{ID: id, Explains: explains}
	for _, r := range requires {
		c.Requires = append(c.Requires, w.checks[r])
	}
	w.checks[id] = c
	w.order = append(w.order, id)
	return w
}

// find adds a finding of sev from check id, optionally naming its cause.
func (w *world) find(id string, sev checks.Severity, causedBy ...string) *world {
	f := checks.Finding{Check: id, Severity: sev, Cause: id + " " + sev.String(), Evidence: []checks.Evidence{}}
	if len(causedBy) > 0 {
		f.CausedBy = causedBy[0]
	}
	w.findings[id] = append(w.findings[id], f)
	return w
}

func (w *world) build(ignores ...Ignore) *Report {
	res := &checks.Result{}
	for _, id := range w.order {
		st := checks.StatusPass
		if len(w.findings[id]) > 0 {
			st = checks.StatusFail
		}
		res.Checks = append(res.Checks, checks.CheckResult{Check: w.checks[id], Status: st, Findings: w.findings[id]})
	}
	return Build(res, ignores, "test", time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
}

// layout renders the ranking as "check(depth)<-cause" lines, in rank order.
func layout(r *Report) []string {
	var out []string
	for i, f := range r.Findings {
		if f.Rank != i+1 {
			panic("ranks are not 1..n in order")
		}
		s := strings.Repeat("  ", f.Depth()) + f.Check + ":" + f.Severity.String()
		if f.CausedBy != nil {
			s += "<-" + *f.CausedBy
		}
		out = append(out, s)
	}
	return out
}

func wantLayout(t *testing.T, r *Report, want ...string) {
	t.Helper()
	if got := layout(r); !reflect.DeepEqual(got, want) {
		t.Errorf("ranking:\n  got  %q\n  want %q", got, want)
	}
}

func TestRootsBySeverity(t *testing.T) {
	w := newWorld().check("a", nil).check("b", nil).check("c", nil).check("d", nil).
		find("a", checks.Warning).find("b", checks.Critical).find("c", checks.Info).find("d", checks.Error)
	wantLayout(t, w.build(), "b:critical", "d:error", "a:warning", "c:info")
}

func TestRootsThatExplainMoreComeFirst(t *testing.T) {
	// Same severity: y explains two findings, x none, so y ranks first
	// although x sorts first by ID.
	w := newWorld().check("dep1", nil).check("dep2", nil).check("x", nil).check("y", []string{"dep1", "dep2"}).
		find("x", checks.Critical).find("y", checks.Critical).find("dep1", checks.Error).find("dep2", checks.Warning)
	wantLayout(t, w.build(), "y:critical", "  dep1:error<-y", "  dep2:warning<-y", "x:critical")
}

func TestMoreFundamentalChecksComeFirst(t *testing.T) {
	// zeta requires nothing, alpha requires zeta: on a tie zeta is the more
	// fundamental, although alpha sorts first by ID.
	w := newWorld().check("zeta", nil).check("alpha", nil, "zeta").
		find("alpha", checks.Error).find("zeta", checks.Error)
	wantLayout(t, w.build(), "zeta:error", "alpha:error")
}

func TestIDBreaksTheLastTie(t *testing.T) {
	w := newWorld().check("b", nil).check("a", nil).check("c", nil).
		find("c", checks.Warning).find("b", checks.Warning).find("a", checks.Warning)
	wantLayout(t, w.build(), "a:warning", "b:warning", "c:warning")
}

func TestExplainsChainsFold(t *testing.T) {
	w := newWorld().check("c", nil).check("b", []string{"c"}).check("a", []string{"b"}).
		find("c", checks.Error).find("a", checks.Critical).find("b", checks.Error)
	r := w.build()
	wantLayout(t, r, "a:critical", "  b:error<-a", "    c:error<-b")
	if !reflect.DeepEqual(r.Findings[0].Explains, []string{"b"}) || r.Summary.Roots != 1 {
		t.Errorf("root explains %v, roots %d", r.Findings[0].Explains, r.Summary.Roots)
	}
}

func TestExplicitCausedByFolds(t *testing.T) {
	// api-auth knows its 401 is cert-expiry's, with no Explains declared.
	w := newWorld().check("cert-expiry", nil).check("api-auth", nil).
		find("api-auth", checks.Critical, "cert-expiry").find("cert-expiry", checks.Critical)
	wantLayout(t, w.build(), "cert-expiry:critical", "  api-auth:critical<-cert-expiry")
}

func TestCausedByAPassingCheckStaysARoot(t *testing.T) {
	w := newWorld().check("cert-expiry", nil).check("api-auth", nil).
		find("api-auth", checks.Critical, "cert-expiry")
	wantLayout(t, w.build(), "api-auth:critical")
}

func TestNotesExplainNothing(t *testing.T) {
	// a explains b, but a's only finding is info: b stands on its own.
	w := newWorld().check("b", nil).check("a", []string{"b"}).
		find("a", checks.Info).find("b", checks.Error)
	wantLayout(t, w.build(), "b:error", "a:info")
}

func TestMostSevereExplainerWins(t *testing.T) {
	w := newWorld().check("t", nil).check("p", []string{"t"}).check("q", []string{"t"}).
		find("t", checks.Error).find("p", checks.Warning).find("q", checks.Critical)
	wantLayout(t, w.build(), "q:critical", "  t:error<-q", "p:warning")
}

func TestCausedByCyclesTerminate(t *testing.T) {
	// Explicit CausedBy can loop where Validate cannot see; every finding
	// must still appear exactly once.
	w := newWorld().check("x", nil).check("y", nil).check("z", nil).
		find("x", checks.Error, "y").find("y", checks.Error, "z").find("z", checks.Error, "x")
	done := make(chan *Report, 1)
	go func() { done <- w.build() }()
	select {
	case r := <-done:
		if len(r.Findings) != 3 || r.Summary.Roots < 1 {
			t.Errorf("cycle: %q, roots %d", layout(r), r.Summary.Roots)
		}
		seen := map[string]bool{}
		for _, f := range r.Findings {
			if seen[f.Check] {
				t.Errorf("%s emitted twice", f.Check)
			}
			seen[f.Check] = true
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ranking a CausedBy cycle did not terminate")
	}
}

func TestSelfCauseIsARoot(t *testing.T) {
	w := newWorld().check("x", []string{"x"}).find("x", checks.Error, "x")
	wantLayout(t, w.build(), "x:error")
}

func TestIgnoresHideCountAndStaleOnesShow(t *testing.T) {
	w := newWorld().check("a", nil).check("b", nil).
		find("a", checks.Critical).find("a", checks.Error).find("b", checks.Warning)
	r := w.build(Ignore{Check: "a", Reason: "known"}, Ignore{Check: "c", Reason: "stale"})
	wantLayout(t, r, "b:warning")
	// c never ran in this world: its ignore is not evaluated, not stale.
	want := []Ignore{{Check: "a", Reason: "known", Matched: 2, Status: IgnoreMatched},
		{Check: "c", Reason: "stale", Matched: 0, Status: IgnoreNotEvaluated, Note: "c did not run (not selected)"}}
	if !reflect.DeepEqual(r.Ignores, want) {
		t.Errorf("ignores %+v, want %+v", r.Ignores, want)
	}
	if r.Summary.ExitCode != ExitWarning || r.Summary.Critical != 0 {
		t.Errorf("ignored findings still count: %+v", r.Summary)
	}
}

func TestExitCodes(t *testing.T) {
	for sev, want := range map[checks.Severity]int{
		checks.Default: ExitOK, checks.Info: ExitOK, checks.Warning: ExitWarning, checks.Error: ExitError, checks.Critical: ExitError,
	} {
		w := newWorld().check("a", nil)
		if sev != checks.Default {
			w.find("a", sev)
		}
		if got := w.build().Summary.ExitCode; got != want {
			t.Errorf("worst %s: exit %d, want %d", sev, got, want)
		}
	}
}

func TestSummaryCounts(t *testing.T) {
	res := &checks.Result{Checks: []checks.CheckResult{
		{Check: &checks.Check{ID: "p"}, Status: checks.StatusPass},
		{Check: &checks.Check{ID: "f"}, Status: checks.StatusFail, Findings: []checks.Finding{{Check: "f", Severity: checks.Warning}, {Check: "f", Severity: checks.Info}}},
		{Check: &checks.Check{ID: "u"}, Status: checks.StatusUnknown, Reason: "panic: x"},
		{Check: &checks.Check{ID: "s"}, Status: checks.StatusSkipped, Reason: "needs p"},
	}}
	s := Build(res, nil, "v", time.Time{}).Summary
	// ran = pass + fail + unknown; skipped apart; checks = ran + skipped.
	want := Summary{Warning: 1, Info: 1, Roots: 2, Pass: 1, Fail: 1, Unknown: 1, Skipped: 1, Ran: 3, Checks: 4,
		Incomplete: []string{"1 check could not check (unknown)"}, ExitCode: ExitWarning}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("summary %+v, want %+v", s, want)
	}
	// Checks that ran and could not check proved nothing: exit 3, though
	// they ran.
	res = &checks.Result{Checks: []checks.CheckResult{
		{Check: &checks.Check{ID: "u"}, Status: checks.StatusUnknown, Reason: "no kubeconfig"},
		{Check: &checks.Check{ID: "s"}, Status: checks.StatusSkipped, Reason: "needs u"},
	}}
	s = Build(res, nil, "v", time.Time{}).Summary
	if s.Ran != 1 || s.Checks != 2 || s.ExitCode != ExitCantRun {
		t.Errorf("only an unknown check: ran %d of %d, exit %d; want 1 of 2, exit %d", s.Ran, s.Checks, s.ExitCode, ExitCantRun)
	}
}
