package checks

import (
	"fmt"
	"regexp"
	"time"
)

// Doc is what an operator reads in `doctor explain ID` and in the README
// section anchored at the check's ID.
type Doc struct {
	Cause   string // why this happens
	Symptom string // exactly as the runner or the job log prints it
	Fix     Steps  // what to change
	Verify  Steps  // the commands that show the fix worked
	// Patterns match the symptom lines this cause prints in a job log or a
	// runner log (`doctor why`, `doctor run --log`). Each is a fragment of
	// one line, matched anywhere in it, case-sensitively; `*` stands for
	// the runner's variable parts (a name, a duration, an address) and
	// matches any run of characters within the line. Quote them from the
	// runner's source, beside the file and tag, like Symptom.
	Patterns []string
	// Ambiguous are symptom lines this cause shares with others: a line
	// one of them matches names every alternative and what tells them
	// apart, never this check alone (unless a Patterns entry of one of the
	// alternatives, more specific, matches the line too and decides).
	Ambiguous []Ambiguous
	// Signs match a line by its parts (Sign): its core and reason word,
	// the endpoint it names and its innermost cause, whatever tool printed
	// it and in whichever wording.
	Signs []Sign
}

// Ambiguous is a symptom line with several possible causes: this check's
// and those Or names.
type Ambiguous struct {
	Pattern string // as a Doc.Patterns entry
	// Or are the other causes: a check's ID, or NotACheck and the cause in
	// words.
	Or []string
	// Tell is what tells the causes apart: the check, command or
	// neighbouring line that decides.
	Tell string
}

// NotACheck begins an Ambiguous.Or entry that no check of doctor's probes:
// "not a doctor check: the job image's musl resolver".
const NotACheck = "not a doctor check: "

// PrepareHint ends every error of a job's prepare stage as the runner
// prints it: common/build.go, gitlab-runner v19.3.0 (executePrepareScripts):
// fmt.Errorf("prepare environment: %w. Check https://docs.gitlab.com/runner/shells/#shell-profile-loading for more information", err).
// A Symptom of that stage ends with it.
const PrepareHint = ". Check https://docs.gitlab.com/runner/shells/#shell-profile-loading for more information"

// Node is a vertex of the DAG: a fact provider or a check.
type Node interface {
	NodeID() string
	requirements() []Node
	declared() []*Setting
}

// Check probes one documented cause. It is a value: everything the engine,
// the catalog and the README need is declared here, in one place.
type Check struct {
	ID       string // stable kebab-case; README anchor and `doctor explain` key
	Title    string
	Doc      Doc
	Severity Severity // default severity of its findings
	// Requires lists the facts it reads and the checks that must not have
	// failed (a finding of error or worse, unknown, or skipped) for it to run.
	Requires []Node
	// Explains names checks whose failures this check's failure causes, so
	// the report folds their findings under this one.
	Explains []string
	// Timeout bounds Run; zero means the engine's default. The run's overall
	// deadline still wins when it is sooner.
	Timeout time.Duration
	// Network marks checks that talk to something beyond the local files:
	// --offline skips them.
	Network bool
	// Executors are the runner executors the check applies to (Kubernetes,
	// Docker, ...); none means every one. A check that requires a per-runner
	// fact runs once for each runner of these executors; a host-wide one
	// runs once, and is skipped when no configured runner has them.
	Executors []string
	// Settings are the settings Run reads (Setting.Value), for the CLI to
	// offer as flags.
	Settings []*Setting
	// Run reports findings through the Pass; a returned error means "could
	// not check" and makes the status unknown, never a finding.
	Run func(*Pass) error
}

func (c *Check) NodeID() string       { return c.ID }
func (c *Check) requirements() []Node { return c.Requires }
func (c *Check) declared() []*Setting { return c.Settings }
func (c *Check) String() string       { return c.ID }

// blocks says whether r stops a dependent that runs for runner (nil for a
// host-wide dependent): a check that could not run blocks everything; one
// that found an error or worse blocks the dependents of the runner the
// finding names, and all of them when it names none.
func (c *Check) blocks(r *nodeResult, runner *Subject) bool {
	switch r.status {
	case StatusPass:
		return false
	case StatusFail:
		return r.worstFor(runner) >= Error
	}
	return true
}

var idPattern = regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`)

// RequiredChecks lists the checks c requires, directly or through facts,
// a Ref resolved in catalog.
func RequiredChecks(catalog []*Check, c *Check) []*Check {
	cat := catalogOf(catalog)
	var out []*Check
	seen := map[Node]bool{}
	var walk func(n Node)
	walk = func(n Node) {
		for _, r := range n.requirements() {
			r, _ = cat.unwrap(r)
			if seen[r] {
				continue
			}
			seen[r] = true
			if rc, ok := r.(*Check); ok {
				out = append(out, rc)
				continue
			}
			walk(r)
		}
	}
	walk(c)
	return out
}

// Reads says whether c cannot run without n: c requires n, directly or
// through facts, and never optionally (a check c requires reads its own
// facts, and a gate is waited for, not read). A fact's Cites then reaches
// every finding of c.
func Reads(catalog []*Check, c *Check, n Node) bool {
	cat := catalogOf(catalog)
	seen := map[Node]bool{}
	var walk func(from Node) bool
	walk = func(from Node) bool {
		for _, r := range from.requirements() {
			if isGate(r) {
				continue
			}
			r, opt := cat.unwrap(r)
			if opt || seen[r] {
				continue
			}
			seen[r] = true
			if r == n {
				return true
			}
			if _, isCheck := r.(*Check); !isCheck && walk(r) {
				return true
			}
		}
		return false
	}
	return walk(c)
}

// SkipError is returned by a Run that finds nothing to check (no kubeconfig
// to examine, namespace_per_job set): the status is skipped with its reason.
type SkipError struct{ Reason string }

func (e *SkipError) Error() string { return e.Reason }

// Skip makes a check end as skipped with the reason.
func Skip(format string, args ...any) error {
	return &SkipError{Reason: fmt.Sprintf(format, args...)}
}
