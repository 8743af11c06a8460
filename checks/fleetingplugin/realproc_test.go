package fleetingplugin_test

import (
	"testing"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/checktest"
	"github.com/socialwebcomputer/doctor/checks/fleetingplugin"
	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/testkit/testproc"
)

// TestRunnerChild is the real runner's body, not a test (testproc.Child).
func TestRunnerChild(t *testing.T) { testproc.Child() }

// TestRealProcess finds the plugin on the PATH of a real runner started as
// uid 1001: the PATH is the one in the child's own /proc/<pid>/environ.
func TestRealProcess(t *testing.T) {
	host := testproc.NewFleeting(t)
	host.Write(t, host.Persistent)
	pid := host.Start(t, "TestRunnerChild", host.Dir)
	r := checktest.ForRunner(t, checktest.Check(t, fleetingplugin.Check, checktest.Root("/"), checktest.Offline(),
		checktest.Env(func(e *hostio.Env) { e.RunnerPID = pid })), 1)
	checktest.WantStatus(t, r, checks.StatusPass, "")
	checktest.WantNoFinding(t, r)
}
