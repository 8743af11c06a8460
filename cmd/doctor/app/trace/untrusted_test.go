package trace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/socialwebcomputer/doctor/internal/text/safetext/safetexttest"
)

// hostileRecords are every kind of record, their text (a namespace, a pod,
// a node's or an event's words, the checks' findings, a pod's phase) set
// from the cluster's side: name where a name goes, text where words do.
func hostileRecords(name, text string) []Record {
	st := Step{Stage: StageNodeReady, At: at(90 * time.Second), SincePrev: 30 * time.Second, Detail: "node " + name + " Ready: " + text}
	return []Record{
		{Kind: KindStart, Step: Step{At: t0}, Start: &Start{Namespace: name, Pod: name, Poll: time.Hour}},
		{Kind: KindStart, Step: Step{At: t0}, Start: &Start{Namespace: name, Next: true, Poll: time.Hour}},
		{Kind: KindStage, Step: st},
		{Kind: KindStage, Step: Step{Stage: StageScaleDecision, At: t0, Detail: text, Skipped: true}},
		{Kind: KindStage, Step: Step{Stage: StageScheduled, At: t0, Detail: text, Inferred: true}},
		{Kind: KindOverBudget, Step: Step{Stage: StageScheduled, At: at(2 * time.Minute), Detail: text}, Waited: 2 * time.Minute,
			Budget: time.Minute, Checks: []string{name}},
		{Kind: KindExplain, Step: Step{Stage: StageScheduled, At: at(2 * time.Minute)}, Checks: []string{name},
			Explain: []string{"error    pending-unschedulable: " + text, name}},
		{Kind: KindNote, Step: Step{At: t0, Detail: text}},
		{Kind: KindVerdict, Verdict: &Verdict{Stuck: StageScheduled, Reason: text, Detail: text, Waited: time.Minute,
			Namespace: name, Pod: name, Phase: corev1.PodPhase(name), Timeline: []Step{st}, At: at(time.Hour)}},
		{Kind: KindVerdict, Verdict: &Verdict{Completed: true, Pod: name, Phase: corev1.PodPhase(text), At: at(time.Hour), Duration: time.Hour}},
	}
}

// FuzzOutput: the live view prints no character safetext escapes but its
// own newlines and the carriage return and erase-line of its redrawn line;
// the JSON lines print none but their newlines, and each still parses.
func FuzzOutput(f *testing.F) {
	for _, s := range [][2]string{
		{"runner-abc", "0/1 nodes are available"},
		{"pod\x1b]0;pwned\x07", "msg\x1b[2J\x1b[H\rforged line\nnext"},
		{"\u202eevil", "c1 \u009b31m del \x7f bad \xff"},
		{"ns\n/close", "\n@all"},
		{"runner\u200b-abc\u00ad", "zero\u200bwidth\u200d\u2060 bom\ufeff tag\U000e0041"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, name, text string) {
		recs := hostileRecords(name, text)
		for _, utf8 := range []bool{true, false} {
			var b bytes.Buffer
			renderAll(newRenderer(Output{W: &b, TTY: true, UTF8: utf8}), recs)
			out := strings.ReplaceAll(b.String(), clearLine, "")
			if p := safetexttest.Terminal(out, "\n"); p != "" {
				t.Fatalf("live view: %s\n%s", p, b.String())
			}
			if n := strings.Count(b.String(), "\n"); n < len(recs) {
				t.Fatalf("%d lines for %d records", n, len(recs))
			}
		}
		var b bytes.Buffer
		renderAll(newRenderer(Output{W: &b}), recs)
		if p := safetexttest.Terminal(b.String(), "\n"); p != "" {
			t.Fatalf("JSON lines: %s\n%s", p, b.String())
		}
		sc := bufio.NewScanner(&b)
		sc.Buffer(nil, 1<<20)
		n := 0
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Fatalf("not JSON: %q: %v", sc.Text(), err)
			}
			n++
		}
		if n != len(recs) {
			t.Fatalf("%d JSON lines for %d records", n, len(recs))
		}
	})
}
