package state

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/report"
)

var (
	t0  = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	now = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
)

func ref(i int, name string) *checks.RunnerRef { return &checks.RunnerRef{Index: i, Name: name} }

func finding(fp, check string, r *checks.RunnerRef, sev checks.Severity, title string) report.Finding {
	return report.Finding{Check: check, Runner: r, Severity: sev, Title: title, Fingerprint: fp}
}

func entry(check string, r *checks.RunnerRef, sev checks.Severity, title string, first, last time.Time) Entry {
	return Entry{Check: check, Runner: r, Severity: sev, Title: title, FirstSeen: first, LastSeen: last}
}

func status(id string, r *checks.RunnerRef, s checks.Status) report.CheckStatus {
	return report.CheckStatus{ID: id, Runner: r, Status: s}
}

// Fingerprints of the table, 12 hex digits each.
const (
	fpA = "aaaaaaaaaaaa"
	fpB = "bbbbbbbbbbbb"
	fpC = "cccccccccccc"
	fpD = "dddddddddddd"
)

// runners is the report's diagnosed runners: 1 and 2.
var runners = []report.Runner{{Index: 1, Name: "k8s", Executor: "kubernetes"}, {Index: 2, Name: "other", Executor: "kubernetes"}}

func TestDiff(t *testing.T) {
	cases := []struct {
		name     string
		prev     *State
		findings []report.Finding
		checks   []report.CheckStatus
		ignores  []report.Ignore
		runners  []report.Runner
		want     []string // "kind fingerprint check severity", in order
		next     map[string]Entry
	}{
		{
			name: "no last run: every finding is new",
			prev: nil,
			findings: []report.Finding{
				finding(fpA, "cert-expiry", ref(1, "k8s"), checks.Critical, "expired"),
				finding(fpB, "config-lint", nil, checks.Warning, "output_limit"),
			},
			checks: []report.CheckStatus{status("cert-expiry", ref(1, "k8s"), checks.StatusFail), status("config-lint", nil, checks.StatusFail)},
			want:   []string{"new aaaaaaaaaaaa cert-expiry critical", "new bbbbbbbbbbbb config-lint warning"},
			next: map[string]Entry{
				fpA: entry("cert-expiry", ref(1, "k8s"), checks.Critical, "expired", now, now),
				fpB: entry("config-lint", nil, checks.Warning, "output_limit", now, now),
			},
		},
		{
			name:     "persisting: no transition, first seen kept, last seen now",
			prev:     &State{Version: 1, Findings: map[string]Entry{fpA: entry("config-lint", nil, checks.Warning, "old title", t0, t0)}},
			findings: []report.Finding{finding(fpA, "config-lint", nil, checks.Warning, "new title")},
			checks:   []report.CheckStatus{status("config-lint", nil, checks.StatusFail)},
			want:     nil,
			next:     map[string]Entry{fpA: entry("config-lint", nil, checks.Warning, "new title", t0, now)},
		},
		{
			name:     "severity change keeps the fingerprint: persisting, with the new severity",
			prev:     &State{Version: 1, Findings: map[string]Entry{fpA: entry("cert-expiry", ref(1, "k8s"), checks.Warning, "expires soon", t0, t0)}},
			findings: []report.Finding{finding(fpA, "cert-expiry", ref(1, "k8s"), checks.Critical, "expired")},
			checks:   []report.CheckStatus{status("cert-expiry", ref(1, "k8s"), checks.StatusFail)},
			want:     nil,
			next:     map[string]Entry{fpA: entry("cert-expiry", ref(1, "k8s"), checks.Critical, "expired", t0, now)},
		},
		{
			name: "resolved: the check passed where it was",
			prev: &State{Version: 1, Findings: map[string]Entry{
				fpA: entry("config-lint", nil, checks.Warning, "output_limit", t0, t0),
				fpB: entry("namespace", ref(2, "other"), checks.Error, "no namespace", t0, t0),
			}},
			findings: nil,
			checks:   []report.CheckStatus{status("config-lint", nil, checks.StatusPass), status("namespace", ref(2, "other"), checks.StatusPass)},
			want:     []string{"resolved aaaaaaaaaaaa config-lint warning", "resolved bbbbbbbbbbbb namespace error"},
			next:     map[string]Entry{},
		},
		{
			name: "resolved while the check still fails for another reason",
			prev: &State{Version: 1, Findings: map[string]Entry{fpA: entry("config-lint", nil, checks.Warning, "output_limit", t0, t0)}},
			findings: []report.Finding{
				finding(fpB, "config-lint", nil, checks.Warning, "another key"),
			},
			checks: []report.CheckStatus{status("config-lint", nil, checks.StatusFail)},
			want:   []string{"new bbbbbbbbbbbb config-lint warning", "resolved aaaaaaaaaaaa config-lint warning"},
			next:   map[string]Entry{fpB: entry("config-lint", nil, checks.Warning, "another key", now, now)},
		},
		{
			name: "not examined: skipped, unknown, not run, another runner's pass: carried, no transition",
			prev: &State{Version: 1, Findings: map[string]Entry{
				fpA: entry("namespace", ref(1, "k8s"), checks.Error, "skipped now", t0, t0),
				fpB: entry("api-auth", ref(1, "k8s"), checks.Critical, "unknown now", t0, t0),
				fpC: entry("scale-to-zero", ref(1, "k8s"), checks.Warning, "not selected (--only)", t0, t0),
				fpD: entry("runner-rbac", ref(1, "k8s"), checks.Error, "passed for runner 2 only", t0, t0),
			}},
			checks: []report.CheckStatus{
				status("namespace", ref(1, "k8s"), checks.StatusSkipped),
				status("api-auth", ref(1, "k8s"), checks.StatusUnknown),
				status("runner-rbac", ref(2, "other"), checks.StatusPass),
			},
			want: nil,
			next: map[string]Entry{
				fpA: entry("namespace", ref(1, "k8s"), checks.Error, "skipped now", t0, t0),
				fpB: entry("api-auth", ref(1, "k8s"), checks.Critical, "unknown now", t0, t0),
				fpC: entry("scale-to-zero", ref(1, "k8s"), checks.Warning, "not selected (--only)", t0, t0),
				fpD: entry("runner-rbac", ref(1, "k8s"), checks.Error, "passed for runner 2 only", t0, t0),
			},
		},
		{
			name:    "not examined: the runner was not diagnosed (--runner 2), though the host-wide check passed",
			prev:    &State{Version: 1, Findings: map[string]Entry{fpA: entry("config-lint", ref(1, "k8s"), checks.Warning, "runner 1's key", t0, t0)}},
			checks:  []report.CheckStatus{status("config-lint", nil, checks.StatusPass)},
			runners: []report.Runner{{Index: 2, Name: "other"}},
			want:    nil,
			next:    map[string]Entry{fpA: entry("config-lint", ref(1, "k8s"), checks.Warning, "runner 1's key", t0, t0)},
		},
		{
			name:   "a host-wide check examines its findings about a runner",
			prev:   &State{Version: 1, Findings: map[string]Entry{fpA: entry("config-lint", ref(1, "k8s"), checks.Warning, "runner 1's key", t0, t0)}},
			checks: []report.CheckStatus{status("config-lint", nil, checks.StatusPass)},
			want:   []string{"resolved aaaaaaaaaaaa config-lint warning"},
			next:   map[string]Entry{},
		},
		{
			name: "hidden by an ignore that matched: carried; an ignore that matched nothing does not hide",
			prev: &State{Version: 1, Findings: map[string]Entry{
				fpA: entry("config-lint", nil, checks.Warning, "ignored now", t0, t0),
				fpB: entry("namespace", ref(1, "k8s"), checks.Error, "ignore matched nothing", t0, t0),
				fpC: entry("runner-rbac", ref(2, "other"), checks.Error, "ignore of another fingerprint", t0, t0),
			}},
			checks: []report.CheckStatus{
				status("config-lint", nil, checks.StatusPass), status("namespace", ref(1, "k8s"), checks.StatusPass),
				status("runner-rbac", ref(2, "other"), checks.StatusPass),
			},
			ignores: []report.Ignore{
				{Check: "config-lint", Reason: "r", Status: report.IgnoreMatched, Matched: 1},
				{Check: "namespace", Reason: "r", Status: report.IgnoreMatchedNothing},
				{Check: "runner-rbac", Runner: "2", Fingerprint: fpD, Reason: "r", Status: report.IgnoreMatched, Matched: 1},
			},
			want: []string{"resolved bbbbbbbbbbbb namespace error", "resolved cccccccccccc runner-rbac error"},
			next: map[string]Entry{fpA: entry("config-lint", nil, checks.Warning, "ignored now", t0, t0)},
		},
		{
			name: "an entry no run examined for longer than StaleAfter is forgotten, silently",
			prev: &State{Version: 1, Findings: map[string]Entry{
				fpA: entry("namespace", ref(3, "removed"), checks.Error, "runner removed", t0.Add(-60*24*time.Hour), t0.Add(-31*24*time.Hour)),
				fpB: entry("namespace", ref(3, "removed"), checks.Error, "recent", t0, now.Add(-29*24*time.Hour)),
			}},
			checks: []report.CheckStatus{status("namespace", ref(1, "k8s"), checks.StatusPass)},
			want:   nil,
			next:   map[string]Entry{fpB: entry("namespace", ref(3, "removed"), checks.Error, "recent", t0, now.Add(-29*24*time.Hour))},
		},
		{
			name: "two findings with one fingerprint are one entry, one transition",
			prev: New(),
			findings: []report.Finding{
				finding(fpA, "config-lint", nil, checks.Error, "first"),
				finding(fpA, "config-lint", nil, checks.Warning, "second"),
			},
			checks: []report.CheckStatus{status("config-lint", nil, checks.StatusFail)},
			want:   []string{"new aaaaaaaaaaaa config-lint error"},
			next:   map[string]Entry{fpA: entry("config-lint", nil, checks.Error, "first", now, now)},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rs := c.runners
			if rs == nil {
				rs = runners
			}
			rep := &report.Report{Findings: c.findings, Checks: c.checks, Ignores: c.ignores, Runners: rs}
			var before []byte
			if c.prev != nil {
				before, _ = json.Marshal(c.prev)
			}
			next, tr := Diff(c.prev, rep, now)
			var got []string
			for _, x := range tr {
				got = append(got, x.Kind+" "+x.Fingerprint+" "+x.Check+" "+x.Severity.String())
				switch x.Kind {
				case KindNew:
					if x.Finding == nil || FingerprintOf(x.Finding) != x.Fingerprint {
						t.Errorf("new %s: Finding %v, want this run's finding", x.Fingerprint, x.Finding)
					}
				case KindResolved:
					if x.Finding != nil {
						t.Errorf("resolved %s carries a finding", x.Fingerprint)
					}
					if x.Title == "" {
						t.Errorf("resolved %s has no title", x.Fingerprint)
					}
				default:
					t.Errorf("kind %q", x.Kind)
				}
			}
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("transitions:\n got %q\nwant %q", got, c.want)
			}
			if next.Version != Version {
				t.Errorf("next.Version = %d", next.Version)
			}
			if !reflect.DeepEqual(next.Findings, c.next) {
				gb, _ := json.MarshalIndent(next.Findings, "", " ")
				wb, _ := json.MarshalIndent(c.next, "", " ")
				t.Errorf("next state:\n got %s\nwant %s", gb, wb)
			}
			if c.prev != nil {
				if after, _ := json.Marshal(c.prev); string(after) != string(before) {
					t.Errorf("Diff modified prev:\n%s\n%s", before, after)
				}
			}
		})
	}
}

