//go:build integration

package bench

import (
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"
)

// TestProfileSmall is where a healthy small-cluster run spends its time:
// fifteen runs of the binary (wall, and the first run's requests and check
// durations), then thirty in this process under the CPU profiler, whose
// top is printed. It found Redact's regular expressions at a third of the
// run's CPU. A tool, not a figure of RESULTS.md' tables:
//
//	DOCTOR_BENCH=1 DOCTOR_LOOPBACK_ONLY=1 go test -tags integration -run TestProfileSmall -v ./bench/
//
// DOCTOR_BENCH_PROFILES names a directory to keep the profile in.
func TestProfileSmall(t *testing.T) {
	if os.Getenv("DOCTOR_BENCH") != "1" {
		t.Skip("benchmark: DOCTOR_BENCH=1")
	}
	b := setup(t)
	seedSmall(t, b.env)
	b.runDoctor() // warm: the apiserver's caches, this machine's page cache
	var walls []float64
	for i := 0; i < 15; i++ {
		r := b.runDoctor()
		walls = append(walls, r.Wall.Seconds())
		if i == 0 {
			t.Logf("first run:\n%s\n%s", checkTable(r), requestTable(r))
		}
	}
	sort.Float64s(walls)
	t.Logf("doctor run, 15 runs: median %s, min %s, max %s", ms(median(walls)), ms(walls[0]), ms(walls[len(walls)-1]))

	path := filepath.Join(b.profileDir(), "doctor-small.cpu.pprof")
	const n = 30
	each := b.cpuProfile(path, n)
	t.Logf("%d in-process runs, %s each; CPU profile (%s) by cumulative time:\n%s", n, each.Round(time.Millisecond), path,
		b.pprofTop(50, "-cum", "-nodecount=40", path))
}
