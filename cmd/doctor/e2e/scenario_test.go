package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/all"
	"github.com/socialwebcomputer/doctor/cmd/doctor/cli"
	"github.com/socialwebcomputer/doctor/internal/text/wrap"
	"github.com/socialwebcomputer/doctor/report"
	"github.com/socialwebcomputer/doctor/testkit/cmdtest"
	"github.com/socialwebcomputer/doctor/testkit/fixture"
)

// TestScenarios runs every fixture's scenario: the exit code and what the
// scenario's want says (AssertWant), the ranked findings and statuses it
// recorded of the checks it names (AssertRecorded), no secret in any
// renderer's output, and for the widthGoldens fixtures every rendered byte.
func TestScenarios(t *testing.T) {
	for _, dir := range scenarioDirs(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) { runScenario(t, dir, nil) })
	}
}

func scenarioDirs(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(cmdtest.Fixtures, "*", "scenario.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios under %s: %v", cmdtest.Fixtures, err)
	}
	dirs := make([]string, len(files))
	for i, f := range files {
		dirs[i] = filepath.Dir(f)
	}
	return dirs
}

// added are checks a test registers beside the registry's, and what a
// scenario may then see change: the exit code, raised to at least exit by
// their findings. Their findings and statuses are set aside before the
// scenario's want is compared, as a check the want cannot name yet.
type added struct {
	checks []*checks.Check
	exit   int
}

func runScenario(t *testing.T, dir string, add *added) {
	sc := fixture.Load(t, dir)
	root := fixture.LayRoot(t, dir, sc)
	base := sc.RunArgs(dir, root)
	want := sc.Want
	catalog := all.Checks()
	if add != nil {
		catalog = append(catalog, add.checks...)
		want.Exit = max(want.Exit, add.exit)
	}
	golden := widthGoldens[filepath.Base(dir)]
	if golden && !*cmdtest.Update {
		// A golden shows "N of M checks ran" and every check's status: it
		// is rendered with the catalog it was written with, the checks its
		// report.json lists, so a check registered since changes none of its
		// bytes (-update writes it with the whole registry). Not --only,
		// which would change the Flags line and the count.
		catalog = cmdtest.GoldenCatalog(t, dir, catalog)
		want.Exit, add = sc.Want.Exit, nil
	}

	// The table goes to no terminal here: report.DefaultWidth columns, no
	// locale, so ASCII glyphs. The width goldens are the same run on a
	// UTF-8 terminal of 80 and of 200 columns. Every fixture is rendered
	// in the three formats, for AssertNoSecrets; only the widthGoldens
	// fixtures keep their bytes.
	outputs := map[string]string{}
	type variant struct {
		format string
		io     cli.IO
	}
	noEnv := func(string) string { return "" }
	utf8 := func(k string) string {
		if k == "LANG" {
			return "C.UTF-8"
		}
		return ""
	}
	variants := map[string]variant{
		"report.json": {"json", cli.IO{Getenv: noEnv}},
		"table.txt":   {"table", cli.IO{Getenv: noEnv}},
		"report.md":   {"markdown", cli.IO{Getenv: noEnv}},
	}
	if golden {
		variants["table-80.txt"] = variant{"table", cli.IO{Getenv: utf8, Width: 80}}
		variants["table-200.txt"] = variant{"table", cli.IO{Getenv: utf8, Width: 200}}
	}
	for name, v := range variants {
		var out, errb bytes.Buffer
		v.io.Out, v.io.Err, v.io.Checks = &out, &errb, catalog
		code := cli.Main(append(append([]string{}, base...), "-o", v.format), v.io)
		if code != want.Exit {
			t.Errorf("%s (-o %s, width %d): exit %d, want %d; stderr: %s", name, v.format, v.io.Width, code, want.Exit, errb.String())
		}
		// A verify command names --root: the temporary one is $ROOT.
		outputs[name] = strings.ReplaceAll(fixture.Normalize(out.String()), root, "$ROOT")
	}
	blocks := fixBlockLines(t, outputs["report.json"])
	if out, ok := outputs["table-80.txt"]; ok {
		assertFits(t, out, 80, blocks)
	}
	if out, ok := outputs["table-200.txt"]; ok {
		assertFits(t, out, 200, blocks)
	}

	var rep report.Report
	if err := json.Unmarshal([]byte(outputs["report.json"]), &rep); err != nil {
		t.Fatalf("json output does not parse: %v\n%s", err, outputs["report.json"])
	}
	fixture.AssertNoSecrets(t, outputs)
	fixture.AssertNoGuideHosts(t, &rep)
	assertCountsAddUp(t, rep.Summary)
	if *cmdtest.Update {
		if add != nil {
			t.Fatal("-update records the registry's checks, not a test's additions")
		}
		if err := fixture.WriteRecord(dir, &rep, sc.Want); err != nil {
			t.Fatal(err)
		}
		sc.Want = fixture.Load(t, dir).Want
		want = sc.Want
	}
	seen := &rep
	if add != nil {
		seen = withoutChecks(t, &rep, add.checks)
	}
	fixture.AssertWant(t, seen, want)
	fixture.AssertRecorded(t, seen, want)
	if golden {
		compareGoldens(t, dir, outputs)
	}
}

