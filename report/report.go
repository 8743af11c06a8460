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
// 3: a finding's fix is also given as steps (fixSteps: [{kind, text}], kind
// text, shell, caddyfile, systemd, toml or yaml), beside the plain fix.
const SchemaVersion = 3

// Report is the JSON document, field for field (README: "JSON schema").
type Report struct {
	SchemaVersion int        `json:"schemaVersion"`
	Doctor        DoctorInfo `json:"doctor"`
	// Host is the host the run diagnosed (its /etc/hostname), "" when
	// unknown; Args are the flags it was given, redacted.
	Host string   `json:"host"`
	Args []string `json:"args"`
	// Bundle is set when the report is doctor analyze's of a bundle.
	Bundle     *BundleInfo `json:"bundle,omitempty"`
	StartedAt  time.Time   `json:"startedAt"`
	DurationMs int64       `json:"durationMs"`
	Summary    Summary     `json:"summary"`
	// Runners are the [[runners]] the per-runner checks ran for.
	Runners  []Runner      `json:"runners"`
	Findings []Finding     `json:"findings"`
	Checks   []CheckStatus `json:"checks"`
	Ignores  []Ignore      `json:"ignores"`
	// Overrides are the flags that replaced what the runner itself uses
	// (--kubeconfig, --context, --namespace): the findings describe what
	// doctor was pointed at, not necessarily what the runner loads.
	Overrides []Override `json:"overrides"`
	// CleanupErrors are undos of --deep that failed: what may be left behind.
	CleanupErrors []string `json:"cleanupErrors,omitempty"`
	// Logs are the logs read for symptoms (doctor why, --log, --journal) and
	// Matches their lines that name a check; both absent when none was read.
	Logs    []LogRead `json:"logs,omitempty"`
	Matches []Match   `json:"matches,omitempty"`
	// Job is the GitLab job doctor job read: its status and failure_reason
	// beside the findings; absent in every other report.
	Job *Job `json:"job,omitempty"`
	// Verbose makes the table list every check, not only the unknown ones.
	Verbose bool `json:"-"`
	// Rerun is the command that repeats this run's input (doctor run and
	// the flags that chose what to read), as argument words; a finding's
	// verify line adds --only and --runner to it, rendered by the shell
	// encoder (internal/fixcode) so that a path with any character in it
	// stays one word. Empty: "doctor run".
	Rerun []string `json:"-"`
	// NoChanges, in a --changes-only report with nothing new or resolved,
	// is what the table and markdown say instead of "No findings.": the
	// findings that stand and since when ("No changes (1 critical,
	// unchanged since 2026-11-29T12:00Z).").
	NoChanges string `json:"-"`
}

// Override is one flag that replaced a value the runner has of its own.
type Override struct {
	Flag     string `json:"flag"`     // "--kubeconfig"
	Value    string `json:"value"`    // what was given
	Replaces string `json:"replaces"` // what the runner would use instead
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
	// Ran counts the checks of Checks that ran: Pass + Fail + Unknown (an
	// unknown check ran and could not check). Checks is Ran + Skipped, each
	// per-runner check once per runner: "12 of 20 checks ran".
	Ran    int `json:"ran"`
	Checks int `json:"checks"`
	// Incomplete says why the run proved less than it set out to: a check
	// could not check, the deadline cut checks off, a check named with
	// --only did not run. Empty when nothing is missing.
	Incomplete []string `json:"incomplete"`
	// ExpiredIgnores counts ignores past their expiry: each is a warning,
	// so the exit code is at least 1 while one is left in place.
	ExpiredIgnores int `json:"expiredIgnores"`
	ExitCode       int `json:"exitCode"`
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
	// FixSteps is the fix as steps: sentences and blocks of one kind
	// each, the commands a script can take out. Fix is the same as plain
	// text, every step on lines of its own (schema 2's field, kept).
	Fix      string       `json:"fix"`
	FixSteps checks.Steps `json:"fixSteps"`
	Docs     string       `json:"docs"`
	CausedBy *string      `json:"causedBy"` // null for a root cause
	Explains []string     `json:"explains"` // checks whose findings fold under this one
	// Fingerprint tells this finding from the check's others, stably from
	// run to run: a hash of the check, the runner's index and the sorted
	// evidence sources (never the wording). --ignore ID@FINGERPRINT:reason
	// hides this one finding.
	Fingerprint string `json:"fingerprint"`
	// Change is "new" or "resolved" in a --changes-only report: what
	// changed since the run --state remembers.
	Change string `json:"change,omitempty"`
	depth  int    // 0 for a root; for indenting renderers
}

// ChangeResolved is the Change of a finding a --changes-only report
// prints because it is gone since the run --state remembers.
const ChangeResolved = "resolved"

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

// Ignore is one --ignore ID[:RUNNER][@FINGERPRINT]:reason, or one entry of
// .doctor.yaml, and what became of it: an ignore that matched nothing is
// reported, so stale ones get removed; one whose check did not run is not
// evaluated; one past its expiry hides nothing and is a warning.
type Ignore struct {
	Check string `json:"check"`
	// Runner limits it to one runner: its index in config.toml or its name.
	// "" (or "*") is every runner and host-wide findings.
	Runner string `json:"runner,omitempty"`
	// Fingerprint limits it to the one finding with this fingerprint.
	Fingerprint string `json:"fingerprint,omitempty"`
	Reason      string `json:"reason"`
	// Expires is the date it stops applying, as written (YYYY-MM-DD, which
	// is 00:00 UTC of that day, or RFC3339); "" never.
	Expires   string    `json:"expires,omitempty"`
	ExpiresAt time.Time `json:"-"`
	// Source is where it was given: "--ignore" or the .doctor.yaml path.
	Source  string `json:"source"`
	Matched int    `json:"matched"`
	// Status is one of IgnoreMatched, IgnoreMatchedNothing,
	// IgnoreNotEvaluated, IgnoreExpired; Note says why, for the last two.
	Status string `json:"status"`
	Note   string `json:"note,omitempty"`
}

// Ignore statuses.
const (
	IgnoreMatched        = "matched"         // it hid Matched findings
	IgnoreMatchedNothing = "matched-nothing" // its check ran and found nothing it names: remove it
	IgnoreNotEvaluated   = "not-evaluated"   // its check did not run (skipped, unknown, not selected) or its runner was not diagnosed
	IgnoreExpired        = "expired"         // past Expires: it hides nothing, and is a warning
)

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

// BundleInfo names the bundle an analyze report was made from, and the
// doctor that recorded it.
type BundleInfo struct {
	File   string `json:"file"`
	Doctor string `json:"doctor"`
}
