package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/report"
	"github.com/socialwebcomputer/doctor/testkit/cmdtest"
)

// runDoctor runs doctor with args and returns the exit code, stdout and stderr.
func runDoctor(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := Main(args, IO{Out: &out, Err: &errb, Getenv: func(string) string { return "" }})
	return code, out.String(), errb.String()
}

// The exit code is the worst finding's, and the same in every format
// (istioctl #35054 is the bug this guards against).
func TestExitCodeIsTheSameInEveryFormat(t *testing.T) {
	for fixture, want := range map[string]int{
		"healthy":                   report.ExitOK,
		"cert-long-lived":           report.ExitOK, // an info finding does not fail a run
		"kubeconfig-world-readable": report.ExitWarning,
		"cert-expired":              report.ExitError,
		"host-set":                  report.ExitError,
	} {
		root := cmdtest.FixtureRoot(t, fixture)
		for _, format := range []string{"table", "json", "markdown", "md"} {
			code, _, stderr := runDoctor("run", "--root", root, "--now", "2026-11-29T12:00:00Z", "--offline", "-o", format)
			if code != want {
				t.Errorf("%s -o %s: exit %d, want %d (%s)", fixture, format, code, want, stderr)
			}
		}
	}
}

func TestCannotRunIsExit3(t *testing.T) {
	good := cmdtest.FixtureRoot(t, "healthy")
	file := filepath.Join(t.TempDir(), "file")
	cmdtest.NoErr(t, os.WriteFile(file, nil, 0o644))
	loop := filepath.Join(t.TempDir(), "loop")
	cmdtest.NoErr(t, os.Symlink("loop", loop))
	for name, args := range map[string][]string{
		"no command":            {},
		"unknown command":       {"frobnicate"},
		"bad flag":              {"run", "--no-such-flag"},
		"bad flag value":        {"run", "--runner-pid", "many"},
		"unknown format":        {"run", "--root", good, "--offline", "-o", "xml"},
		"bad --now":             {"run", "--root", good, "--now", "yesterday"},
		"stray argument":        {"run", "--root", good, "extra"},
		"missing --root":        {"run", "--root", filepath.Join(t.TempDir(), "nope")},
		"--root is a file":      {"run", "--root", file},
		"--root is a loop":      {"run", "--root", loop},
		"--only unknown check":  {"run", "--root", good, "--offline", "--only", "no-such-check"},
		"--skip unknown check":  {"run", "--root", good, "--offline", "--skip", "no-such-check"},
		"--ignore unknown":      {"run", "--root", good, "--ignore", "no-such-check:because"},
		"--ignore no reason":    {"run", "--root", good, "--ignore", "cert-expiry"},
		"--ignore empty reason": {"run", "--root", good, "--ignore", "cert-expiry: "},
		"explain unknown":       {"explain", "no-such-check"},
		"explain no argument":   {"explain"},
	} {
		code, out, stderr := runDoctor(args...)
		if code != report.ExitCantRun {
			t.Errorf("%s: exit %d, want %d; stdout %q", name, code, report.ExitCantRun, out)
		}
		if stderr == "" {
			t.Errorf("%s: exit 3 with nothing on stderr", name)
		}
	}
}

// A 0000 --root is exit 3 for an ordinary user. Root reads through modes,
// so there it is a readable root; TestCannotRunIsExit3 covers the roots
// nobody can read (missing, a file, a symlink loop).
func TestUnreadableRootIsExit3(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "root")
	cmdtest.NoErr(t, os.Mkdir(dir, 0o000))
	code, _, stderr := runDoctor("run", "--root", dir)
	if os.Geteuid() == 0 {
		// Root reads a 0000 directory; that is a readable root. It holds
		// nothing, so no check runs: exit 3 for that reason, said in the
		// report, not as a refused --root.
		if strings.Contains(stderr, "--root") {
			t.Errorf("root was refused a directory it can read: %s", stderr)
		}
		return
	}
	if code != report.ExitCantRun {
		t.Errorf("exit %d for an unreadable --root, want 3", code)
	}
}

