package report

import (
	"fmt"
	"sort"
	"time"

	"github.com/socialwebcomputer/doctor/checks"
)

// Build ranks the findings of a run. startedAt is the run's clock (--now when
// given, so golden outputs are stable); it also decides which ignores have
// expired.
func Build(res *checks.Result, ignores []Ignore, version string, startedAt time.Time) *Report {
	rep := &Report{
		SchemaVersion: SchemaVersion,
		Doctor:        DoctorInfo{Version: version},
		StartedAt:     startedAt.UTC(),
		DurationMs:    res.Duration.Milliseconds(),
		Findings:      []Finding{},
		Checks:        []CheckStatus{},
		Ignores:       []Ignore{},
		Overrides:     []Override{},
		Runners:       []Runner{},
		CleanupErrors: res.CleanupErrors,
	}
	for _, s := range res.Runners {
		rep.Runners = append(rep.Runners, Runner{Index: s.Ref.Index, Name: s.Ref.Name, Executor: s.Executor})
	}
	var all []checks.Finding
	depth := map[string]int{} // how fundamental: fewer checks below it first
	explains := map[string][]string{}
	for _, cr := range res.Checks {
		rep.Checks = append(rep.Checks, CheckStatus{
			ID: cr.Check.ID, Runner: cr.Runner, Status: cr.Status, DurationMs: cr.Duration.Milliseconds(), Reason: cr.Reason,
		})
		switch cr.Status {
		case checks.StatusPass:
			rep.Summary.Pass++
		case checks.StatusFail:
			rep.Summary.Fail++
		case checks.StatusUnknown:
			rep.Summary.Unknown++
		case checks.StatusSkipped:
			rep.Summary.Skipped++
		}
		depth[cr.Check.ID] = checkDepth(res.Catalog, cr.Check)
		explains[cr.Check.ID] = cr.Check.Explains
	}
	all, rep.Ignores = applyIgnores(res, ignores, startedAt)
	rep.Findings = rank(all, explains, depth)
	worst := checks.Default
	for _, f := range rep.Findings {
		switch f.Severity {
		case checks.Critical:
			rep.Summary.Critical++
		case checks.Error:
			rep.Summary.Error++
		case checks.Warning:
			rep.Summary.Warning++
		case checks.Info:
			rep.Summary.Info++
		}
		if f.CausedBy == nil {
			rep.Summary.Roots++
		}
		if f.Severity > worst {
			worst = f.Severity
		}
	}
	rep.Summary.Ran, rep.Summary.Checks = rep.Summary.Pass+rep.Summary.Fail+rep.Summary.Unknown, len(rep.Checks)
	rep.Summary.Incomplete = incomplete(res, rep.Summary)
	for _, ig := range rep.Ignores {
		if ig.Status == IgnoreExpired {
			rep.Summary.ExpiredIgnores++
		}
	}
	rep.Summary.ExitCode = exitCode(worst)
	// A run that could not check proves nothing healthy: a cron must not
	// read "could not check" as "fine", nor "nothing ran" as anything.
	switch {
	case proved(rep.Summary) == 0:
		rep.Summary.ExitCode = ExitCantRun
	case len(rep.Summary.Incomplete) > 0 && rep.Summary.ExitCode == ExitOK:
		rep.Summary.ExitCode = ExitWarning
	case rep.Summary.ExpiredIgnores > 0 && rep.Summary.ExitCode == ExitOK:
		// An expired ignore is a warning: a suppression someone meant to
		// revisit, still in place.
		rep.Summary.ExitCode = ExitWarning
	}
	return rep
}

// incomplete names what the run set out to prove and did not.
func incomplete(res *checks.Result, s Summary) []string {
	out := []string{}
	if res.DeadlineHit {
		out = append(out, "the run's --timeout ended before every check did")
	}
	if s.Unknown > 0 {
		out = append(out, plural(s.Unknown, "check")+" could not check (unknown)")
	}
	for _, id := range res.Only {
		ran := false
		for _, cr := range res.Checks {
			if cr.Check.ID == id && (cr.Status == checks.StatusPass || cr.Status == checks.StatusFail) {
				ran = true
			}
		}
		if !ran {
			out = append(out, "--only "+id+" did not run")
		}
	}
	if s.Ran == 0 {
		out = append(out, "no check ran")
	}
	return out
}

// proved counts the checks that proved something, pass or fail: a run
// that proved nothing exits 3, however many could not check.
func proved(s Summary) int { return s.Pass + s.Fail }

// plural is "1 check", "2 checks".
func plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// rank orders findings: roots by severity, then by how many findings they
// explain, then by how fundamental their check is, then by ID; each root is
// followed by its consequences, ranked the same way. A runner's finding
// folds under a cause of the same runner or a host-wide one, never under
// another runner's. Its steps: each finding's cause (causes), loops broken
// (breakLoops), then the tree of causes walked root by root (causeTree).
func rank(all []checks.Finding, explains map[string][]string, depth map[string]int) []Finding {
	parent := causes(all, newLeads(all), explainedBy(explains))
	breakLoops(parent)
	return newCauseTree(all, parent, depth).ranked()
}

// causeKey is a check as a cause for one runner (0 for host-wide).
type causeKey struct {
	check  string
	runner int
}

// runnerOf is the index of a finding's runner, 0 for a host-wide one.
func runnerOf(f checks.Finding) int {
	if f.Runner == nil {
		return 0
	}
	return f.Runner.Index
}

// leads is the finding that stands for a check as a cause, per runner: its
// most severe one, and only when it is a warning or worse (a note explains
// nothing).
type leads map[causeKey]int

