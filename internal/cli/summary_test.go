package cli

import (
	"strings"

	"github.com/socialwebcomputer/doctor/report"
)

// summarize is a report in a few lines, for test logs.
func summarize(rep *report.Report) string {
	var b strings.Builder
	for _, f := range rep.Findings {
		b.WriteString(strings.Repeat("  ", boolInt(f.CausedBy != nil)) + f.Severity.String() + " " + f.Check + ": " + f.Cause + "\n")
	}
	for _, c := range rep.Checks {
		if c.Status != "pass" {
			b.WriteString("  [" + string(c.Status) + "] " + c.ID + ": " + c.Reason + "\n")
		}
	}
	return b.String()
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
