//go:build integration

package bench

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/testkit/testenv"
)

// TestProfileWarmRun is where a warm small-cluster run spends its wall
// time: the small cluster through the latency proxy at 150 ms RTT, doctor's
// cache warm (a cron's second run), fifteen runs of the binary (wall, and user and system CPU) (and, with
// DOCTOR_BENCH_BEFORE naming another doctor binary, of that one too,
// alternately, each with its own cache), then one --v=5 run of each whose
// log says when every fact and check was scheduled, began its own work and
// ended (DOCTOR_BENCH_COLD=1: every run with an empty cache, as a first
// run is). It found the documented messages' expressions compiled after the
// one wave of answers (cluster-lists ending 24 ms after the other API
// facts). DOCTOR_BENCH_PERF names a directory for perf's samples of twenty
// runs of each binary (perf record -g). A tool, not a figure of RESULTS.md'
// tables:
//
//	DOCTOR_BENCH=1 DOCTOR_LOOPBACK_ONLY=1 go test -tags integration -run TestProfileWarmRun -v -count=1 ./bench/
func TestProfileWarmRun(t *testing.T) {
	if os.Getenv("DOCTOR_BENCH") != "1" {
		t.Skip("benchmark: DOCTOR_BENCH=1")
	}
	b := setup(t)
	defer seedSmall(t, b.env)()
	rtt := 150 * time.Millisecond
	proxy := testenv.StartLatencyProxy(t, strings.TrimPrefix(b.env.URL, "https://"), rtt/2)
	_, port, _ := strings.Cut(proxy.Addr, ":")
	b.useServer("https://127.0.0.1:" + port)
	type binary struct{ name, path string }
	bins := []binary{{"this", b.doctor}}
	if before := os.Getenv("DOCTOR_BENCH_BEFORE"); before != "" {
		bins = []binary{{"before", before}, {"this", b.doctor}}
	}
	env := b.cmdEnv
	// DOCTOR_BENCH_COLD=1 gives every run an empty cache: the cold run,
	// whose log reads wait for kube-system's list (a second wave).
	cold := os.Getenv("DOCTOR_BENCH_COLD") == "1"
	runs := 0
	cacheOf := func(name string) []string {
		runs++
		dir := "cache-" + name
		if cold {
			dir += fmt.Sprint("-", runs)
		}
		return append(env[:len(env):len(env)], "XDG_CACHE_HOME="+filepath.Join(b.dir, dir))
	}
	walls, cpus := map[string][]float64{}, map[string][]float64{}
	tails := map[string][]string{}
	for i := -1; i < 15; i++ { // run -1 warms each binary's cache
		for _, bin := range bins {
			b.doctor, b.cmdEnv = bin.path, cacheOf(bin.name)
			proxy.Reset()
			r := b.runDoctorVia("apiserver")
			if i >= 0 {
				walls[bin.name] = append(walls[bin.name], r.Wall.Seconds())
				cpus[bin.name] = append(cpus[bin.name], r.CPU.Seconds())
				tails[bin.name] = append(tails[bin.name], fmt.Sprintf("%.1f ms, engine %d ms: %s", ms0(r.Wall), r.Report.DurationMs, connStats(proxy.Events(), r)))
			}
		}
	}
	for _, bin := range bins {
		w := append([]float64(nil), walls[bin.name]...)
		sort.Float64s(w)
		c := append([]float64(nil), cpus[bin.name]...)
		sort.Float64s(c)
		t.Logf("%s: wall median %s (%.2f RTT), min %s, max %s; CPU (user+sys) median %s, min %s, max %s\n%s", bin.name,
			ms(median(w)), median(w)/rtt.Seconds(), ms(w[0]), ms(w[len(w)-1]), ms(median(c)), ms(c[0]), ms(c[len(c)-1]),
			strings.Join(tails[bin.name], "\n"))
	}
	if dir := os.Getenv("DOCTOR_BENCH_PERF"); dir != "" {
		// perf's samples of 20 runs of each binary, every process of the
		// loop followed: perf report -i DIR/NAME.perf.data --sort sym.
		for _, bin := range bins {
			args := append([]string{"record", "-F", "4999", "-g", "-o", filepath.Join(dir, bin.name+".perf.data"), "--",
				"sh", "-c", `for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do "$0" "$@" >/dev/null 2>&1; done; true`, bin.path}, b.doctorArgs()...)
			cmd := exec.Command("perf", args...)
			cmd.Env = cacheOf(bin.name)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("perf record: %v\n%s", err, out)
			}
		}
	}
	for _, bin := range bins {
		cmd := exec.Command(bin.path, append(b.doctorArgs(), "--v=5")...)
		cmd.Env = cacheOf(bin.name)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		start := time.Now()
		_ = cmd.Run()
		wall := time.Since(start)
		t.Logf("%s, one --v=5 run (%s), nodes by when they ended:\n%s", bin.name, wall.Round(100*time.Microsecond), nodeTimes(stderr.String()))
	}
}

// nodeTimes is the --v=5 lines of a run's stderr, sorted by when each
// node ended.
func nodeTimes(stderr string) string {
	type line struct {
		ended float64
		text  string
	}
	var ls []line
	for _, l := range strings.Split(stderr, "\n") {
		_, rest, ok := strings.Cut(l, "doctor[v5]: node ")
		if !ok {
			continue
		}
		var e float64
		if i := strings.LastIndex(rest, "ended "); i >= 0 {
			fmt.Sscanf(rest[i:], "ended %f", &e)
		}
		ls = append(ls, line{e, rest})
	}
	sort.SliceStable(ls, func(i, j int) bool { return ls[i].ended < ls[j].ended })
	var sb strings.Builder
	for _, l := range ls {
		sb.WriteString("  " + l.text + "\n")
	}
	if len(ls) == 0 {
		return "  (no --v=5 node lines: a binary from before they were logged)\n"
	}
	return sb.String()
}
