package fleetingconnector_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/checktest"
	"github.com/socialwebcomputer/doctor/checks/fleetingconnector"
	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/testkit/testproc"
)

// TestRunnerChild is the real runner's body, not a test (testproc.Child).
func TestRunnerChild(t *testing.T) { testproc.Child() }

// TestRealProcess judges the connector key against a real runner started
// as uid 1001 with supplementary group 1001: the groups are the ones the
// kernel lists in /proc/<pid>/status.
func TestRealProcess(t *testing.T) {
	host := testproc.NewFleeting(t)
	host.Write(t, host.Persistent)
	pid := host.Start(t, "TestRunnerChild", host.Dir)
	check := func() checks.CheckResult {
		return checktest.ForRunner(t, checktest.Check(t, fleetingconnector.Check, checktest.Root("/"), checktest.Offline(),
			checktest.Env(func(e *hostio.Env) { e.RunnerPID = pid })), 1)
	}

	// root:1001 0440: readable through group 1001 only.
	r := check()
	checktest.WantStatus(t, r, checks.StatusPass, "")
	checktest.WantNoFinding(t, r)

	// Root's 0400: the same uid and groups may not read it.
	if err := os.Chmod(host.KeyFile, 0o400); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(host.KeyFile, 0, 0); err != nil {
		t.Fatal(err)
	}
	r = check()
	checktest.WantStatus(t, r, checks.StatusFail, "")
	if len(r.Findings) != 1 {
		t.Fatalf("want one finding:\n%s", checktest.Text(r))
	}
	checktest.WantFinding(t, r, checks.Error, fmt.Sprintf("pid %d (uid 1001", pid),
		"groups 1001) cannot read the connector key "+host.KeyFile, "mode 0400 owner 0:0")
}
