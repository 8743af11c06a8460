//go:build integration

package bench

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"sort"
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/internal/cli"
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

	dir := os.Getenv("DOCTOR_BENCH_PROFILES")
	if dir == "" {
		dir = b.dir
	}
	path := filepath.Join(dir, "doctor-small.cpu.pprof")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		t.Fatal(err)
	}
	const n = 30
	start := time.Now()
	for i := 0; i < n; i++ {
		if code := cli.Main(b.doctorArgs(), cli.IO{Out: io.Discard, Err: io.Discard, Getenv: func(string) string { return "" }}); code > 2 {
			t.Fatalf("in-process doctor exit %d", code)
		}
	}
	each := time.Since(start) / n
	pprof.StopCPUProfile()
	f.Close()
	out, err := exec.Command("go", "tool", "pprof", "-top", "-cum", "-nodecount=40", path).CombinedOutput()
	if err != nil {
		t.Errorf("pprof: %v", err)
	}
	t.Logf("%d in-process runs, %s each; CPU profile (%s) by cumulative time:\n%s", n, each.Round(time.Millisecond), path, head(string(out), 50))
}
