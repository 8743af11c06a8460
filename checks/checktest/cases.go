package checktest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/internal/fixcode"
	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/testkit/fixproof"
	"github.com/socialwebcomputer/doctor/testkit/fixture"
	"github.com/socialwebcomputer/doctor/testkit/hostilefix"
)

// Case is testdata/<name>/case.json beside a check's test: a host (the
// root/ beside it, or a shared fixture's), the flags of the run, and what
// the check must conclude for each runner. Cases runs every one.
type Case struct {
	Description string `json:"description"`
	// Fixture, when set, is a fixture of the repository whose root/ and
	// setup the case uses ("testdata/fixtures/cert-expired"), so a host
	// the CLI's scenarios lay out serves the check's own case too.
	// The case's setup is laid over the fixture's: a mode or owner of its
	// own on the same host.
	Fixture string        `json:"fixture"`
	Now     string        `json:"now"`
	Setup   fixture.Setup `json:"setup"`
	// Env sets fields of hostio.Env by name, as doctor's flags would:
	// {"Offline": true, "KubeconfigPath": "/x", "Settings": {"public-dns": "127.0.0.1:1"}}.
	Env  json.RawMessage `json:"env"`
	Want []ResultWant    `json:"want"`
}

// ResultWant is what one result of the check must be: the runner it is
// for (its index in config.toml; 0 for a host-wide result), its status,
// and every finding, in order.
type ResultWant struct {
	Runner   int           `json:"runner"`
	Status   checks.Status `json:"status"`
	Reason   string        `json:"reason"` // contained in the unknown or skipped reason
	Findings []FindingWant `json:"findings"`
}

// FindingWant is one finding: its severity and text it must contain.
type FindingWant struct {
	Severity checks.Severity `json:"severity"`
	Says     []string        `json:"says"`
}

// Cases runs c on each testdata/*/case.json of the calling package, one
// subtest per case, and fails unless the results are exactly the case's
// want: as many results, for the same runners, with the same statuses,
// and the same findings in the same order. opts apply to every case (With
// the checks c requires).
func Cases(t *testing.T, c *checks.Check, opts ...Option) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "*", "case.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("%s: no testdata/*/case.json: %v", c.ID, err)
	}
	for _, f := range files {
		dir := filepath.Dir(f)
		t.Run(filepath.Base(dir), func(t *testing.T) { RunCase(t, c, dir, opts...) })
	}
}

// RunCase runs c on the case in dir and asserts its want.
func RunCase(t *testing.T, c *checks.Check, dir string, opts ...Option) {
	t.Helper()
	cs := loadCase(t, dir)
	rootOf, sc := dir, &fixture.Scenario{Now: cs.Now, Setup: cs.Setup}
	if cs.Fixture != "" {
		rootOf = filepath.Join(moduleRoot(t), cs.Fixture)
		shared := fixture.Load(t, rootOf)
		sc.Setup = shared.Setup.With(cs.Setup)
		if sc.Now == "" {
			sc.Now = shared.Now
		}
	}
	if sc.Now == "" {
		t.Fatalf("%s: no now (an RFC3339 time the case is judged at)", dir)
	}
	root := fixture.LayRoot(t, rootOf, sc)
	now, _ := time.Parse(time.RFC3339, sc.Now) // LayRoot parsed it
	opts = append([]Option{Root(root), Now(now)}, opts...)
	if len(cs.Env) > 0 {
		opts = append(opts, Env(func(e *hostio.Env) {
			if err := json.Unmarshal(cs.Env, e); err != nil {
				t.Fatalf("%s/case.json env: %v", dir, err)
			}
			e.Root, e.Clock = root, now
		}))
	}
	results := Check(t, c, opts...)
	assertResults(t, results, cs.Want)
	// Every fix the case renders, with its facts, pastes (fixproof), and
	// keeps its structure whatever its values hold: rendered again with
	// every value an encoder is given wrapped in a hostile marker, it
	// parses as the plain one does (hostilefix.Compare).
	restore := fixcode.SetTaint(hostilefix.Taint)
	hostile := Check(t, c, opts...)
	restore()
	for i, r := range results {
		for j, f := range r.Findings {
			where := fmt.Sprintf("%s: %s fix %d", filepath.Base(dir), c.ID, j+1)
			fixproof.Checker{}.Assert(t, where, f.Fix)
			if err := hostilefix.AssertTouchesNoSystemPath(where, f.Fix); err != nil {
				t.Error(err)
			}
			if i < len(hostile) && j < len(hostile[i].Findings) {
				hostilefix.Compare(t, where+" with hostile values", f.Fix, hostile[i].Findings[j].Fix)
			} else {
				t.Errorf("%s: the run with hostile values has no such finding", where)
			}
		}
	}
}

func loadCase(t *testing.T, dir string) *Case {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "case.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cs Case
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cs); err != nil {
		t.Fatalf("%s/case.json: %v", dir, err)
	}
	if len(cs.Want) == 0 {
		t.Fatalf("%s/case.json: want lists no result", dir)
	}
	return &cs
}

// WantResults fails unless rs are exactly want, in order: as many
// results, for the same runners, with the same statuses, and the same
// findings (severity and words) in the same order. It is what Cases
// asserts, for a world a test states in code (given facts, a live
// cluster).
func WantResults(t testing.TB, rs []checks.CheckResult, want ...ResultWant) {
	t.Helper()
	assertResults(t, rs, want)
}

// assertResults fails unless rs are exactly want, in order.
func assertResults(t testing.TB, rs []checks.CheckResult, want []ResultWant) {
	t.Helper()
	if len(rs) != len(want) {
		t.Fatalf("%d results, want %d:\n%s", len(rs), len(want), texts(rs))
	}
	for i, w := range want {
		r := rs[i]
		if got := runnerIndex(r); got != w.Runner {
			t.Errorf("result %d is for runner %d, want %d", i, got, w.Runner)
		}
		WantStatus(t, r, w.Status, w.Reason)
		if len(r.Findings) != len(w.Findings) {
			t.Errorf("%s%s: %d findings, want %d:\n%s", r.Check.ID, runnerSuffix(r), len(r.Findings), len(w.Findings), Text(r))
			continue
		}
		for j, wf := range w.Findings {
			f := r.Findings[j]
			if f.Severity != wf.Severity || !containsAll(findingText(f), wf.Says) {
				t.Errorf("%s%s finding %d: want %s saying %q, got %s:\n%s", r.Check.ID, runnerSuffix(r), j+1, wf.Severity, wf.Says, f.Severity, findingText(f))
			}
		}
	}
}

func runnerIndex(r checks.CheckResult) int {
	if r.Runner == nil {
		return 0
	}
	return r.Runner.Index
}

// moduleRoot is the directory of go.mod above the test's package.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}
