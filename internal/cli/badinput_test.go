package cli

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/report"
)

const (
	configPath = "/etc/gitlab-runner/config.toml"
	kubePath   = "/etc/gitlab-runner/tenant-ci/kubeconfig.yaml"
)

// garbage is fixed pseudo-random bytes: binary, not UTF-8, not TOML or YAML.
func garbage() []byte {
	r := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, 4096)
	for i := range b {
		b[i] = byte(r.UintN(256))
	}
	return b
}

// badInputs replace a file doctor reads with something that is not one.
var badInputs = map[string]func(t *testing.T, p string){
	"binary garbage": func(t *testing.T, p string) { writeSpoiled(t, p, garbage()) },
	"empty":          func(t *testing.T, p string) { writeSpoiled(t, p, nil) },
	"over 10 MiB": func(t *testing.T, p string) {
		writeSpoiled(t, p, bytes.Repeat([]byte("# padding\n"), checks.MaxFileSize/10+1))
	},
	"a directory": func(t *testing.T, p string) {
		noErr(t, os.Remove(p))
		noErr(t, os.Mkdir(p, 0o700))
	},
	"a symlink loop": func(t *testing.T, p string) {
		noErr(t, os.Remove(p))
		noErr(t, os.Symlink(filepath.Base(p), p)) // points at itself
	},
}

// wantSays is what the finding must say about each bad file, beyond its path.
var wantSays = map[string]map[string]string{
	configPath: {
		"binary garbage": "does not decode",
		"empty":          "has no [[runners]]",
		"over 10 MiB":    "larger than 10 MiB",
		"a directory":    "is a directory",
		"a symlink loop": "too many levels of symbolic links",
	},
	kubePath: {
		"binary garbage": "does not parse",
		"empty":          "no current-context",
		"over 10 MiB":    "larger than 10 MiB",
		"a directory":    "is a directory",
		"a symlink loop": "too many levels of symbolic links",
	},
}

func TestBadInputGivesAFindingNamingTheFile(t *testing.T) {
	for file, check := range map[string]string{configPath: "config-decode", kubePath: "kubeconfig-file"} {
		for name, spoil := range badInputs {
			t.Run(check+"/"+name, func(t *testing.T) {
				root := healthyRoot(t)
				spoil(t, filepath.Join(root, file))
				rep, code, alloc := runJSON(t, root)
				if code != report.ExitError {
					t.Errorf("exit %d, want %d", code, report.ExitError)
				}
				for _, c := range rep.Checks {
					if c.Status == checks.StatusUnknown {
						t.Errorf("%s is unknown (%s): bad input must be a finding, never a crash", c.ID, c.Reason)
					}
				}
				text := findingsText(rep, check)
				if !strings.Contains(text, file) || !strings.Contains(text, wantSays[file][name]) {
					t.Errorf("%s's findings do not name %s and say %q:\n%s", check, file, wantSays[file][name], text)
				}
				// The 10 MiB file must not be read into memory: a run costs
				// far less than the file.
				if alloc > checks.MaxFileSize/2 {
					t.Errorf("the run allocated %d bytes", alloc)
				}
			})
		}
	}
}

func TestOversizedEnvironIsUnknownNotRead(t *testing.T) {
	root := healthyRoot(t)
	writeSpoiled(t, filepath.Join(root, "proc/4242/environ"), bytes.Repeat([]byte("A=1\x00"), checks.MaxFileSize/4+1))
	rep, _, alloc := runJSON(t, root)
	for _, c := range rep.Checks {
		if c.ID == "runner-kubeconfig-env" && (c.Status != checks.StatusUnknown || !strings.Contains(c.Reason, "/proc/4242/environ: larger than 10 MiB")) {
			t.Errorf("runner-kubeconfig-env %s: %s", c.Status, c.Reason)
		}
	}
	if alloc > checks.MaxFileSize/2 {
		t.Errorf("the run allocated %d bytes", alloc)
	}
}

// healthyRoot lays out the healthy fixture, the base every bad input spoils.
func healthyRoot(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(fixtures, "healthy")
	var sc Scenario
	raw, err := os.ReadFile(filepath.Join(dir, "scenario.json"))
	noErr(t, err)
	noErr(t, json.Unmarshal(raw, &sc))
	return LayRoot(t, dir, &sc)
}

// runJSON runs doctor on root and returns the report, the exit code and the
// bytes allocated meanwhile (the tests of this file do not run in parallel).
func runJSON(t *testing.T, root string) (*report.Report, int, uint64) {
	t.Helper()
	var out, errb bytes.Buffer
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	code := Main([]string{"run", "--root", root, "--now", "2026-11-29T12:00:00Z", "--offline", "-o", "json"},
		IO{Out: &out, Err: &errb, Getenv: func(string) string { return "" }})
	runtime.ReadMemStats(&after)
	var rep report.Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("exit %d, stderr %s, output: %v", code, errb.String(), err)
	}
	return &rep, code, after.TotalAlloc - before.TotalAlloc
}

func findingsText(rep *report.Report, check string) string {
	var b strings.Builder
	for _, f := range rep.Findings {
		if f.Check != check {
			continue
		}
		b.WriteString(f.Cause + "\n")
		for _, e := range f.Evidence {
			b.WriteString(e.Source + ": " + e.Detail + "\n")
		}
	}
	return b.String()
}

func writeSpoiled(t *testing.T, p string, b []byte) {
	t.Helper()
	noErr(t, os.WriteFile(p, b, 0o600))
}

func noErr(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
