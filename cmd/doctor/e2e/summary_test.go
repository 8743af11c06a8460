package e2e

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/all"
	"github.com/socialwebcomputer/doctor/checks/facts/kubefacts"
	"github.com/socialwebcomputer/doctor/cmd/doctor/cli"
	"github.com/socialwebcomputer/doctor/report"
	"github.com/socialwebcomputer/doctor/testkit/fixture"
)

// summarize is a report in a few lines, for test logs.
func summarize(rep *report.Report) string {
	var b strings.Builder
	for _, f := range rep.Findings {
		b.WriteString(strings.Repeat("  ", boolInt(f.CausedBy != nil)) + f.Severity.String() + " " + f.Check + ": " + f.Cause + "\n")
	}
	for _, c := range rep.Checks {
		if c.Status != "pass" {
			b.WriteString("  [" + string(c.Status) + "] " + c.ID + ": " + c.Reason + "\n")
		}
	}
	return b.String()
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// runReport runs doctor with args (which must ask for -o json) and returns the
// parsed report and its text. It fails the test when the output does not
// parse, when the exit code and the summary disagree, or when the output
// carries a secret.
func runReport(t *testing.T, args ...string) (*report.Report, string) {
	t.Helper()
	// Every scenario run through here is also bundled and analyzed: the
	// findings of analyze must be the live run's (the --deep probe pod is
	// the live run's alone, so those are not).
	bundlePath, root, unbundled := "", "", args
	if len(args) > 0 && args[0] == "run" && !slices.Contains(args, "--deep") {
		for i, a := range args {
			if a == "--root" && i+1 < len(args) {
				root = args[i+1]
			}
		}
		bundlePath = filepath.Join(t.TempDir(), "bundle.tar.gz")
		args = append(slices.Clip(args), "--bundle", bundlePath)
	}
	var out, errb bytes.Buffer
	defer func() {
		if bundlePath != "" && !t.Failed() {
			var rep report.Report
			if json.Unmarshal(out.Bytes(), &rep) == nil {
				assertAnalyzeEqualsLive(t, &rep, bundlePath, root)
				checkCutWhenDone(t, &rep, bundlePath, unbundled)
			}
		}
	}()
	code := cli.Main(args, cli.IO{Out: &out, Err: &errb, Getenv: func(string) string { return "" }})
	var rep report.Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("exit %d, stderr %s, output does not parse: %v\n%s", code, errb.String(), err, out.String())
	}
	if code != rep.Summary.ExitCode {
		t.Errorf("exit %d but summary says %d", code, rep.Summary.ExitCode)
	}
	assertCountsAddUp(t, rep.Summary)
	fixture.AssertNoSecrets(t, map[string]string{"json": out.String()})
	assertCitesCluster(t, &rep)
	if t.Failed() || testing.Verbose() {
		t.Logf("report:\n%s", summarize(&rep))
	}
	return &rep, out.String()
}

// assertCitesCluster fails the test when a finding of a check that reads
// the runner's cluster (it cannot run without kubefacts.APIClientFact) lacks
// the effective cluster and its provenance: the engine adds it
// (APIClientFact's Cites), so a finding without it is a check that reads
// the cluster by another way, or an engine that lost the seam.
func assertCitesCluster(t *testing.T, rep *report.Report) {
	t.Helper()
	catalog := all.Checks()
	byID := map[string]*checks.Check{}
	for _, c := range catalog {
		byID[c.ID] = c
	}
	for _, f := range rep.Findings {
		c := byID[f.Check]
		if c == nil || !checks.Reads(catalog, c, kubefacts.APIClientFact) {
			continue
		}
		if !slices.ContainsFunc(f.Evidence, kubefacts.CitesEffectiveCluster) {
			t.Errorf("%s reads the cluster, and its finding %q does not cite the effective cluster: %v", f.Check, f.Cause, f.Evidence)
		}
	}
}
