package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/report"
	"github.com/socialwebcomputer/doctor/testkit/cmdtest"
	"github.com/socialwebcomputer/doctor/testkit/fixture"
)

func jsonRun(t *testing.T, args ...string) (*report.Report, int) {
	t.Helper()
	code, out, errs := runDoctor(append(args, "-o", "json")...)
	var rep report.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("doctor %q: exit %d, %s: %v\n%s", args, code, errs, err, out)
	}
	return &rep, code
}

func findingOf(rep *report.Report, check string) *report.Finding {
	for i := range rep.Findings {
		if rep.Findings[i].Check == check {
			return &rep.Findings[i]
		}
	}
	return nil
}

// --ignore ID[:RUNNER][@FINGERPRINT]:REASON through the CLI, on a fixture
// whose cert-expiry finding is runner #1's and kubeconfig-file's host-wide.
func TestIgnoreFormsThroughTheCLI(t *testing.T) {
	root := cmdtest.FixtureRoot(t, "multi-cause-expired-cert-world-readable")
	base := []string{"run", "--root", root, "--offline", "--now", "2026-11-29T12:00:00Z"}
	plain, code := jsonRun(t, base...)
	if code != report.ExitError || findingOf(plain, "cert-expiry") == nil || findingOf(plain, "kubeconfig-file") == nil {
		t.Fatalf("the fixture changed: exit %d, %s", code, fixture.ChecksOf(plain))
	}
	certFP, fileFP := findingOf(plain, "cert-expiry").Fingerprint, findingOf(plain, "kubeconfig-file").Fingerprint
	for _, f := range plain.Findings {
		if !report.ValidFingerprint(f.Fingerprint) {
			t.Errorf("%s has fingerprint %q", f.Check, f.Fingerprint)
		}
	}
	// The fingerprint is not the wording: an hour later the cause reads
	// "2h0m ago", the fingerprint is the same.
	later, _ := jsonRun(t, "run", "--root", root, "--offline", "--now", "2026-11-29T13:00:00Z")
	if f := findingOf(later, "cert-expiry"); f == nil || f.Fingerprint != certFP || f.Cause == findingOf(plain, "cert-expiry").Cause {
		t.Errorf("cert-expiry an hour later: %+v, want the fingerprint %s and another cause", f, certFP)
	}

	for _, tc := range []struct {
		ignore  string
		hidden  []string // checks whose findings are gone
		shown   []string
		status  string
		matched int
		note    string
	}{
		{"cert-expiry:known", []string{"cert-expiry"}, []string{"kubeconfig-file"}, report.IgnoreMatched, 1, ""},
		{"cert-expiry:1:known", []string{"cert-expiry"}, []string{"kubeconfig-file"}, report.IgnoreMatched, 1, ""},
		{"cert-expiry:kcp-tenant-kubernetes:known", []string{"cert-expiry"}, nil, report.IgnoreMatched, 1, ""},
		{"cert-expiry:*:known: see OPS-12", []string{"cert-expiry"}, nil, report.IgnoreMatched, 1, ""},
		{"cert-expiry@" + certFP + ":known", []string{"cert-expiry"}, []string{"kubeconfig-file"}, report.IgnoreMatched, 1, ""},
		{"cert-expiry:1@" + certFP + ":known", []string{"cert-expiry"}, nil, report.IgnoreMatched, 1, ""},
		{"kubeconfig-file@" + fileFP + ":shared host", []string{"kubeconfig-file"}, []string{"cert-expiry"}, report.IgnoreMatched, 1, ""},
		{"cert-expiry@000000000000:known", nil, []string{"cert-expiry"}, report.IgnoreMatchedNothing, 0, "remove it"},
		{"cert-expiry:2:known", nil, []string{"cert-expiry"}, report.IgnoreNotEvaluated, 0, `no runner "2" was diagnosed`},
		// Two colons: the first field after the ID is the runner, so a
		// reason with a colon in it, without one, names no runner.
		{"cert-expiry:see: OPS-12", nil, []string{"cert-expiry"}, report.IgnoreNotEvaluated, 0, "cert-expiry:*:reason"},
		{"api-auth:offline anyway", nil, nil, report.IgnoreNotEvaluated, 0, "skipped: offline"},
		{"config-lint:nothing to hide", nil, nil, report.IgnoreMatchedNothing, 0, "remove it"},
	} {
		t.Run(tc.ignore, func(t *testing.T) {
			rep, code := jsonRun(t, append(base, "--ignore", tc.ignore)...)
			if code != rep.Summary.ExitCode {
				t.Errorf("exit %d, summary %d", code, rep.Summary.ExitCode)
			}
			for _, c := range tc.hidden {
				if findingOf(rep, c) != nil {
					t.Errorf("%s's finding is not hidden", c)
				}
			}
			for _, c := range tc.shown {
				if findingOf(rep, c) == nil {
					t.Errorf("%s's finding is hidden", c)
				}
			}
			ig := rep.Ignores[0]
			if ig.Status != tc.status || ig.Matched != tc.matched || !strings.Contains(ig.Note, tc.note) || ig.Source != "--ignore" {
				t.Errorf("ignore %+v, want status %s, matched %d, a note saying %q", ig, tc.status, tc.matched, tc.note)
			}
		})
	}
}

