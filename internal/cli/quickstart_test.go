package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/checks/all"
)

// The README's quick starts are real runs: each block between
// <!-- quickstart NAME --> and <!-- /quickstart --> holds the command and
// what it printed, and this test runs the command again and compares.
// go test ./internal/cli -run TestReadmeQuickStarts -update rewrites them.
var quickstart = regexp.MustCompile(`(?s)<!-- quickstart ([a-z-]+) -->\n(.*?)<!-- /quickstart -->`)

// quickstarts are the commands, by name; each runs in a fresh directory
// where ./ is that directory and the fixtures are under testdata/.
var quickstarts = map[string][][]string{
	"ticket": {
		{"run", "--root", "testdata/fixtures/guide-config-as-is/root", "--offline", "--now", "2026-11-29T12:00:00Z",
			"--bundle", "ticket.tar.gz", "-o", "markdown"},
	},
	"analyze": {
		{"analyze", "ticket.tar.gz"},
	},
	"why": {
		{"why", "testdata/logs/failing-job-no-kubeconfig.log", "--root", "testdata/fixtures/guide-config-as-is/root",
			"--offline", "--now", "2026-11-29T12:00:00Z"},
	},
}

// quickstartFixture is the fixture every quick start runs. Its golden's
// catalog is the one they run with, as the golden's own run is (see
// runScenario): the "N of M checks ran" they print stays put when a check
// is registered, until -update writes both with the whole registry.
const quickstartFixture = "guide-config-as-is"

func TestReadmeQuickStarts(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	noErr(t, err)
	readme := string(b)
	catalog := all.Checks()
	if !*update {
		catalog = goldenCatalog(t, filepath.Join(fixtures, quickstartFixture), catalog)
	}
	work := t.TempDir()
	noErr(t, os.Symlink(mustAbs(t, "../../testdata"), filepath.Join(work, "testdata")))
	wd, _ := os.Getwd()
	noErr(t, os.Chdir(work))
	defer os.Chdir(wd)
	seen := map[string]bool{}
	out := quickstart.ReplaceAllStringFunc(readme, func(m string) string {
		name := quickstart.FindStringSubmatch(m)[1]
		cmds, ok := quickstarts[name]
		if !ok {
			t.Errorf("README quick start %q has no command in this test", name)
			return m
		}
		seen[name] = true
		var block strings.Builder
		for _, c := range cmds {
			var out, errb bytes.Buffer
			code := Main(c, IO{Out: &out, Err: &errb, Getenv: func(string) string { return "" }, Checks: catalog})
			stdout, stderr := out.String(), errb.String()
			if stderr != "" {
				t.Errorf("%s: stderr %q", name, stderr)
			}
			fence := "```"
			if strings.Contains(stdout, "```") {
				fence = "~~~~"
			}
			block.WriteString("    ./doctor " + strings.Join(quoteAll(c), " ") + "\n")
			block.WriteString("    echo $?    # " + strconv.Itoa(code) + "\n\n")
			lang := ""
			if c[len(c)-1] == "markdown" {
				lang = "markdown"
			}
			block.WriteString(fence + lang + "\n" + strings.TrimRight(stdout, "\n") + "\n" + fence + "\n")
		}
		return "<!-- quickstart " + name + " -->\n" + block.String() + "<!-- /quickstart -->"
	})
	for name := range quickstarts {
		if !seen[name] {
			t.Errorf("README.md has no <!-- quickstart %s --> block", name)
		}
	}
	if *update {
		noErr(t, os.Chdir(wd))
		noErr(t, os.WriteFile("../../README.md", []byte(out), 0o644))
		return
	}
	if out != readme {
		t.Errorf("README.md's quick starts differ from what the commands print now; go test ./internal/cli -run TestReadmeQuickStarts -update\n%s",
			firstDifference(readme, out))
	}
}

func quoteAll(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = shellQuote(a)
	}
	return out
}

func mustAbs(t *testing.T, p string) string {
	a, err := filepath.Abs(p)
	noErr(t, err)
	return a
}
