package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/cmd/doctor/cli"
	"github.com/socialwebcomputer/doctor/report"
	"github.com/socialwebcomputer/doctor/testkit/cmdtest"
)

// The health cron: --textfile writes the metrics, --state remembers the
// findings, and --changes-only prints only what changed while the exit code
// still reflects every finding.
func TestCronStateAndChangesOnly(t *testing.T) {
	dir := t.TempDir()
	stateFile, prom := filepath.Join(dir, "state.json"), filepath.Join(dir, "doctor.prom")
	expired, healthy := cmdtest.FixtureRoot(t, "cert-expired"), cmdtest.FixtureRoot(t, "healthy")
	run := func(root string) (int, *report.Report) {
		t.Helper()
		code, out, stderr := runDoctor("run", "--root", root, "--now", "2026-11-29T12:00:00Z", "--offline", "-o", "json",
			"--state", stateFile, "--changes-only", "--textfile", prom)
		var rep report.Report
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("exit %d, %s: %v\n%s", code, stderr, err, out)
		}
		return code, &rep
	}
	changes := func(rep *report.Report) []string {
		var out []string
		for _, f := range rep.Findings {
			out = append(out, f.Change+" "+f.Check)
		}
		return out
	}

	code, rep := run(expired)
	if code != report.ExitError || strings.Join(changes(rep), ",") != "new cert-expiry" {
		t.Errorf("first run: exit %d, changes %v; want exit 2 and the expired certificate new", code, changes(rep))
	}
	b, err := os.ReadFile(prom)
	if err != nil || !strings.Contains(string(b), `doctor_check_status{check="cert-expiry",runner="kcp-tenant-kubernetes"} 0`) {
		t.Errorf("textfile: %v\n%s", err, b)
	}
	// The same problem again: nothing to mail, and still exit 2.
	code, rep = run(expired)
	if code != report.ExitError || len(rep.Findings) != 0 {
		t.Errorf("second run: exit %d, changes %v; want exit 2 and no change", code, changes(rep))
	}
	// Fixed: the finding is resolved, once.
	code, rep = run(healthy)
	if code != report.ExitOK || strings.Join(changes(rep), ",") != "resolved cert-expiry" {
		t.Errorf("after the fix: exit %d, changes %v; want exit 0 and cert-expiry resolved", code, changes(rep))
	}
	if code, rep = run(healthy); len(rep.Findings) != 0 {
		t.Errorf("healthy again: exit %d, changes %v; want none", code, changes(rep))
	}
}

// The cron's mail as it reads: with nothing new or resolved it says what
// stands and since when, and prints no finding; a resolved finding has the
// pass glyph, the time it was last seen, and no fix to apply.
func TestChangesOnlyTable(t *testing.T) {
	stateFile := filepath.Join(t.TempDir(), "state.json")
	expired, healthy := cmdtest.FixtureRoot(t, "cert-expired"), cmdtest.FixtureRoot(t, "healthy")
	run := func(root, now string) string {
		t.Helper()
		var out, errb strings.Builder
		cli.Main([]string{"run", "--root", root, "--now", now, "--offline", "--state", stateFile, "--changes-only"},
			cli.IO{Out: &out, Err: &errb, Width: 80, Getenv: func(k string) string {
				if k == "LANG" {
					return "C.UTF-8"
				}
				return ""
			}})
		if errb.Len() > 0 {
			t.Errorf("stderr %q", errb.String())
		}
		return out.String()
	}
	if out := run(expired, "2026-11-29T12:00:00Z"); !strings.Contains(out, "× CRITICAL") {
		t.Errorf("first run: the new finding is not printed:\n%s", out)
	}
	out := run(expired, "2026-11-29T12:05:00Z")
	if !strings.HasPrefix(out, "No changes (1 critical, unchanged since 2026-11-29T12:00Z).\n") ||
		strings.Contains(out, "CRITICAL") || strings.Contains(out, ": fix") {
		t.Errorf("unchanged: want only what stands, since when:\n%s", out)
	}
	out = run(healthy, "2026-11-29T12:10:00Z")
	if !strings.Contains(out, "√ RESOLVED") || !strings.Contains(flat(out), "Resolved since 2026-11-29T12:05Z: The kubeconfig's client certificate is valid now") ||
		strings.Contains(out, ": fix") || strings.Contains(out, "None: resolved") || strings.Contains(out, "# verify") {
		t.Errorf("resolved: want the pass glyph, the time and no fix:\n%s", out)
	}
	if out := run(healthy, "2026-11-29T12:15:00Z"); !strings.HasPrefix(out, "No changes (no findings).\n") {
		t.Errorf("healthy again:\n%s", out)
	}
}

func TestChangesOnlyNeedsState(t *testing.T) {
	code, _, stderr := runDoctor("run", "--root", cmdtest.FixtureRoot(t, "healthy"), "--offline", "--changes-only")
	if code != report.ExitCantRun || !strings.Contains(stderr, "--changes-only needs --state FILE") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

func TestBadStateFileIsExit3BeforeTheRun(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "state.json")
	cmdtest.NoErr(t, os.WriteFile(bad, []byte("not json"), 0o600))
	code, out, stderr := runDoctor("run", "--root", cmdtest.FixtureRoot(t, "healthy"), "--offline", "--state", bad)
	if code != report.ExitCantRun || out != "" || !strings.Contains(stderr, bad) {
		t.Errorf("exit %d, stdout %q, stderr %q: want exit 3 naming the file, no report", code, out, stderr)
	}
}
