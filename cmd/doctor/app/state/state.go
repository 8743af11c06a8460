// Package state remembers the findings of the last run (doctor run --state
// FILE), by fingerprint, so that --changes-only can report only what changed:
// findings that are new, and findings that are resolved.
//
// A finding is resolved only when this run proved it gone: its check ran
// (pass or fail) for its runner, that runner was diagnosed, and no ignore
// that hid findings this run covers it. A finding whose check was skipped,
// unknown, cut off by the deadline, left out by --only, or hidden by an
// ignore, or whose runner --runner left out, is carried over unchanged: not
// seeing a problem is not proof it is fixed. An entry carried over for
// longer than StaleAfter (a runner removed from config.toml, a check no
// longer run) is forgotten without a transition.
//
// The file is compact JSON of at most MaxSize bytes, written atomically (a
// temporary file in the same directory, renamed over it) with mode 0600. Load refuses, with an error
// naming the file, anything that is not a regular file of at most MaxSize
// bytes holding this version's JSON; a missing file is the empty state.
package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"time"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/internal/hostio/atomicfile"
	"github.com/socialwebcomputer/doctor/report"
)

// Version is the state file's format version; Load refuses any other.
const Version = 1

// MaxSize bounds the state file Load reads: 10 MiB, far above any real
// state (an entry is about 200 bytes).
const MaxSize = 10 << 20

// StaleAfter is how long an entry that no run examined is kept.
const StaleAfter = 30 * 24 * time.Hour

// State is the findings of the last run, by fingerprint.
type State struct {
	Version  int              `json:"version"`
	Findings map[string]Entry `json:"findings"`
}

// Entry is one remembered finding.
type Entry struct {
	Check    string            `json:"check"`
	Runner   *checks.RunnerRef `json:"runner"` // nil for a host-wide finding
	Severity checks.Severity   `json:"severity"`
	Title    string            `json:"title"`
	// FirstSeen is the run that first reported it; LastSeen the last run
	// that reported it (a run that could not examine it leaves it as is).
	FirstSeen time.Time `json:"firstSeen"`
	LastSeen  time.Time `json:"lastSeen"`
}

// Transition kinds.
const (
	KindNew      = "new"      // reported now, not by the last run
	KindResolved = "resolved" // reported by the last run, proved gone now
)

// Transition is one finding that changed between the last run and this one.
type Transition struct {
	Kind        string            `json:"kind"` // KindNew or KindResolved
	Fingerprint string            `json:"fingerprint"`
	Check       string            `json:"check"`
	Runner      *checks.RunnerRef `json:"runner"`
	Severity    checks.Severity   `json:"severity"`
	Title       string            `json:"title"`
	// Finding is this run's finding; nil for a resolved one (what is
	// remembered of it is the fields above).
	Finding *report.Finding `json:"finding,omitempty"`
}

// New is the empty state.
func New() *State { return &State{Version: Version, Findings: map[string]Entry{}} }

// Load reads the state file at path; a missing file is the empty state.
// Anything else that is not this version's state (a directory, a FIFO, a
// device, a file over MaxSize, an empty or corrupt file) is an error that
// names the file: Load never blocks on it nor reads it unbounded.
func Load(path string) (*State, error) {
	fail := func(format string, a ...any) error {
		return fmt.Errorf("state file %s: %s", path, fmt.Sprintf(format, a...))
	}
	b, err := atomicfile.Read(path, MaxSize)
	if errors.Is(err, fs.ErrNotExist) {
		return New(), nil
	}
	if err != nil {
		return nil, fail("%v: not a state file doctor wrote", err)
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, fail("empty: not a state file doctor wrote (remove it to start afresh)")
	}
	var st State
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fail("not a doctor state file (%v); remove it to start afresh", err)
	}
	if st.Version != Version {
		return nil, fail("format version %d; this doctor reads version %d (remove it to start afresh)", st.Version, Version)
	}
	if st.Findings == nil {
		st.Findings = map[string]Entry{}
	}
	for fp, e := range st.Findings {
		if !report.ValidFingerprint(fp) {
			return nil, fail("%q is not a fingerprint (%d hex digits); remove the file to start afresh", fp, report.FingerprintLen)
		}
		if e.Check == "" {
			return nil, fail("finding %s names no check; remove the file to start afresh", fp)
		}
	}
	return &st, nil
}

