package cli

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/socialwebcomputer/doctor/internal/testing/fixture"
	"github.com/socialwebcomputer/doctor/report"
)

var update = flag.Bool("update", false, "rewrite the golden outputs of testdata/fixtures/*/golden")

const fixtures = "../../testdata/fixtures"

func TestScenarios(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join(fixtures, "*", "scenario.json"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no scenarios under %s: %v", fixtures, err)
	}
	for _, sj := range dirs {
		dir := filepath.Dir(sj)
		t.Run(filepath.Base(dir), func(t *testing.T) { runScenario(t, dir) })
	}
}

func runScenario(t *testing.T, dir string) {
	var sc fixture.Scenario
	raw, err := os.ReadFile(filepath.Join(dir, "scenario.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &sc); err != nil {
		t.Fatalf("scenario.json: %v", err)
	}
	root := fixture.LayRoot(t, dir, &sc)
	base := []string{"run", "--root", root, "--now", sc.Now}
	for _, a := range sc.Args {
		// $FIXTURE is the fixture's directory, for files beside root/
		// (a .doctor.yaml).
		base = append(base, strings.ReplaceAll(a, "$FIXTURE", dir))
	}

	// The table goes to no terminal here: report.DefaultWidth columns, no
	// locale, so ASCII glyphs. The width goldens are the same run on a
	// UTF-8 terminal of 80 and of 200 columns.
	outputs := map[string]string{}
	type variant struct {
		format string
		io     IO
	}
	noEnv := func(string) string { return "" }
	utf8 := func(k string) string {
		if k == "LANG" {
			return "C.UTF-8"
		}
		return ""
	}
	variants := map[string]variant{
		"report.json": {"json", IO{Getenv: noEnv}},
		"table.txt":   {"table", IO{Getenv: noEnv}},
		"report.md":   {"markdown", IO{Getenv: noEnv}},
	}
	if widthGoldens[filepath.Base(dir)] {
		variants["table-80.txt"] = variant{"table", IO{Getenv: utf8, Width: 80}}
		variants["table-200.txt"] = variant{"table", IO{Getenv: utf8, Width: 200}}
	}
	for name, v := range variants {
		var out, errb bytes.Buffer
		v.io.Out, v.io.Err = &out, &errb
		code := Main(append(append([]string{}, base...), "-o", v.format), v.io)
		if code != sc.Want.Exit {
			t.Errorf("%s (-o %s, width %d): exit %d, want %d; stderr: %s", name, v.format, v.io.Width, code, sc.Want.Exit, errb.String())
		}
		// A verify command names --root: the temporary one is $ROOT.
		outputs[name] = strings.ReplaceAll(fixture.Normalize(out.String()), root, "$ROOT")
	}
	if out, ok := outputs["table-80.txt"]; ok {
		assertFits(t, out, 80)
	}
	if out, ok := outputs["table-200.txt"]; ok {
		assertFits(t, out, 200)
	}

	var rep report.Report
	if err := json.Unmarshal([]byte(outputs["report.json"]), &rep); err != nil {
		t.Fatalf("json output does not parse: %v\n%s", err, outputs["report.json"])
	}
	fixture.AssertWant(t, &rep, sc.Want)
	fixture.AssertNoSecrets(t, outputs)
	fixture.AssertNoGuideHosts(t, &rep)

	for name := range outputs {
		golden := filepath.Join(dir, "golden", name)
		if *update {
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
			t.Fatalf("%v (run go test ./internal/cli -run TestScenarios -update)", err)
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

// assertFits fails when a line of a table is wider than the terminal,
// except the fix and verify lines, which are printed whole for the
// terminal to wrap, and a line that is one token too long to break.
func assertFits(t *testing.T, table string, width int) {
	t.Helper()
	fix := false
	for _, line := range strings.Split(table, "\n") {
		switch {
		case strings.HasPrefix(line, "# ") && strings.HasSuffix(line, ": fix"), line == "# verify":
			fix = true
			continue
		case line == "":
			fix = false
			continue
		}
		if fix || utf8.RuneCountInString(line) <= width {
			continue
		}
		if f := strings.Fields(line); len(f) == 1 {
			continue
		}
		t.Errorf("line of %d columns in a %d-column table: %q", utf8.RuneCountInString(line), width, line)
	}
}
