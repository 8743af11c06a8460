package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/cmd/doctor/cli"
	"github.com/socialwebcomputer/doctor/internal/fixcode"
	"github.com/socialwebcomputer/doctor/report"
	"github.com/socialwebcomputer/doctor/testkit/fixture"
	"github.com/socialwebcomputer/doctor/testkit/hostilefix"
)

// TestFixesHoldHostileValues runs every fixture twice: as it is, and with
// every value any encoder is given (a path, a name, a URL, a context, a
// namespace, a unit, a manifest's fields, a drop-in's value, a TOML value,
// the verify line's flags) wrapped in hostilefix.Mark. Every fix and
// verify step of every finding of every check must parse, with the tool
// that reads it, into exactly the plain run's structure, each value one
// word (hostilefix.Compare): no value becomes syntax, whatever it holds.
// A step an encoder refused in the hostile run fails the test too: Mark
// holds nothing an encoder must refuse.
func TestFixesHoldHostileValues(t *testing.T) {
	steps := 0
	for _, dir := range scenarioDirs(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			sc := fixture.Load(t, dir)
			root := fixture.LayRoot(t, dir, sc)
			args := sc.RunArgs(dir, root)
			plain := fixesOf(t, args)
			hostile := taintedFixesOf(t, args)
			if len(plain) != len(hostile) {
				t.Fatalf("%d findings, hostile values made %d", len(plain), len(hostile))
			}
			for i := range plain {
				hostilefix.Compare(t, plain[i].where, plain[i].steps, hostile[i].steps)
				steps += len(plain[i].steps)
			}
		})
	}
	t.Logf("%d fix and verify steps compared", steps)
}

type findingFix struct {
	where string
	steps checks.Steps
}

// verifyBlock is a finding's verify command in the markdown report.
var verifyBlock = regexp.MustCompile("\\*\\*Verify:\\*\\*\n\n```sh\n([\\s\\S]*?)\n```")

// fixesOf runs doctor on args and returns each finding's fix steps, and
// its verify command as a step of its own.
func fixesOf(t *testing.T, args []string) []findingFix {
	t.Helper()
	run := func(format string) string {
		var out, errb bytes.Buffer
		cli.Main(append(append([]string{}, args...), "-o", format), cli.IO{Out: &out, Err: &errb, Getenv: func(string) string { return "" }})
		return out.String()
	}
	var rep report.Report
	if err := json.Unmarshal([]byte(run("json")), &rep); err != nil {
		t.Fatalf("json: %v", err)
	}
	// The markdown gives a root finding with a fix its verify command; a
	// finding folded under another has its root's.
	verifies := verifyBlock.FindAllStringSubmatch(run("markdown"), -1)
	out := make([]findingFix, len(rep.Findings))
	v := 0
	for i, f := range rep.Findings {
		out[i] = findingFix{where: fmt.Sprintf("finding %d (%s)", i+1, f.Check), steps: append(checks.Steps{}, f.FixSteps...)}
		if f.CausedBy == nil && len(f.FixSteps) > 0 {
			if v == len(verifies) {
				t.Fatalf("%d verify blocks, fewer than the root findings with a fix", len(verifies))
			}
			out[i].steps = append(out[i].steps, checks.Step{Kind: checks.KindShell, Text: verifies[v][1]})
			v++
		}
	}
	if v != len(verifies) {
		t.Fatalf("%d verify blocks for %d root findings with a fix", len(verifies), v)
	}
	return out
}

// taintedFixesOf is fixesOf with every value any encoder is given wrapped
// in hostilefix.Mark; the taint ends with it, whatever happens.
func taintedFixesOf(t *testing.T, args []string) []findingFix {
	t.Helper()
	restore := fixcode.SetTaint(hostilefix.Taint)
	defer restore()
	return fixesOf(t, args)
}
