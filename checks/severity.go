package checks

import (
	"fmt"
	"strings"
)

// Severity orders findings. The zero value means "the check's default", so a
// Run function only names a severity when it differs from the catalog's.
type Severity int

const (
	Default Severity = iota
	Info
	Warning
	Error
	Critical
)

var severityNames = [...]string{"default", "info", "warning", "error", "critical"}

func (s Severity) String() string {
	if s < 0 || int(s) >= len(severityNames) {
		return fmt.Sprintf("severity(%d)", int(s))
	}
	return severityNames[s]
}

// MarshalText makes severities read as words in JSON.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText accepts the words MarshalText writes.
func (s *Severity) UnmarshalText(b []byte) error {
	for i, n := range severityNames {
		if strings.EqualFold(string(b), n) {
			*s = Severity(i)
			return nil
		}
	}
	return fmt.Errorf("unknown severity %q", b)
}

// Status is how a check ended.
type Status string

const (
	StatusPass    Status = "pass"
	StatusFail    Status = "fail"
	StatusUnknown Status = "unknown" // the check could not check: an error, a panic, a deadline
	StatusSkipped Status = "skipped" // a prerequisite failed, --skip, or --offline
)