func TestIgnoreHidesFindingsAndReportsStaleOnes(t *testing.T) {
	root := cmdtest.FixtureRoot(t, "kubeconfig-world-readable")
	code, out, _ := runDoctor("run", "--root", root, "--now", "2026-11-29T12:00:00Z", "--offline",
		"--ignore", "kubeconfig-file:shared host, accepted until the move",
		"--ignore", "cert-expiry:nothing to hide")
	if code != report.ExitOK {
		t.Errorf("exit %d with the only finding ignored, want 0", code)
	}
	for _, want := range []string{
		"ignore kubeconfig-file (--ignore) hid 1 finding: shared host, accepted until the move",
		"ignore cert-expiry (--ignore) matched nothing (nothing to hide): its check ran and found nothing it names: remove it",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table does not say %q:\n%s", want, out)
		}
	}
	_, js, _ := runDoctor("run", "--root", root, "--now", "2026-11-29T12:00:00Z", "--offline", "-o", "json",
		"--ignore", "kubeconfig-file:shared host")
	var rep report.Report
	cmdtest.NoErr(t, json.Unmarshal([]byte(js), &rep))
	if len(rep.Findings) != 0 || len(rep.Ignores) != 1 || rep.Ignores[0].Matched != 1 {
		t.Errorf("json: findings %d, ignores %+v", len(rep.Findings), rep.Ignores)
	}
}

func TestOnlyAndSkipThroughTheCLI(t *testing.T) {
	root := cmdtest.FixtureRoot(t, "cert-expired")
	code, js, stderr := runDoctor("run", "--root", root, "--now", "2026-11-29T12:00:00Z", "--offline", "-o", "json", "--only", "config-lint")
	var rep report.Report
	cmdtest.NoErr(t, json.Unmarshal([]byte(js), &rep))
	if code != report.ExitOK || len(rep.Findings) != 0 {
		t.Errorf("--only config-lint: exit %d, %d findings (%s)", code, len(rep.Findings), stderr)
	}
	for _, c := range rep.Checks {
		if c.ID == "cert-expiry" {
			t.Error("--only config-lint ran cert-expiry")
		}
	}
	code, _, _ = runDoctor("run", "--root", root, "--now", "2026-11-29T12:00:00Z", "--offline", "--skip", "cert-expiry")
	if code != report.ExitOK {
		t.Errorf("--skip cert-expiry: exit %d, want 0", code)
	}
}

func TestChecksAndExplain(t *testing.T) {
	code, out, _ := runDoctor("checks")
	if code != report.ExitOK || !strings.Contains(out, "cert-expiry") {
		t.Errorf("checks: exit %d\n%s", code, out)
	}
	code, out, _ = runDoctor("explain", "runner-kubeconfig-env")
	for _, want := range []string{"Cause:", "Symptom:", "Fix:", "Verify:"} {
		if code != report.ExitOK || !strings.Contains(out, want) {
			t.Errorf("explain: exit %d, no %q\n%s", code, want, out)
		}
	}
	// explain is the documentation on the host: it points at a README
	// anchor the host does not have never, and at a site when given one.
	if strings.Contains(out, "README.md") || strings.Contains(out, "Docs:") {
		t.Errorf("explain points elsewhere without --docs-url:\n%s", out)
	}
	_, out, _ = runDoctor("explain", "runner-kubeconfig-env", "--docs-url", "https://wiki.example.invalid/doctor/{id}")
	if !strings.Contains(out, "Docs: https://wiki.example.invalid/doctor/runner-kubeconfig-env\n") {
		t.Errorf("explain --docs-url:\n%s", out)
	}
}

// A finding points at doctor explain ID, which works wherever doctor does;
// with --docs-url (or DOCTOR_DOCS_URL) at that site's page, in the table,
// markdown and JSON.
func TestDocsPointers(t *testing.T) {
	root := cmdtest.FixtureRoot(t, "cert-expired")
	base := []string{"run", "--root", root, "--offline", "--now", "2026-11-29T12:00:00Z"}
	_, out, _ := runDoctor(base...)
	if !strings.Contains(out, "see doctor explain cert-expiry") || strings.Contains(out, "README.md") {
		t.Errorf("table without a docs URL:\n%s", out)
	}
	_, out, _ = runDoctor(append(base, "--docs-url", "https://wiki.example.invalid/doctor")...)
	if !strings.Contains(out, "see https://wiki.example.invalid/doctor#cert-expiry") {
		t.Errorf("table with --docs-url:\n%s", out)
	}
	var js bytes.Buffer
	Main(append(base, "-o", "json"), IO{Out: &js, Err: io.Discard, Getenv: func(k string) string {
		if k == "DOCTOR_DOCS_URL" {
			return "https://wiki.example.invalid/doctor"
		}
		return ""
	}})
	if !strings.Contains(js.String(), `"docs": "https://wiki.example.invalid/doctor#cert-expiry"`) {
		t.Errorf("json with DOCTOR_DOCS_URL:\n%s", js.String())
	}
	_, md, _ := runDoctor(append(base, "-o", "markdown", "--docs-url", "https://wiki.example.invalid/doctor")...)
	if !strings.Contains(md, "About this check: `doctor explain cert-expiry`, `https://wiki.example.invalid/doctor#cert-expiry`") {
		t.Errorf("markdown with --docs-url:\n%s", md)
	}
}