// TestDiffRunsInSequence: new, then persisting, then resolved, across runs
// saved and loaded as a cron would.
func TestDiffRunsInSequence(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	run := func(at time.Time, fs []report.Finding, st checks.Status) []Transition {
		t.Helper()
		prev, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		rep := &report.Report{Findings: fs, Runners: runners, Checks: []report.CheckStatus{status("cert-expiry", ref(1, "k8s"), st)}}
		next, tr := Diff(prev, rep, at)
		if err := Save(path, next); err != nil {
			t.Fatal(err)
		}
		return tr
	}
	f := finding(fpA, "cert-expiry", ref(1, "k8s"), checks.Warning, "expires in 3 days")
	if tr := run(t0, []report.Finding{f}, checks.StatusFail); len(tr) != 1 || tr[0].Kind != KindNew {
		t.Fatalf("run 1: %+v, want one new", tr)
	}
	f.Severity, f.Title = checks.Critical, "expired"
	if tr := run(t0.Add(time.Hour), []report.Finding{f}, checks.StatusFail); len(tr) != 0 {
		t.Fatalf("run 2: %+v, want none (the same finding, worse)", tr)
	}
	// The run could not check (offline): nothing resolved.
	if tr := run(t0.Add(2*time.Hour), nil, checks.StatusSkipped); len(tr) != 0 {
		t.Fatalf("run 3: %+v, want none (not examined)", tr)
	}
	st, _ := Load(path)
	if e := st.Findings[fpA]; !e.FirstSeen.Equal(t0) || !e.LastSeen.Equal(t0.Add(time.Hour)) || e.Severity != checks.Critical {
		t.Errorf("after run 3: %+v", e)
	}
	tr := run(t0.Add(3*time.Hour), nil, checks.StatusPass)
	if len(tr) != 1 || tr[0].Kind != KindResolved || tr[0].Severity != checks.Critical || tr[0].Title != "expired" {
		t.Fatalf("run 4: %+v, want one resolved critical", tr)
	}
	if tr := run(t0.Add(4*time.Hour), nil, checks.StatusPass); len(tr) != 0 {
		t.Fatalf("run 5: %+v, want none", tr)
	}
}

// A finding without a fingerprint gets the one report.Build would give it,
// which ignores its wording.
func TestFingerprintOfFallback(t *testing.T) {
	f := report.Finding{Check: "config-lint", Title: "one", Evidence: []checks.Evidence{{Source: "config.toml:9", Detail: "x"}}}
	g := f
	g.Title, g.Evidence = "reworded", []checks.Evidence{{Source: "config.toml:9", Detail: "y"}}
	want := report.Fingerprint(checks.Finding{Check: "config-lint", Evidence: f.Evidence})
	if a, b := FingerprintOf(&f), FingerprintOf(&g); a != want || b != want || !report.ValidFingerprint(a) {
		t.Errorf("FingerprintOf = %s, %s, want %s", a, b, want)
	}
}
