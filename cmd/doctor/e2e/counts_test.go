package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/report"
	"github.com/socialwebcomputer/doctor/testkit/closedport"
	"github.com/socialwebcomputer/doctor/testkit/cmdtest"
)

// assertCountsAddUp fails when the summary's counts do not add up: every
// check that ran passed, failed or could not check (ran = pass + fail +
// unknown), and the others were skipped (checks = ran + skipped), as the
// table's "N of M checks ran: P pass, F fail, U unknown, S skipped" says.
func assertCountsAddUp(t *testing.T, s report.Summary) {
	t.Helper()
	if s.Ran != s.Pass+s.Fail+s.Unknown || s.Checks != s.Ran+s.Skipped {
		t.Errorf("counts do not add up: %d of %d ran: %d pass, %d fail, %d unknown, %d skipped", s.Ran, s.Checks, s.Pass, s.Fail, s.Unknown, s.Skipped)
	}
}

// The counts add up on the paths that have checks which could not check:
// this host with no --root (no runner here: runner-process fails and
// kubeconfig-file is unknown), and --kubeconfig to an apiserver that
// refuses connections. Every fixture (offline, TestScenarios) and every
// integration scenario (runReport) asserts the same.
func TestSummaryCountsAddUpOnEveryPath(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig.yaml")
	cmdtest.NoErr(t, os.WriteFile(kubeconfig, []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: refused
  cluster: {server: "https://127.0.0.1:%d"}
users:
- name: u
  user: {token: not-a-secret}
contexts:
- name: refused
  context: {cluster: refused, user: u}
current-context: refused
`, closedport.Reserve(t))), 0o600))
	for _, args := range [][]string{
		{"run", "--timeout", "20s"},
		{"run", "--timeout", "20s", "--kubeconfig", kubeconfig},
		{"run", "--root", cmdtest.FixtureRoot(t, "docker-no-socket"), "--offline", "--now", "2026-11-29T12:00:00Z"},
	} {
		t.Run(strings.Join(args[1:], " "), func(t *testing.T) {
			rep, _ := runReport(t, append(args, "-o", "json")...)
			assertCountsAddUp(t, rep.Summary)
			if rep.Summary.Unknown == 0 {
				t.Errorf("no check could not check: the path tests nothing\n%s", summarize(rep))
			}
			// The table says the same.
			_, table, _ := runDoctor(args...)
			s := rep.Summary
			want := fmt.Sprintf("%d of %d checks ran: %d pass, %d fail, %d unknown, %d skipped.", s.Ran, s.Checks, s.Pass, s.Fail, s.Unknown, s.Skipped)
			if !strings.Contains(flat(table), want) {
				t.Errorf("the table lacks %q:\n%s", want, table)
			}
		})
	}
}
