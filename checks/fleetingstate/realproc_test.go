package fleetingstate_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/checktest"
	"github.com/socialwebcomputer/doctor/checks/fleetingstate"
	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/testkit/testproc"
)

// TestRunnerChild is the real runner's body, not a test (testproc.Child).
func TestRunnerChild(t *testing.T) { testproc.Child() }

// TestRealProcess judges the state directory of a real runner against the
// mount the kernel lists in its /proc/<pid>/mountinfo, which must be the
// one findmnt names.
func TestRealProcess(t *testing.T) {
	host := testproc.NewFleeting(t)
	check := func(pid int) checks.CheckResult {
		return checktest.ForRunner(t, checktest.Check(t, fleetingstate.Check, checktest.Root("/"), checktest.Offline(),
			checktest.Env(func(e *hostio.Env) { e.RunnerPID = pid })), 1)
	}

	// The state on the test's disk: nothing to report, unless that disk
	// is itself tmpfs or overlay here.
	target, fstype := testproc.Findmnt(t, host.Persistent)
	host.Write(t, host.Persistent)
	r := check(host.Start(t, "TestRunnerChild", host.Dir))
	checktest.WantStatus(t, r, checks.StatusPass, "")
	if fstype == "tmpfs" || fstype == "overlay" {
		t.Logf("%s is on %s %s here: fleeting-state rightly warns", host.Persistent, fstype, target)
	} else {
		checktest.WantNoFinding(t, r)
	}

	// The state on /dev/shm: the kernel's mount for it is tmpfs, and the
	// finding names the mount findmnt names.
	shm, err := os.MkdirTemp("/dev/shm", "doctor-state-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(shm) })
	if err := os.Chown(shm, testproc.RunnerUID, testproc.RunnerUID); err != nil {
		t.Fatal(err)
	}
	target, fstype = testproc.Findmnt(t, shm)
	if fstype != "tmpfs" {
		t.Fatalf("findmnt says %s is on %s, not tmpfs", shm, fstype)
	}
	host.Write(t, shm)
	pid := host.Start(t, "TestRunnerChild", testproc.OpenDir(t))
	r = check(pid)
	if len(r.Findings) != 1 {
		t.Fatalf("want one finding:\n%s", checktest.Text(r))
	}
	checktest.WantFinding(t, r, checks.Warning, "state_storage.dir "+shm+" is on tmpfs",
		fmt.Sprintf("/proc/%d/mountinfo:", pid), " on "+target+" type tmpfs")
}
