package checks_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/internal/hostio"
)

// --v=5 logs when each node was scheduled, began its own work and ended:
// a node that waits for a slow requirement begins its work only after
// that requirement ended, which is what the log must show for a reader to
// find where a slow run waited.
func TestVerbosity5LogsWhenEachNodeWorked(t *testing.T) {
	slow := mk("slow", func(*checks.Pass) error { time.Sleep(30 * time.Millisecond); return nil })
	after := mk("after", ok, slow)
	var mu sync.Mutex
	var lines []string
	env := &hostio.Env{Root: t.TempDir(), Log: func(level int, format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		if level == 5 {
			lines = append(lines, fmt.Sprintf(format, args...))
		}
	}}
	if _, err := checks.Run(context.Background(), env, []*checks.Check{slow, after}, checks.Options{}); err != nil {
		t.Fatal(err)
	}
	times := map[string][3]float64{}
	for _, l := range lines {
		var id, status string
		var s, w, e float64
		if _, err := fmt.Sscanf(l, "node %s %s scheduled %f, working %f, ended %f ms", &id, &status, &s, &w, &e); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		if !(s <= w && w <= e) {
			t.Errorf("%q: not scheduled <= working <= ended", l)
		}
		times[strings.TrimSuffix(id, ":")] = [3]float64{s, w, e}
	}
	if len(times) != 2 {
		t.Fatalf("want a line for each of 2 nodes, got %q", lines)
	}
	if times["slow"][2]-times["slow"][1] < 30 {
		t.Errorf("slow worked %.1f ms, slept 30: %q", times["slow"][2]-times["slow"][1], lines)
	}
	if times["after"][1] < times["slow"][2] {
		t.Errorf("after began its work at %.1f ms, before slow ended at %.1f: %q", times["after"][1], times["slow"][2], lines)
	}
}
