// Package cmdtest is what the tests of cmd/doctor/cli (the command line's
// own concerns) and of cmd/doctor/e2e (doctor end to end, and the
// guarantees) share: the fixtures laid out as hosts, the built binary, the
// goldens' -update flag, the hostile text. Paths are relative to either
// package's folder: both sit three levels below the repository's root.
package cmdtest

import (
	"encoding/json"
	"flag"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/report"
	"github.com/socialwebcomputer/doctor/testkit/fixture"
)

// Nobody is the uid doctor runs as for "no permission": the tests run
// as root, which chmod 000 does not stop.
const Nobody = 65534

// NoErr ends the test at a non-nil err.
func NoErr(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// BuildDoctor builds cmd/doctor into a directory of its own (so that
// directory can go first on PATH) and returns the binary's path. It is
// built with -buildvcs=true, as go build in a checkout stamps it.
func BuildDoctor(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "doctor")
	out, err := exec.Command("go", "build", "-buildvcs=true", "-o", bin, "..").CombinedOutput()
	if err != nil {
		t.Fatalf("go build ./cmd/doctor: %v\n%s", err, out)
	}
	return bin
}

// FirstDifference shows the lines around where two texts part.
func FirstDifference(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) || i < len(bl); i++ {
		if i >= len(al) || i >= len(bl) || al[i] != bl[i] {
			lo := max(0, i-6)
			return "live:\n" + strings.Join(al[lo:min(len(al), i+4)], "\n") + "\nanalyze:\n" + strings.Join(bl[lo:min(len(bl), i+4)], "\n")
		}
	}
	return "(equal texts)"
}

// Update is -update: rewrite the goldens instead of comparing with them.
var Update = flag.Bool("update", false, "rewrite the record of testdata/fixtures/*/scenario.json (want.ranked, want.status) and the goldens of the widthGoldens fixtures")

// Fixtures is testdata/fixtures, from cmd/doctor/cli or cmd/doctor/e2e.
const Fixtures = "../../../testdata/fixtures"

// FixtureRoot lays out the fixture name's host and returns its root.
func FixtureRoot(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join(Fixtures, name)
	var sc fixture.Scenario
	raw, err := os.ReadFile(filepath.Join(dir, "scenario.json"))
	NoErr(t, err)
	NoErr(t, json.Unmarshal(raw, &sc))
	return fixture.LayRoot(t, dir, &sc)
}

// GoldenCatalog is catalog narrowed to the checks dir's golden report.json
// lists, in catalog order.
func GoldenCatalog(t *testing.T, dir string, catalog []*checks.Check) []*checks.Check {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "golden", "report.json"))
	if err != nil {
		t.Fatalf("%v (run go test ./cmd/doctor/e2e -run TestScenarios -update)", err)
	}
	var rep report.Report
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatalf("%s/golden/report.json: %v", dir, err)
	}
	listed := map[string]bool{}
	for _, c := range rep.Checks {
		listed[c.ID] = true
	}
	var out []*checks.Check
	for _, c := range catalog {
		if listed[c.ID] {
			out = append(out, c)
			delete(listed, c.ID)
		}
	}
	if len(listed) > 0 {
		t.Fatalf("%s/golden/report.json lists checks the registry lacks: %v (run with -update if they were removed)", dir, slices.Sorted(maps.Keys(listed)))
	}
	return out
}

// VerifyLines says whether a line of a table is a verify command: the line
// after "# verify".
func VerifyLines(out string) func(string) bool {
	verify := map[string]bool{}
	lines := strings.Split(out, "\n")
	for i := 1; i < len(lines); i++ {
		if lines[i-1] == "# verify" {
			verify[lines[i]] = true
		}
	}
	return func(l string) bool { return verify[l] }
}

// Hostile is what each value carries: an OSC that retitles the window and
// one that makes a link, a screen clear, a carriage return that rewrites
// the line, a newline and a quick action, a newline and a mention, a pipe
// that would end a table cell, HTML, a link, a bidi override, a C1 CSI.
const Hostile = "\x1b]0;pwned\x07\x1b]8;;http://evil.invalid\x07click\x1b]8;;\x07\x1b[2J\rforged\n/close\n@all | <script>x</script> [l](http://evil.invalid) \u202eabc \u009b31m z\u200bw\u200dj\u2060\ufeff\u00ad #1 ~bug %m $5 &6 :smile: [[_TOC_]] www.evil.invalid me@evil.invalid deadbeef1 ABC-123"

// WriteLog writes body as a job log in a temporary directory.
func WriteLog(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "job.log")
	NoErr(t, os.WriteFile(p, []byte(body), 0o644))
	return p
}