// withoutChecks is rep without the added checks' findings and statuses, and
// fails unless each of them ran: a scenario that never ran them proves
// nothing about them.
func withoutChecks(t *testing.T, rep *report.Report, added []*checks.Check) *report.Report {
	t.Helper()
	ids := map[string]bool{}
	for _, c := range added {
		ids[c.ID] = true
	}
	out := *rep
	out.Findings, out.Checks = nil, nil
	for _, f := range rep.Findings {
		if !ids[f.Check] {
			out.Findings = append(out.Findings, f)
		}
	}
	ran := map[string]bool{}
	for _, c := range rep.Checks {
		if ids[c.ID] {
			ran[c.ID] = c.Status == checks.StatusPass || c.Status == checks.StatusFail
			continue
		}
		out.Checks = append(out.Checks, c)
	}
	for id := range ids {
		if !ran[id] {
			t.Errorf("the added check %s did not run", id)
		}
	}
	return &out
}

func compareGoldens(t *testing.T, dir string, outputs map[string]string) {
	t.Helper()
	for name := range outputs {
		golden := filepath.Join(dir, "golden", name)
		if *cmdtest.Update {
			if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(golden, []byte(outputs[name]), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (run go test ./cmd/doctor/e2e -run TestScenarios -update)", err)
		}
		if string(want) != outputs[name] {
			t.Errorf("%s differs from the golden file; if the change is meant, run with -update.\n--- got ---\n%s", golden, outputs[name])
		}
	}
}

// widthGoldens are the fixtures whose table is also kept at 80 and 200
// columns (golden/table-80.txt, table-200.txt): one healthy, one root cause
// with its consequence, two root causes, a long multi-line fix, several
// runners, ignores from a .doctor.yaml.
var widthGoldens = map[string]bool{
	"healthy":      true,
	"cert-expired": true,
	"multi-cause-expired-cert-world-readable": true,
	"guide-config-as-is":                      true,
	"three-runners":                           true,
	"doctor-yaml-expired-ignore":              true,
}

// assertFits fails when a terminal of the width breaks a word, command,
// path or URL of a table (wrap.Breaks): only the verify command, a block
// printed whole, may be longer than the terminal.
func assertFits(t *testing.T, table string, width int, blocks map[string]bool) {
	t.Helper()
	verify := cmdtest.VerifyLines(table)
	for _, b := range wrap.Breaks(table, width, func(l string) bool { return blocks[l] || verify(l) }) {
		t.Errorf("%d columns: line %d breaks %q", width, b.Line, b.Token)
	}
}

// fixBlockLines are the lines of the fixes' blocks in a JSON report: a
// command or a snippet, printed whole, so a terminal narrower than one
// folds it and copying still gives the whole line.
func fixBlockLines(t *testing.T, js string) map[string]bool {
	t.Helper()
	lines := map[string]bool{}
	if js == "" {
		return lines
	}
	var rep report.Report
	if err := json.Unmarshal([]byte(js), &rep); err != nil {
		t.Fatalf("report.json: %v", err)
	}
	for _, f := range rep.Findings {
		for _, b := range f.FixSteps.Blocks() {
			for _, l := range strings.Split(b.Text, "\n") {
				lines[l] = true
			}
		}
	}
	return lines
}
