// Package report turns a run's results into a ranked report: root causes
// first, their consequences folded under them, one exit code for every
// output format.
package report

import (
	"time"

	"github.com/socialwebcomputer/doctor/checks"
)

// SchemaVersion is the JSON contract's version; bump it on any breaking change.
// 2: findings and checks carry their runner ({index, name}, or null for
// host-wide), a per-runner check is listed once per runner, and the report
// lists the runners diagnosed.
const SchemaVersion = 2

// Report is the JSON document, field for field (README: "JSON schema").
type Report struct {
	SchemaVersion int        `json:"schemaVersion"`
	Doctor        DoctorInfo `json:"doctor"`
	StartedAt     time.Time  `json:"startedAt"`
	DurationMs    int64      `json:"durationMs"`
	Summary       Summary    `json:"summary"`
	// Runners are the [[runners]] the per-runner checks ran for.
	Runners  []Runner      `json:"runners"`
	Findings []Finding     `json:"findings"`
	Checks   []CheckStatus `json:"checks"`
	Ignores  []Ignore      `json:"ignores"`
	// CleanupErrors are undos of --deep that failed: what may be left behind.
	CleanupErrors []string `json:"cleanupErrors,omitempty"`
	// Verbose makes the table list every check, not only the unknown ones.
	Verbose bool `json:"-"`
}

type DoctorInfo struct {
	Version string `json:"version"`
}

// Summary counts findings by severity and checks by status.
type Summary struct {
	Critical int `json:"critical"`
	Error    int `json:"error"`
	Warning  int `json:"warning"`
	Info     int `json:"info"`
	Roots    int `json:"roots"` // findings no other finding explains
	Pass     int `json:"pass"`
	Fail     int `json:"fail"`
	Unknown  int `json:"unknown"`
	Skipped  int `json:"skipped"`
	// Ran counts the checks that proved something (pass or fail) of Checks,
	// each per-runner check once per runner: "12 of 20 checks ran".
	Ran    int `json:"ran"`
	Checks int `json:"checks"`
	// Incomplete says why the run proved less than it set out to: a check
	// could not check, the deadline cut checks off, a check named with
	// --only did not run. Empty when nothing is missing.
	Incomplete []string `json:"incomplete"`
	ExitCode   int      `json:"exitCode"`
}

// Runner is one diagnosed runner: its position in config.toml (from 1),
// name and executor.
type Runner struct {
	Index    int    `json:"index"`
	Name     string `json:"name"`
	Executor string `json:"executor"`
}

// Finding is a checks.Finding placed in the ranking.
type Finding struct {
	Rank     int               `json:"rank"`
	Check    string            `json:"check"`
	Runner   *checks.RunnerRef `json:"runner"` // null for a host-wide finding
	Severity checks.Severity   `json:"severity"`
	Title    string            `json:"title"`
	Cause    string            `json:"cause"`
	Evidence []checks.Evidence `json:"evidence"`
	Fix      string            `json:"fix"`
	Docs     string            `json:"docs"`
	CausedBy *string           `json:"causedBy"` // null for a root cause
	Explains []string          `json:"explains"` // checks whose findings fold under this one
	depth    int               // 0 for a root; for indenting renderers
}

// Depth is 0 for a root cause, 1 for what it explains, and so on.
func (f Finding) Depth() int { return f.depth }

// CheckStatus is how one check ended.
type CheckStatus struct {
	ID         string            `json:"id"`
	Runner     *checks.RunnerRef `json:"runner"` // null for a host-wide check
	Status     checks.Status     `json:"status"`
	DurationMs int64             `json:"durationMs"`
	Reason     string            `json:"reason"`
}

// Ignore is one --ignore ID:reason and how many findings it hid; an ignore
// that matched nothing is reported, so stale ones get removed.
type Ignore struct {
	Check   string `json:"check"`
	Reason  string `json:"reason"`
	Matched int    `json:"matched"`
}

// Exit codes, the same in every output format. A run that proved nothing
// never exits 0.
const (
	ExitOK      = 0 // every check ran, nothing of warning or worse
	ExitWarning = 1 // the worst finding is a warning, or the run is incomplete (Summary.Incomplete)
	ExitError   = 2 // an error or a critical finding
	ExitCantRun = 3 // doctor could not run (bad flag, unreadable root), or no check ran at all
)

func exitCode(worst checks.Severity) int {
	switch {
	case worst >= checks.Error:
		return ExitError
	case worst == checks.Warning:
		return ExitWarning
	}
	return ExitOK
}
