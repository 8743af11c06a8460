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
	rep.Summary.Ran, rep.Summary.Checks = rep.Summary.Pass+rep.Summary.Fail, len(rep.Checks)
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
	case rep.Summary.Ran == 0:
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
// another runner's.
func rank(all []checks.Finding, explains map[string][]string, depth map[string]int) []Finding {
	// The finding that stands for a check as a cause, per runner: its most
	// severe one, and only when it is a warning or worse (a note explains
	// nothing).
	type causeKey struct {
		check  string
		runner int // 0 for host-wide
	}
	runnerOf := func(f checks.Finding) int {
		if f.Runner == nil {
			return 0
		}
		return f.Runner.Index
	}
	leads := map[causeKey]int{}
	for i, f := range all {
		if f.Severity < checks.Warning {
			continue
		}
		k := causeKey{f.Check, runnerOf(f)}
		if j, ok := leads[k]; !ok || f.Severity > all[j].Severity {
			leads[k] = i
		}
	}
	// lead finds the cause check c offers finding f: its own runner's first,
	// else the host-wide one.
	lead := func(c string, f checks.Finding) (int, bool) {
		if r := runnerOf(f); r != 0 {
			if j, ok := leads[causeKey{c, r}]; ok {
				return j, true
			}
		}
		j, ok := leads[causeKey{c, 0}]
		return j, ok
	}
	explainedBy := map[string][]string{} // check -> checks that explain it
	for c, es := range explains {
		for _, e := range es {
			explainedBy[e] = append(explainedBy[e], c)
		}
	}
	parent := make([]int, len(all))
	for i, f := range all {
		parent[i] = -1
		if f.CausedBy != "" {
			if j, ok := lead(f.CausedBy, f); ok && j != i {
				parent[i] = j
				continue
			}
		}
		best := -1
		for _, c := range explainedBy[f.Check] {
			j, ok := lead(c, f)
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
	// An explicit CausedBy can close a loop that Validate cannot see: break
	// it by making the finding where the loop is found a root.
	for i := range all {
		seen := map[int]bool{}
		for j := i; parent[j] >= 0; j = parent[j] {
			if seen[j] {
				parent[j] = -1
				break
			}
			seen[j] = true
		}
	}
	children := make([][]int, len(all))
	var roots []int
	for i, p := range parent {
		if p < 0 {
			roots = append(roots, i)
		} else {
			children[p] = append(children[p], i)
		}
	}
	var size func(i int) int
	size = func(i int) int {
		n := 0
		for _, c := range children[i] {
			n += 1 + size(c)
		}
		return n
	}
	order := func(ids []int) {
		sort.SliceStable(ids, func(a, b int) bool {
			fa, fb := all[ids[a]], all[ids[b]]
			if fa.Severity != fb.Severity {
				return fa.Severity > fb.Severity
			}
			if sa, sb := size(ids[a]), size(ids[b]); sa != sb {
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
	out := []Finding{}
	var emit func(i, d int)
	emit = func(i, d int) {
		f := all[i]
		rf := Finding{
			Rank: len(out) + 1, Check: f.Check, Runner: f.Runner, Severity: f.Severity, Title: f.Title,
			Cause: f.Cause, Evidence: f.Evidence, Fix: f.Fix, Docs: f.Docs,
			Explains: []string{}, Fingerprint: Fingerprint(f), depth: d,
		}
		if parent[i] >= 0 {
			c := all[parent[i]].Check
			rf.CausedBy = &c
		}
		seen := map[string]bool{}
		for _, c := range children[i] {
			if !seen[all[c].Check] {
				seen[all[c].Check] = true
				rf.Explains = append(rf.Explains, all[c].Check)
			}
		}
		out = append(out, rf)
		order(children[i])
		for _, c := range children[i] {
			emit(c, d+1)
		}
	}
	order(roots)
	for _, r := range roots {
		emit(r, 0)
	}
	return out
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
