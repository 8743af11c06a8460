package e2e

import (
	"os"
	"syscall"
	"testing"

	"github.com/socialwebcomputer/doctor/testkit/testproc"
)

// startRunnerAs runs a copy of this test binary as <dir>/gitlab-runner
// under uid 1001 with primary group 1001 and fsGroup-like supplementary
// group 1001, as the document's Deployment runs the runner; dir must be
// traversable by that uid. It returns the pid once /proc shows "run".
// Its working directory is dir, one uid 1001 may enter, as a service's is:
// what doctor starts for the runner (an exec credential plugin) starts there.
// The real fleeting runner's cases are the fleeting checks' own
// (checks/fleetingconnector, fleetingplugin, fleetingstate: TestRealProcess).
func startRunnerAs(t *testing.T, dir string, args, env []string) int {
	t.Helper()
	return testproc.Start(t, testproc.Runner{Helper: "TestCLIHelperProcess", Dir: dir, Args: args, Env: env,
		Cred: &syscall.Credential{Uid: testproc.RunnerUID, Gid: testproc.RunnerUID, Groups: []uint32{testproc.RunnerUID}}})
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) { testproc.CopyFile(t, from, to, mode) }

// openDir is a temporary directory uid 1001 can traverse (testproc.OpenDir).
func openDir(t *testing.T) string { return testproc.OpenDir(t) }
