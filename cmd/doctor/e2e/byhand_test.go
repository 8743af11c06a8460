package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/report"
	"github.com/socialwebcomputer/doctor/testkit/cmdtest"
	"github.com/socialwebcomputer/doctor/testkit/fixture"
)

// TestFixturesByHand runs every fixture as docs/development.md tells a
// reader to, in a directory laid out like a checkout (./doctor built from
// cmd/doctor, testdata/ beside it): `go run ./testdata/lay
// testdata/fixtures/NAME DEST` as its own process, then the doctor command
// it prints, through sh, with the built binary. The exit code must be the
// one lay prints and the scenario's, and the report (the same command with
// -o json) must say what scenario.json records: what TestScenarios asserts
// of its in-process run, here of what a reader types.
func TestFixturesByHand(t *testing.T) {
	work := t.TempDir()
	copyFile(t, cmdtest.BuildDoctor(t), filepath.Join(work, "doctor"), 0o755)
	lay := filepath.Join(t.TempDir(), "lay")
	if out, err := exec.Command("go", "build", "-o", lay, "../../../testdata/lay").CombinedOutput(); err != nil {
		t.Fatalf("go build ./testdata/lay: %v\n%s", err, out)
	}
	cmdtest.NoErr(t, os.Symlink(mustAbs(t, "../../../testdata"), filepath.Join(work, "testdata")))
	// A reader's shell, without this test's environment: no KUBECONFIG,
	// COLUMNS or locale of the machine's, a HOME of its own.
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), hostio.LoopbackOnlyVar + "=1"}

	// A unix socket's path is at most 107 bytes (sun_path): the fixtures
	// are laid under a short directory, as /tmp/NAME would be by hand.
	short, err := os.MkdirTemp("", "fx")
	cmdtest.NoErr(t, err)
	t.Cleanup(func() { os.RemoveAll(short) })

	for _, dir := range scenarioDirs(t) {
		name := filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			sc := fixture.Load(t, dir)
			laid := exec.Command(lay, "testdata/fixtures/"+name, filepath.Join(short, name))
			laid.Dir, laid.Env = work, env
			out, err := laid.Output()
			if err != nil {
				t.Fatalf("lay: %v\n%s", err, stderrOf(err))
			}
			command, exit := documentedCommand(t, string(out))
			if exit != sc.Want.Exit {
				t.Errorf("lay prints exit %d, scenario.json says %d", exit, sc.Want.Exit)
			}
			run := exec.Command("sh", "-c", command+" -o json")
			run.Dir, run.Env = work, env
			stdout, err := run.Output()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != exit {
				t.Errorf("%s: exit %d, documented %d; stderr: %s", command, code, exit, stderrOf(err))
			}
			var rep report.Report
			if err := json.Unmarshal(stdout, &rep); err != nil {
				t.Fatalf("%s -o json: %v\n%s", command, err, stdout)
			}
			fixture.AssertWant(t, &rep, sc.Want)
			fixture.AssertRecorded(t, &rep, sc.Want)
		})
	}
}

// documentedCommand is the ./doctor line lay printed and the exit code of
// the `echo $?    # N` line after it.
func documentedCommand(t *testing.T, out string) (string, int) {
	t.Helper()
	command, exit := "", -1
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "./doctor ") && command == "" {
			command = l
		}
		if rest, ok := strings.CutPrefix(l, "echo $?    # "); ok {
			n, err := strconv.Atoi(rest)
			if err != nil {
				t.Fatalf("lay's exit line %q: %v", l, err)
			}
			exit = n
		}
	}
	if command == "" || exit < 0 {
		t.Fatalf("lay printed no ./doctor line and exit code:\n%s", out)
	}
	return command, exit
}

func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}