func newLeads(all []checks.Finding) leads {
	l := leads{}
	for i, f := range all {
		if f.Severity < checks.Warning {
			continue
		}
		k := causeKey{f.Check, runnerOf(f)}
		if j, ok := l[k]; !ok || f.Severity > all[j].Severity {
			l[k] = i
		}
	}
	return l
}

// lead finds the cause check c offers finding f: its own runner's first,
// else the host-wide one.
func (l leads) lead(c string, f checks.Finding) (int, bool) {
	if r := runnerOf(f); r != 0 {
		if j, ok := l[causeKey{c, r}]; ok {
			return j, true
		}
	}
	j, ok := l[causeKey{c, 0}]
	return j, ok
}

// explainedBy inverts Explains: check -> checks that explain it.
func explainedBy(explains map[string][]string) map[string][]string {
	by := map[string][]string{}
	for c, es := range explains {
		for _, e := range es {
			by[e] = append(by[e], c)
		}
	}
	return by
}

// causes is each finding's parent, -1 for a root: the lead of the check
// its CausedBy names, else the most severe lead (then the first by ID)
// among the checks that explain its own.
func causes(all []checks.Finding, l leads, explainedBy map[string][]string) []int {
	parent := make([]int, len(all))
	for i, f := range all {
		parent[i] = -1
		if f.CausedBy != "" {
			if j, ok := l.lead(f.CausedBy, f); ok && j != i {
				parent[i] = j
				continue
			}
		}
		best := -1
		for _, c := range explainedBy[f.Check] {
			j, ok := l.lead(c, f)
			if !ok || j == i {
				continue
			}
			if best < 0 || all[j].Severity > all[best].Severity ||
				all[j].Severity == all[best].Severity && all[j].Check < all[best].Check {
				best = j
			}
		}
		parent[i] = best
	}
	return parent
}

// breakLoops makes a root of the finding where a loop of parents is found:
// an explicit CausedBy can close a loop that Validate cannot see.
func breakLoops(parent []int) {
	for i := range parent {
		seen := map[int]bool{}
		for j := i; parent[j] >= 0; j = parent[j] {
			if seen[j] {
				parent[j] = -1
				break
			}
			seen[j] = true
		}
	}
}

// causeTree is the findings as a forest of causes and their consequences.
type causeTree struct {
	all      []checks.Finding
	parent   []int
	children [][]int
	roots    []int
	depth    map[string]int // a check's depth in the DAG (checkDepth)
	out      []Finding
}

func newCauseTree(all []checks.Finding, parent []int, depth map[string]int) *causeTree {
	t := &causeTree{all: all, parent: parent, children: make([][]int, len(all)), depth: depth, out: []Finding{}}
	for i, p := range parent {
		if p < 0 {
			t.roots = append(t.roots, i)
		} else {
			t.children[p] = append(t.children[p], i)
		}
	}
	return t
}

// size is how many findings i explains, directly or not.
func (t *causeTree) size(i int) int {
	n := 0
	for _, c := range t.children[i] {
		n += 1 + t.size(c)
	}
	return n
}

// order sorts siblings: by severity, then how many findings each explains,
// how fundamental its check is, its check's ID, its runner, and where it
// was found.
func (t *causeTree) order(ids []int) {
	all, depth := t.all, t.depth
	sort.SliceStable(ids, func(a, b int) bool {
		fa, fb := all[ids[a]], all[ids[b]]
		if fa.Severity != fb.Severity {
			return fa.Severity > fb.Severity
		}
		if sa, sb := t.size(ids[a]), t.size(ids[b]); sa != sb {
			return sa > sb
		}
		if depth[fa.Check] != depth[fb.Check] {
			return depth[fa.Check] < depth[fb.Check]
		}
		if fa.Check != fb.Check {
			return fa.Check < fb.Check
		}
		if ra, rb := runnerOf(fa), runnerOf(fb); ra != rb {
			return ra < rb
		}
		return ids[a] < ids[b]
	})
}

// ranked is the roots in order, each followed by its consequences.
func (t *causeTree) ranked() []Finding {
	t.order(t.roots)
	for _, r := range t.roots {
		t.emit(r, 0)
	}
	return t.out
}

// emit appends finding i at depth d, then its consequences in order.
func (t *causeTree) emit(i, d int) {
	f := t.all[i]
	rf := Finding{
		Rank: len(t.out) + 1, Check: f.Check, Runner: f.Runner, Severity: f.Severity, Title: f.Title,
		Cause: f.Cause, Evidence: f.Evidence, Fix: f.Fix.String(), FixSteps: f.Fix, Docs: f.Docs,
		Explains: []string{}, Fingerprint: Fingerprint(f), depth: d,
	}
	if t.parent[i] >= 0 {
		c := t.all[t.parent[i]].Check
		rf.CausedBy = &c
	}
	seen := map[string]bool{}
	for _, c := range t.children[i] {
		if !seen[t.all[c].Check] {
			seen[t.all[c].Check] = true
			rf.Explains = append(rf.Explains, t.all[c].Check)
		}
	}
	t.out = append(t.out, rf)
	t.order(t.children[i])
	for _, c := range t.children[i] {
		t.emit(c, d+1)
	}
}

// checkDepth is the length of the longest chain of checks a check requires:
// runner-process is 0, what needs it is 1, and so on.
func checkDepth(catalog []*checks.Check, c *checks.Check) int {
	d := 0
	for _, r := range checks.RequiredChecks(catalog, c) {
		if x := checkDepth(catalog, r) + 1; x > d {
			d = x
		}
	}
	return d
}
