package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/socialwebcomputer/doctor/report"
	"github.com/socialwebcomputer/doctor/testkit/cmdtest"
)

// A run that proved nothing never exits 0 (issue: the three uses; the
// health cron reads the exit code alone).
func TestHonestExitCodes(t *testing.T) {
	now := "2026-11-29T12:00:00Z"
	expired := cmdtest.FixtureRoot(t, "cert-expired")
	healthy := cmdtest.FixtureRoot(t, "healthy")
	fifo := cmdtest.FixtureRoot(t, "healthy")
	cfg := filepath.Join(fifo, "etc/gitlab-runner/config.toml")
	cmdtest.NoErr(t, os.Remove(cfg))
	cmdtest.NoErr(t, syscall.Mkfifo(cfg, 0o600))

	for _, tc := range []struct {
		name       string
		args       []string
		want       int
		incomplete string // text one of Summary.Incomplete must carry
	}{
		// Every check is cut off by the deadline: nothing proved, although
		// the fixture has a critical finding.
		{"--timeout 1us on a critical fixture", []string{"--root", expired, "--timeout", "1us"}, report.ExitCantRun, "no check ran"},
		// A check the operator named was skipped: not a healthy answer.
		// (what it requires ran, so something was proved: 1, not 3)
		{"--only a skipped check", []string{"--root", healthy, "--only", "api-auth"}, report.ExitWarning, "--only api-auth did not run"},
		{"--only one that ran and one skipped", []string{"--root", healthy, "--only", "config-decode,api-auth"}, report.ExitWarning, "--only api-auth did not run"},
		// The healthy fixture, complete: 0.
		{"healthy", []string{"--root", healthy}, report.ExitOK, ""},
		// A FIFO where config.toml should be is a finding, and does not hang.
		{"a FIFO config.toml", []string{"--root", fifo}, report.ExitError, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"run", "--now", now, "--offline", "-o", "json"}, tc.args...)
			code, out, stderr := runDoctor(args...)
			if code != tc.want {
				t.Errorf("exit %d, want %d; stderr %s\n%s", code, tc.want, stderr, out)
			}
			var rep report.Report
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatalf("json: %v\n%s", err, out)
			}
			if tc.incomplete == "" && len(rep.Summary.Incomplete) > 0 {
				t.Errorf("incomplete %q, want none", rep.Summary.Incomplete)
			}
			if tc.incomplete != "" && !slices.ContainsFunc(rep.Summary.Incomplete, func(s string) bool { return strings.Contains(s, tc.incomplete) }) {
				t.Errorf("incomplete %q, want one saying %q", rep.Summary.Incomplete, tc.incomplete)
			}
			// The table says how much was proved, and the same exit code.
			tcode, table, _ := runDoctor(append(args[:len(args)-2:len(args)-2], append([]string{"-o", "table"}, tc.args...)...)...)
			if tcode != code {
				t.Errorf("table exit %d, json exit %d", tcode, code)
			}
			if want := " checks ran: "; !strings.Contains(table, want) {
				t.Errorf("table summary does not say how many checks ran:\n%s", table)
			}
		})
	}
}
