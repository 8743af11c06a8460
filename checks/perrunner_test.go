package checks_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/internal/hostio"
)

// runners is a RunnerLister for engine tests.
type runners []checks.Subject

func (r runners) Subjects() []checks.Subject { return r }
func (r runners) NoRunners() string          { return "needs config-decode" }

func world(subjects ...checks.Subject) (*checks.Fact[runners], *checks.Fact[checks.Subject]) {
	list := &checks.Fact[runners]{ID: "runners", Compute: func(*checks.Pass) (runners, error) { return subjects, nil }}
	this := &checks.Fact[checks.Subject]{ID: "this-runner", ForEach: list, Compute: func(p *checks.Pass) (checks.Subject, error) {
		return *p.Runner(), nil
	}}
	return list, this
}

func sub(i int, name, executor string) checks.Subject {
	return checks.Subject{Ref: checks.RunnerRef{Index: i, Name: name}, Executor: executor}
}

func results(t *testing.T, catalog []*checks.Check, opt checks.Options) []checks.CheckResult {
	t.Helper()
	res, err := checks.Run(context.Background(), &hostio.Env{Root: t.TempDir()}, catalog, opt)
	if err != nil {
		t.Fatal(err)
	}
	return res.Checks
}

func TestPerRunnerCheckRunsOncePerRunnerOfItsExecutors(t *testing.T) {
	_, this := world(sub(1, "a", "kubernetes"), sub(2, "b", "instance"), sub(3, "c", "kubernetes"))
	var mu atomic.Int32
	c := mk("k8s", func(p *checks.Pass) error {
		mu.Add(1)
		s := this.Get(p)
		p.Report(checks.Finding{Cause: "for " + s.Ref.Name})
		return nil
	}, this)
	c.Executors = []string{checks.Kubernetes}
	got := results(t, []*checks.Check{c}, checks.Options{})
	if len(got) != 2 || mu.Load() != 2 {
		t.Fatalf("ran %d times, %d results; want 2 (the two kubernetes runners)", mu.Load(), len(got))
	}
	for i, want := range []string{"a", "c"} {
		r := got[i]
		if r.Runner == nil || r.Runner.Name != want || len(r.Findings) != 1 || r.Findings[0].Runner == nil || r.Findings[0].Runner.Name != want {
			t.Errorf("result %d: %+v, want runner %s with its finding naming it", i, r, want)
		}
	}
}

func TestFactSharedByRunnersIsComputedOnce(t *testing.T) {
	_, this := world(sub(1, "a", "kubernetes"), sub(2, "b", "kubernetes"))
	var calls atomic.Int32
	client := &checks.Fact[string]{ID: "client", Requires: []checks.Node{this}, Compute: func(p *checks.Pass) (string, error) {
		return checks.Shared(p, "https://one.invalid", func() (string, error) { calls.Add(1); return "conn", nil })
	}}
	c := mk("uses", ok, client)
	results(t, []*checks.Check{c}, checks.Options{})
	if calls.Load() != 1 {
		t.Errorf("shared value computed %d times for two runners of one target, want 1", calls.Load())
	}
}

func TestCheckForNoConfiguredExecutorIsSkippedWithReason(t *testing.T) {
	_, this := world(sub(1, "dvp", "instance"))
	c := mk("k8s", ok, this)
	c.Executors = []string{checks.Kubernetes}
	got := results(t, []*checks.Check{c}, checks.Options{})
	if len(got) != 1 || got[0].Status != checks.StatusSkipped || !strings.Contains(got[0].Reason, "applies to kubernetes runners; the configured runners are instance") {
		t.Errorf("got %+v", got)
	}
}

func TestNoRunnersSkipsPerRunnerChecksWithTheListersReason(t *testing.T) {
	_, this := world()
	c := mk("k8s", ok, this)
	got := results(t, []*checks.Check{c}, checks.Options{})
	if len(got) != 1 || got[0].Status != checks.StatusSkipped || got[0].Reason != "needs config-decode" {
		t.Errorf("got %+v", got)
	}
}

func TestHostFindingForOneRunnerBlocksOnlyThatRunner(t *testing.T) {
	_, this := world(sub(1, "a", "kubernetes"), sub(2, "b", "kubernetes"))
	host := mk("host", func(p *checks.Pass) error {
		p.Report(checks.Finding{Cause: "b's context is missing", Runner: &checks.RunnerRef{Index: 2, Name: "b"}})
		return nil
	})
	dep := mk("dep", ok, host, this)
	got := results(t, []*checks.Check{host, dep}, checks.Options{})
	status := map[string]checks.Status{}
	for _, r := range got {
		if r.Check.ID == "dep" {
			status[r.Runner.Name] = r.Status
		}
	}
	if status["a"] != checks.StatusPass || status["b"] != checks.StatusSkipped {
		t.Errorf("dep: %v, want a pass and b skipped", status)
	}
}

func TestRunnerOptionRestrictsToOne(t *testing.T) {
	_, this := world(sub(1, "a", "kubernetes"), sub(2, "b", "kubernetes"))
	host := mk("host", func(p *checks.Pass) error {
		for _, i := range []int{1, 2} {
			p.Report(checks.Finding{Cause: "x", Runner: &checks.RunnerRef{Index: i}})
		}
		return nil
	})
	dep := mk("dep", ok, this)
	for _, sel := range []string{"b", "2"} {
		got := results(t, []*checks.Check{host, dep}, checks.Options{Runner: sel})
		for _, r := range got {
			if r.Check.ID == "dep" && r.Runner.Name != "b" {
				t.Errorf("--runner %s ran dep for %s", sel, r.Runner.Name)
			}
			if r.Check.ID == "host" && (len(r.Findings) != 1 || r.Findings[0].Runner.Index != 2) {
				t.Errorf("--runner %s kept host findings %+v", sel, r.Findings)
			}
		}
	}
	_, err := checks.Run(context.Background(), &hostio.Env{Root: t.TempDir()}, []*checks.Check{dep}, checks.Options{Runner: "zz"})
	if err == nil || !strings.Contains(err.Error(), "--runner zz matches no [[runners]]") {
		t.Errorf("--runner zz: %v", err)
	}
}