// Save writes st to path atomically (atomicfile.Write): mode 0600, and on
// any error path is left as it was.
func Save(path string, st *State) error {
	fail := func(err error) error { return fmt.Errorf("state file %s: %w", path, err) }
	if st == nil {
		return fail(errors.New("no state to save"))
	}
	out := *st
	if out.Version == 0 {
		out.Version = Version
	}
	if out.Findings == nil {
		out.Findings = map[string]Entry{}
	}
	// Compact, and never past what Load reads back: a state written past
	// MaxSize would refuse every later run (it did, re-saved indented from
	// a file just under the bound). Too large, it is not saved and the last
	// one stays, which later runs still read.
	b, err := json.Marshal(out)
	if err != nil {
		return fail(err)
	}
	b = append(b, '\n')
	if int64(len(b)) > MaxSize {
		return fail(fmt.Errorf("this run's state of %d findings is %d bytes, past the %d a run reads back: not saved; the last state is kept",
			len(out.Findings), len(b), MaxSize))
	}
	if err := atomicfile.Write(path, b); err != nil {
		return fail(err)
	}
	return nil
}

// Diff compares this run's report with the last run's state: it returns the
// state to save and the transitions, new ones in the report's rank order,
// then resolved ones by check, runner and fingerprint. now is the run's
// clock (report.StartedAt). prev may be nil (no last run); it is not
// modified.
func Diff(prev *State, rep *report.Report, now time.Time) (*State, []Transition) {
	if prev == nil {
		prev = New()
	}
	now = now.UTC()
	next := New()
	var news, resolved []Transition
	for i := range rep.Findings {
		f := &rep.Findings[i]
		fp := FingerprintOf(f)
		if _, dup := next.Findings[fp]; dup {
			continue // two findings share an identity: the first ranked stands for both
		}
		e := Entry{Check: f.Check, Runner: copyRef(f.Runner), Severity: f.Severity, Title: f.Title, FirstSeen: now, LastSeen: now}
		if old, ok := prev.Findings[fp]; ok {
			e.FirstSeen = old.FirstSeen
		} else {
			news = append(news, Transition{Kind: KindNew, Fingerprint: fp, Check: f.Check, Runner: copyRef(f.Runner),
				Severity: f.Severity, Title: f.Title, Finding: f})
		}
		next.Findings[fp] = e
	}
	for fp, e := range prev.Findings {
		if _, seen := next.Findings[fp]; seen {
			continue
		}
		if !examined(rep, fp, e) {
			if now.Sub(e.LastSeen) <= StaleAfter {
				e.Runner = copyRef(e.Runner)
				next.Findings[fp] = e
			}
			continue
		}
		resolved = append(resolved, Transition{Kind: KindResolved, Fingerprint: fp, Check: e.Check, Runner: copyRef(e.Runner),
			Severity: e.Severity, Title: e.Title})
	}
	sort.Slice(resolved, func(i, j int) bool {
		a, b := resolved[i], resolved[j]
		if a.Check != b.Check {
			return a.Check < b.Check
		}
		if ra, rb := runnerIndex(a.Runner), runnerIndex(b.Runner); ra != rb {
			return ra < rb
		}
		return a.Fingerprint < b.Fingerprint
	})
	return next, append(news, resolved...)
}

// FingerprintOf is the finding's fingerprint: its own, or, for a finding
// built without one, the one report.Build would give it.
func FingerprintOf(f *report.Finding) string {
	if f.Fingerprint != "" {
		return f.Fingerprint
	}
	return report.Fingerprint(checks.Finding{Check: f.Check, Runner: f.Runner, Evidence: f.Evidence})
}

// examined says whether this run proved the remembered finding gone: its
// runner was diagnosed, its check ran for that runner, and no ignore that
// hid findings covers it.
func examined(rep *report.Report, fp string, e Entry) bool {
	if e.Runner != nil {
		diagnosed := false
		for _, r := range rep.Runners {
			if r.Index == e.Runner.Index {
				diagnosed = true
			}
		}
		if !diagnosed {
			return false
		}
	}
	ran := false
	for _, cs := range rep.Checks {
		if cs.ID != e.Check || (cs.Status != checks.StatusPass && cs.Status != checks.StatusFail) {
			continue
		}
		// A host-wide check examines every runner's findings of its own; a
		// per-runner check only its runner's.
		if cs.Runner == nil || e.Runner != nil && cs.Runner.Index == e.Runner.Index {
			ran = true
		}
	}
	if !ran {
		return false
	}
	for _, ig := range rep.Ignores {
		if ig.Status == report.IgnoreMatched && ig.Check == e.Check && report.MatchRunner(ig.Runner, e.Runner) &&
			(ig.Fingerprint == "" || ig.Fingerprint == fp) {
			return false
		}
	}
	return true
}

func runnerIndex(r *checks.RunnerRef) int {
	if r == nil {
		return 0
	}
	return r.Index
}

func copyRef(r *checks.RunnerRef) *checks.RunnerRef {
	if r == nil {
		return nil
	}
	c := *r
	return &c
}
