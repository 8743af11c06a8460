package symptom

import (
	"fmt"
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/checks"
)

func catalogOf(patterns map[string][]string) []*checks.Check {
	var out []*checks.Check
	for _, id := range []string{"first", "second", "third"} {
		if ps, ok := patterns[id]; ok {
			out = append(out, &checks.Check{ID: id, Doc: checks.Doc{Patterns: ps}})
		}
	}
	return out
}

func TestScanNumbersLinesAndNamesEveryCheckOfALine(t *testing.T) {
	m, err := New(catalogOf(map[string][]string{
		"first":  {"timed out waiting for pod to start"},
		"second": {"waiting for pod running: *timed out"},
		"third":  {"image pull failed: "},
	}))
	if err != nil {
		t.Fatal(err)
	}
	log := "Running with gitlab-runner 19.3.0\n" +
		"\x1b[31;1mERROR: Job failed (system failure): prepare environment: waiting for pod running: timed out waiting for pod to start (last phase: Pending)\x1b[0;m\r\n" +
		"no newline at the end: image pull failed: x"
	s, err := m.Scan("job.log", strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	if s.Lines != 3 || len(s.Matches) != 2 {
		t.Fatalf("%d lines, matches %+v", s.Lines, s.Matches)
	}
	if got := s.Matches[0]; got.Line != 2 || fmt.Sprint(got.Checks) != "[first second]" || strings.ContainsAny(got.Text, "\x1b\r") {
		t.Errorf("line 2: %+v", got)
	}
	if got := s.Matches[1]; got.Line != 3 || fmt.Sprint(got.Checks) != "[third]" {
		t.Errorf("line 3: %+v", got)
	}
	if fmt.Sprint(s.Checks) != "[first second third]" || s.Counts["first"] != 1 {
		t.Errorf("checks %v counts %v", s.Checks, s.Counts)
	}
}

func TestScanRefusesAnAllWildcardPattern(t *testing.T) {
	if _, err := New(catalogOf(map[string][]string{"first": {"* *"}})); err == nil {
		t.Error("New accepted an all-wildcard pattern")
	}
}

// A line longer than MaxLine is cut, the lines after it still counted and
// matched; a repeated symptom keeps MaxMatches lines, but the first line
// of another check is kept after them.
func TestScanBoundsLinesAndMatches(t *testing.T) {
	m, _ := New(catalogOf(map[string][]string{"first": {"Checking for jobs... forbidden"}, "second": {"image pull failed: "}}))
	var b strings.Builder
	b.WriteString(strings.Repeat("x", 3*MaxLine) + " image pull failed: beyond the cut\n")
	for i := 0; i < MaxMatches+50; i++ {
		b.WriteString("ERROR: Checking for jobs... forbidden  runner=Zx8y1Abc status=403 Forbidden\n")
	}
	b.WriteString("image pull failed: Back-off pulling image \"golang:1.24\"\n")
	s, err := m.Scan("runner.log", strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if s.LongLines != 1 || s.Lines != MaxMatches+52 {
		t.Errorf("long lines %d, lines %d", s.LongLines, s.Lines)
	}
	if len(s.Matches) != MaxMatches+1 || s.Omitted != 50 || s.Counts["first"] != MaxMatches+50 {
		t.Errorf("%d matches kept, %d omitted, counts %v", len(s.Matches), s.Omitted, s.Counts)
	}
	if last := s.Matches[len(s.Matches)-1]; last.Line != s.Lines || last.Checks[0] != "second" {
		t.Errorf("the last check's first line was not kept: %+v", last)
	}
}

type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = "image pull failed: x\n"[i%21]
	}
	return len(p), nil
}

func TestScanStopsAtMaxInput(t *testing.T) {
	m, _ := New(catalogOf(map[string][]string{"first": {"image pull failed: "}}))
	s, err := m.Scan("-", endless{})
	if err != nil {
		t.Fatal(err)
	}
	if !s.Truncated || s.Lines > MaxInput/21+1 {
		t.Errorf("truncated %v after %d lines", s.Truncated, s.Lines)
	}
}
