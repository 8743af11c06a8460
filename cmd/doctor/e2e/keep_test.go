package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts/kubefacts"
	"github.com/socialwebcomputer/doctor/cmd/doctor/app/bundle"
	"github.com/socialwebcomputer/doctor/cmd/doctor/cli"
	"github.com/socialwebcomputer/doctor/report"
	"github.com/socialwebcomputer/doctor/testkit/cmdtest"
)

// verdicts is what a run concluded: each check's status and reason, and
// each finding's check, runner, severity, cause and fix. Evidence is left
// out: it holds what was measured (a read's duration), which two runs do
// not repeat.
type verdicts struct {
	Checks   []report.CheckStatus
	Findings [][5]string
	Exit     int
}

func verdictsOf(rep *report.Report) verdicts {
	v := verdicts{Exit: rep.Summary.ExitCode}
	for _, c := range rep.Checks {
		c.DurationMs = 0
		v.Checks = append(v.Checks, c)
	}
	for _, f := range rep.Findings {
		v.Findings = append(v.Findings, [5]string{f.Check, findingRunner(f.Runner), f.Severity.String(), f.Cause, f.Fix})
	}
	return v
}

// recordedRun is a test's last run through runReport.
type recordedRun struct {
	rep        *report.Report
	bundlePath string
	args       []string
}

// lastRuns holds each test's last recorded run, by *testing.T.
var lastRuns sync.Map

// checkCutWhenDone has the test's last recorded run checked by
// assertCutIsSufficient when the test ends, before the apiserver and the
// servers it set up stop (their cleanups were registered first): the test
// has counted its requests and timed its run by then, and the world is the
// last run's.
func checkCutWhenDone(t *testing.T, rep *report.Report, bundlePath string, args []string) {
	t.Helper()
	if _, loaded := lastRuns.Swap(t, &recordedRun{rep, bundlePath, slices.Clone(args)}); loaded {
		return
	}
	t.Cleanup(func() {
		v, _ := lastRuns.LoadAndDelete(t)
		if r := v.(*recordedRun); !t.Failed() {
			assertCutIsSufficient(t, r.rep, r.bundlePath, r.args)
		}
	})
}

// assertCutIsSufficient runs a run that talked to an apiserver twice more,
// without --bundle and at the recorded run's clock: once as a live run is
// (protobuf, cut), once with the cut off (kubefacts.WholeAnswersForTests).
// Both must conclude what the recorded run did: the allow-list of
// keep.Kinds holds every field a check read on this scenario, and the
// protobuf cut decodes as the JSON one.
func assertCutIsSufficient(t *testing.T, recorded *report.Report, bundlePath string, args []string) {
	t.Helper()
	m, _, tape, err := bundle.Read(bundlePath)
	if err != nil || len(tape.HTTP) == 0 {
		return // no API answer to cut
	}
	args = slices.Clip(args)
	if !slices.Contains(args, "--now") {
		args = append(args, "--now", m.Clock.Format(time.RFC3339))
	}
	want := verdictsOf(recorded)
	for _, whole := range []bool{false, true} {
		kubefacts.WholeAnswersForTests.Store(whole)
		var out, errb bytes.Buffer
		code := cli.Main(args, cli.IO{Out: &out, Err: &errb, Getenv: func(string) string { return "" }})
		kubefacts.WholeAnswersForTests.Store(false)
		var rep report.Report
		if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
			t.Fatalf("whole=%v: exit %d, %s: %v", whole, code, errb.String(), err)
		}
		if got := verdictsOf(&rep); !reflect.DeepEqual(want, got) {
			wj, _ := json.MarshalIndent(want, "", " ")
			gj, _ := json.MarshalIndent(got, "", " ")
			what := "the live (protobuf) run with the cut"
			if whole {
				what = "a run with whole answers (no cut)"
			}
			t.Errorf("%s concludes otherwise than the recorded run:\n%s", what, cmdtest.FirstDifference(string(wj), string(gj)))
		}
	}
}

func findingRunner(r *checks.RunnerRef) string {
	if r == nil {
		return ""
	}
	return fmt.Sprint(*r)
}
