package trace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/all"
)

func sampleRecords() []Record {
	st := Step{Stage: StageNodeReady, At: at(90 * time.Second), SincePrev: 30 * time.Second, Detail: "node rented-1 Ready, 30s after it joined"}
	v := &Verdict{Stuck: StageScheduled, Reason: "timeout (10m0s)", Detail: "last warning FailedScheduling: 0/1 nodes", Waited: 2 * time.Minute,
		Pod: "runner-a", Timeline: []Step{st}, At: at(time.Hour), Duration: time.Hour}
	return []Record{
		{Kind: KindStart, Step: Step{At: t0}, Start: &Start{Namespace: "gitlab-runner", Next: true, Poll: time.Hour}},
		{Kind: KindStage, Step: st},
		{Kind: KindStage, Step: Step{Stage: StageScaleDecision, At: t0, Detail: "no scale-up needed", Skipped: true}},
		{Kind: KindOverBudget, Step: Step{Stage: StageScheduled, At: at(2 * time.Minute), Detail: "budget 2m0s"}, Waited: 2 * time.Minute,
			Budget: 2 * time.Minute, Checks: StageChecks[StageScheduled]},
		{Kind: KindExplain, Step: Step{Stage: StageScheduled, At: at(2 * time.Minute)}, Checks: StageChecks[StageScheduled],
			Explain: []string{"error    pending-unschedulable: pod fits no node", "         fix: lower cpu_request"}},
		{Kind: KindNote, Step: Step{At: t0, Detail: "watch pods: connection reset; retrying in 500ms"}},
		{Kind: KindVerdict, Verdict: v},
	}
}

func TestJSONLines(t *testing.T) {
	var b bytes.Buffer
	r := newRenderer(Output{W: &b})
	renderAll(r, sampleRecords())
	var lines []map[string]any
	sc := bufio.NewScanner(&b)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("not JSON: %q: %v", sc.Text(), err)
		}
		lines = append(lines, m)
	}
	if len(lines) != 7 {
		t.Fatalf("%d lines, want 7", len(lines))
	}
	want := []map[string]any{
		{"event": "start", "namespace": "gitlab-runner", "next": true, "pollTimeoutMs": 3.6e6},
		{"event": "stage", "stage": "node-ready", "n": 4.0, "at": "2026-11-29T12:01:30Z", "sincePrevMs": 30000.0, "detail": "node rented-1 Ready, 30s after it joined"},
		{"event": "stage", "stage": "scale-decision", "skipped": true, "sincePrevMs": 0.0},
		{"event": "over-budget", "stage": "scheduled", "n": 5.0, "waitedMs": 120000.0, "budgetMs": 120000.0},
		{"event": "explain", "stage": "scheduled"},
		{"event": "note", "detail": "watch pods: connection reset; retrying in 500ms"},
		{"event": "verdict", "verdict": "stuck", "stage": "scheduled", "n": 5.0, "reason": "timeout (10m0s)", "exitCode": 2.0, "waitedMs": 120000.0},
	}
	for i, w := range want {
		for k, v := range w {
			if lines[i][k] != v {
				t.Errorf("line %d %s = %#v, want %#v", i+1, k, lines[i][k], v)
			}
		}
	}
	if _, ok := lines[1]["skipped"]; ok {
		t.Error("a seen stage says skipped")
	}
	if ex := lines[4]["lines"].([]any); len(ex) != 2 || !strings.Contains(ex[0].(string), "pending-unschedulable") {
		t.Errorf("explain lines %v", ex)
	}
	if tl := lines[6]["timeline"].([]any); len(tl) != 1 || tl[0].(map[string]any)["stage"] != "node-ready" {
		t.Errorf("timeline %v", tl)
	}
}