// The .doctor.yaml fixture: the same statuses through JSON, the warning
// in the table, and the working directory's .doctor.yaml read by default.
func TestDoctorYAML(t *testing.T) {
	dir := filepath.Join(cmdtest.Fixtures, "doctor-yaml-expired-ignore")
	var sc fixture.Scenario
	raw, err := os.ReadFile(filepath.Join(dir, "scenario.json"))
	cmdtest.NoErr(t, err)
	cmdtest.NoErr(t, json.Unmarshal(raw, &sc))
	root := fixture.LayRoot(t, dir, &sc)
	cfg, err := filepath.Abs(filepath.Join(dir, "doctor.yaml"))
	cmdtest.NoErr(t, err)
	args := []string{"run", "--root", root, "--offline", "--now", sc.Now}
	rep, code := jsonRun(t, append(args, "--config-file", cfg)...)
	if code != report.ExitWarning || rep.Summary.ExpiredIgnores != 1 {
		t.Errorf("exit %d, expired ignores %d; want 1, 1", code, rep.Summary.ExpiredIgnores)
	}
	want := map[string]string{"cert-expiry": report.IgnoreExpired, "kubeconfig-file": report.IgnoreMatchedNothing, "api-auth": report.IgnoreNotEvaluated}
	if len(rep.Ignores) != len(want) {
		t.Fatalf("ignores %+v", rep.Ignores)
	}
	for _, ig := range rep.Ignores {
		if ig.Status != want[ig.Check] || ig.Source != cfg {
			t.Errorf("ignore %+v: want status %s from %s", ig, want[ig.Check], cfg)
		}
	}
	if findingOf(rep, "cert-expiry") == nil {
		t.Error("an expired ignore still hides its finding")
	}
	// Without the expiry the same file hides it, and the run exits 0.
	b, err := os.ReadFile(cfg)
	cmdtest.NoErr(t, err)
	fresh := filepath.Join(t.TempDir(), "fresh.yaml")
	cmdtest.NoErr(t, os.WriteFile(fresh, []byte(strings.Replace(string(b), "expires: 2026-11-01", "expires: 2026-12-01", 1)), 0o644))
	rep, code = jsonRun(t, append(args, "--config-file", fresh)...)
	if code != report.ExitOK || findingOf(rep, "cert-expiry") != nil || rep.Ignores[0].Status != report.IgnoreMatched {
		t.Errorf("a current ignore: exit %d, ignores %+v", code, rep.Ignores)
	}
	// .doctor.yaml in the working directory is read without a flag.
	wd, err := os.Getwd()
	cmdtest.NoErr(t, err)
	cwd := t.TempDir()
	cmdtest.NoErr(t, os.WriteFile(filepath.Join(cwd, DoctorFile), b, 0o644))
	cmdtest.NoErr(t, os.Chdir(cwd))
	defer func() { cmdtest.NoErr(t, os.Chdir(wd)) }()
	rep, code = jsonRun(t, args...)
	if code != report.ExitWarning || len(rep.Ignores) != 3 || rep.Ignores[0].Source != DoctorFile {
		t.Errorf("from the working directory: exit %d, ignores %+v", code, rep.Ignores)
	}
}
