// Package report turns a run's results into a ranked report: root causes
// first, their consequences folded under them, one exit code for every
// output format.
package report

import (
	"time"

	"github.com/socialwebcomputer/doctor/checks"
)

// SchemaVersion is the JSON contract's version; bump it on any breaking change.
const SchemaVersion = 1

// Report is the JSON document, field for field (README: "JSON schema").
type Report struct {
	SchemaVersion int           `json:"schemaVersion"`
	Doctor        DoctorInfo    `json:"doctor"`
	StartedAt     time.Time     `json:"startedAt"`
	DurationMs    int64         `json:"durationMs"`
	Summary       Summary       `json:"summary"`
	Findings      []Finding     `json:"findings"`
	Checks        []CheckStatus `json:"checks"`
	Ignores       []Ignore      `json:"ignores"`
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
	ExitCode int `json:"exitCode"`
}

// Finding is a checks.Finding placed in the ranking.
type Finding struct {
	Rank     int               `json:"rank"`
	Check    string            `json:"check"`
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
	ID         string        `json:"id"`
	Status     checks.Status `json:"status"`
	DurationMs int64         `json:"durationMs"`
	Reason     string        `json:"reason"`
}

// Ignore is one --ignore ID:reason and how many findings it hid; an ignore
// that matched nothing is reported, so stale ones get removed.
type Ignore struct {
	Check   string `json:"check"`
	Reason  string `json:"reason"`
	Matched int    `json:"matched"`
}

// Exit codes, the same in every output format.
const (
	ExitOK      = 0 // nothing of warning or worse
	ExitWarning = 1 // the worst finding is a warning, or a check could not run (unknown)
	ExitError   = 2 // an error or a critical finding
	ExitCantRun = 3 // doctor could not run: bad flag, unreadable root
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
