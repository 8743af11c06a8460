package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/checks/all"
	"github.com/socialwebcomputer/doctor/internal/text/wrap"
	"github.com/socialwebcomputer/doctor/testkit/cmdtest"
)

// The outputs an operator reads on a terminal are kept at 80 and 200
// columns (testdata/width/*.txt), and a terminal of that width breaks no
// word, command, path or URL of them (wrap.Breaks: a line longer than the
// terminal is folded at the width, and a fold with no space on either
// side cuts a token). Only a block's line (a verify command) and a line
// that is one token may be longer than the terminal. doctor run's goldens
// are the scenario fixtures' table-80.txt and table-200.txt (TestScenarios,
// assertFits, cmd/doctor/e2e); trace's live view is TestLiveViewWidth
// (cmd/doctor/app/trace).
func TestWidthGoldens(t *testing.T) {
	// The README's quick starts run on this fixture too.
	const fixture = "guide-config-as-is"
	root := cmdtest.FixtureRoot(t, fixture)
	catalog := cmdtest.GoldenCatalog(t, filepath.Join(cmdtest.Fixtures, fixture), all.Checks())
	utf8 := func(k string) string {
		if k == "LANG" {
			return "C.UTF-8"
		}
		return ""
	}
	// The documented fixes' and verify commands' blocks are printed whole.
	blocks := map[string]bool{}
	for _, c := range all.Checks() {
		for _, b := range append(c.Doc.Fix.Blocks(), c.Doc.Verify.Blocks()...) {
			for _, l := range strings.Split(b.Text, "\n") {
				blocks[l] = true
			}
		}
	}
	const pasted = `ERROR: Job failed (system failure): prepare environment: setting up build pod: namespaces "ci-missing" not found`
	type output struct {
		name string
		args [][]string
	}
	var explain [][]string
	for _, c := range all.Checks() {
		explain = append(explain, []string{"explain", c.ID})
	}
	outputs := []output{
		{"explain", explain},
		{"checks", [][]string{{"checks"}, {"checks", "-o", "wide"}}},
		{"why", [][]string{
			{"why", "../../../testdata/logs/failing-job-no-kubeconfig.log", "--root", root, "--offline", "--now", "2026-11-29T12:00:00Z"},
			{"why", pasted, "--root", root, "--offline", "--now", "2026-11-29T12:00:00Z"},
		}},
	}
	for _, width := range []int{80, 200} {
		for _, o := range outputs {
			var all strings.Builder
			for _, args := range o.args {
				var out, errb bytes.Buffer
				Main(args, IO{Out: &out, Err: &errb, Getenv: utf8, Width: width, Checks: catalog})
				if errb.Len() > 0 {
					t.Errorf("doctor %s: stderr %q", strings.Join(args, " "), errb.String())
				}
				text := strings.ReplaceAll(out.String(), root, "$ROOT")
				for _, b := range wrap.Breaks(text, width, func(l string) bool { return blocks[l] || cmdtest.VerifyLines(text)(l) }) {
					t.Errorf("doctor %s at %d columns: line %d breaks %q", strings.Join(args, " "), width, b.Line, b.Token)
				}
				fmt.Fprintf(&all, "$ doctor %s\n%s\n", strings.ReplaceAll(strings.Join(args, " "), root, "$ROOT"), text)
			}
			golden := filepath.Join("testdata", "width", fmt.Sprintf("%s-%d.txt", o.name, width))
			if *cmdtest.Update {
				cmdtest.NoErr(t, os.MkdirAll(filepath.Dir(golden), 0o755))
				cmdtest.NoErr(t, os.WriteFile(golden, []byte(all.String()), 0o644))
				continue
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (go test ./cmd/doctor/cli -run TestWidthGoldens -update writes it)", err)
			}
			if string(want) != all.String() {
				t.Errorf("%s differs from what the commands print now; if the change is meant, run with -update:\n%s", golden, cmdtest.FirstDifference(string(want), all.String()))
			}
		}
	}
}
