package trace

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/internal/text/wrap"
)

var update = flag.Bool("update", false, "rewrite testdata/live-*.txt")

// The live view at 80 and 200 columns (testdata/live-80.txt, live-200.txt):
// a terminal of that width breaks no word, path or URL of it (wrap.Breaks).
func TestLiveViewWidth(t *testing.T) {
	local := time.Local
	time.Local = time.UTC // the view prints this host's time of day
	defer func() { time.Local = local }()
	recs := sampleRecords()
	// A long detail, as a FailedScheduling event's message is.
	recs = append(recs, Record{Kind: KindNote, Step: Step{At: t0, Detail: "last warning FailedScheduling: 0/3 nodes are available: 1 node(s) had untolerated taint {node.kubernetes.io/unreachable: }, 2 Insufficient cpu. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."}})
	for _, width := range []int{80, 200} {
		var b bytes.Buffer
		renderAll(newRenderer(Output{W: &b, TTY: true, UTF8: true, Width: width}), recs)
		out := b.String()
		for _, br := range wrap.Breaks(out, width, nil) {
			t.Errorf("%d columns: line %d breaks %q", width, br.Line, br.Token)
		}
		golden := filepath.Join("testdata", fmt.Sprintf("live-%d.txt", width))
		if *update {
			if err := os.WriteFile(golden, []byte(out), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (go test ./cmd/doctor/app/trace -run TestLiveViewWidth -update writes it)", err)
		}
		if string(want) != out {
			t.Errorf("%s differs; if the change is meant, run with -update:\n%s", golden, out)
		}
		if !strings.Contains(strings.Join(strings.Fields(out), " "), "1 node(s) had untolerated taint") {
			t.Errorf("the long note is missing:\n%s", out)
		}
	}
}