func TestLiveView(t *testing.T) {
	for _, utf8 := range []bool{true, false} {
		var b bytes.Buffer
		r := newRenderer(Output{W: &b, TTY: true, UTF8: utf8})
		m := newMachine(Options{Namespace: "gitlab-runner", Next: true}, time.Now().Add(-3*time.Second))
		r.waiting(time.Now(), m)
		if !strings.HasPrefix(b.String(), clearLine) || !strings.Contains(b.String(), "1 created         waiting 3s") || strings.Contains(b.String(), "\n") {
			t.Fatalf("waiting line %q", b.String())
		}
		renderAll(r, sampleRecords())
		out := b.String()
		g := asciiGlyphs
		if utf8 {
			g = utf8Glyphs
		}
		col := func(glyph string) string { return fmt.Sprintf("%-2s ", glyph) }
		for _, want := range []string{
			clearLine + "doctor trace: following the next job pod in gitlab-runner", // the live line is erased first
			col(g.ok) + " 4 node-ready           +30s  node rented-1 Ready",
			col(g.skipped) + " 2 scale-decision",
			col(g.over) + " 5 scheduled       waited 2m0s, over its budget of 2m0s",
			g.bar + " checks that explain it: pending-unschedulable",
			g.bar + " error    pending-unschedulable: pod fits no node",
			col(g.stuck) + "stuck in 5 scheduled after 2m0s: timeout (10m0s)",
			g.bar + " timeline so far: node-ready +30s",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("utf8=%v: no %q in\n%s", utf8, want, out)
			}
		}
	}
}

func TestOutputFor(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	if o := OutputFor(&bytes.Buffer{}, env(map[string]string{"LANG": "C.UTF-8"})); o.TTY || !o.UTF8 {
		t.Errorf("buffer, C.UTF-8: %+v", o)
	}
	if o := OutputFor(&bytes.Buffer{}, env(map[string]string{"LC_ALL": "C", "LANG": "en_US.UTF-8"})); o.UTF8 {
		t.Errorf("LC_ALL=C wins: %+v", o)
	}
}

// Every check a stage names is in the catalog.
func TestStageChecksExist(t *testing.T) {
	ids := map[string]bool{}
	for _, c := range all.Checks() {
		ids[c.ID] = true
	}
	for _, s := range Stages() {
		if len(StageChecks[s]) == 0 {
			t.Errorf("%s explains with no check", s)
		}
		for _, id := range StageChecks[s] {
			if !ids[id] {
				t.Errorf("%s: no check %q in the catalog", s, id)
			}
		}
	}
}

func TestFormatResults(t *testing.T) {
	pass := &checks.Check{ID: "image-pull", Title: "Job containers pull their images", Severity: checks.Error}
	fail := &checks.Check{ID: "pending-unschedulable", Title: "t", Severity: checks.Error}
	req := &checks.Check{ID: "api-auth", Title: "t", Severity: checks.Critical}
	ok := &checks.Check{ID: "namespace", Title: "t"}
	res := &checks.Result{Checks: []checks.CheckResult{
		{Check: req, Status: checks.StatusPass},
		{Check: ok, Status: checks.StatusSkipped, Reason: "needs api-auth"},
		{Check: pass, Status: checks.StatusPass},
		{Check: fail, Status: checks.StatusFail, Findings: []checks.Finding{{Severity: checks.Error, Cause: "the pod fits no node", Fix: checks.Text("Lower cpu_request.\nmore")}}},
	}}
	got := strings.Join(FormatResults(res, []string{"image-pull", "pending-unschedulable"}), "\n")
	want := "skipped  namespace: needs api-auth\npass     image-pull: Job containers pull their images\nerror    pending-unschedulable: the pod fits no node\n           fix: Lower cpu_request."
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// BenchmarkStageLine is the trace's own share of an event's delay: a pod
// update through the stage machine to its JSON line.
func BenchmarkStageLine(b *testing.B) {
	r := newRenderer(Output{W: io.Discard})
	p := mkJobPod("runner-abc123-project-5-concurrent-0-bench", t0)
	q := bound(p, "n1")
	for b.Loop() {
		m := newMachine(Options{Namespace: "gitlab-runner", Pod: p.Name}, t0)
		m.initNodes(t0, []corev1.Node{*mkNode("n1", t0.Add(-time.Hour), true)}, true)
		m.initPods(t0, []corev1.Pod{*p})
		m.take()
		m.podChanged(at(time.Second), q, false)
		renderAll(r, m.take())
	}
}
