//go:build integration

package bench

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sort"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/socialwebcomputer/doctor/cmd/doctor/cli"
	"github.com/socialwebcomputer/doctor/testkit/testenv"
)

const (
	ownerDID = "did:plc:benchb3nchb3nchb3nchb3nch"
	runnerNS = "gitlab-runner"
	doctorUA = "gitlab-runner-doctor" // kubefacts.NewAPI's user agent
)

// Targets of issue 13 ("Fast where operators are"), which tightened the
// first issue's (0.1, 1 s, 150 MiB, 30 requests).
const (
	targetRatio    = 0.05
	targetWall     = 300 * time.Millisecond
	targetRSSKiB   = 100 << 10
	targetRequests = 25
)

type bench struct {
	t       *testing.T
	env     *testenv.Env
	dir     string
	doctor  string // the built binary
	peakrss string // testkit/testenv/peakrss, which measures the binary's own peak RSS
	root    string // fake runner host
	runbook string // runbook.sh, absolute
	dns     string // loopback DNS server, host:port
	cmdEnv  []string
	// The owner's client certificate, for kubeconfigs that name another
	// server (the latency proxy, the Caddy front).
	cert, key []byte
}

// doctorArgs is the measured command. Every DNS setting names the loopback
// DNS server: the defaults (1.1.1.1, 169.254.20.10, the host's resolv.conf)
// are off loopback, which a benchmark must never contact.
func (b *bench) doctorArgs() []string {
	return []string{"run", "--root", b.root, "-o", "json", "--timeout", "60s",
		"--resolver", b.dns, "--public-dns", b.dns, "--dns-server", b.dns}
}

// TestBench is a benchmark, not a test: it needs minutes and a quiet
// machine, so it runs only from bench/run.sh (DOCTOR_BENCH=1).
func TestBench(t *testing.T) {
	if os.Getenv("DOCTOR_BENCH") != "1" {
		t.Skip("benchmark: run bench/run.sh (it sets DOCTOR_BENCH=1)")
	}
	b := setup(t)
	var rows [][3]string // figure, value, target verdict
	row := func(fig, val, verdict string) { rows = append(rows, [3]string{fig, val, verdict}) }

	// (1) The cluster at small scale: the guide's runner, a few nodes and
	// pods. One doctor run against the eight commands an operator types.
	unseed := seedSmall(t, b.env)
	dq, rq := b.validate("small")
	row("small: API requests, doctor / runbook", fmt.Sprintf("%d / %d", dq, rq), "audit log, one run each")
	load0 := loadavg()
	d, r := b.pair("small", 3, 20)
	row("small: machine load before / after", load0+" / "+loadavg(), "1, 5, 15 min averages on "+fmt.Sprint(runtime.NumCPU())+" CPUs")
	row("small: runbook median (8 kubectl calls)", ms(r.Median), fmt.Sprintf("%d runs, mean %s ± %s", r.Runs, ms(r.Mean), ms(r.Stdev)))
	row("small: doctor run median", ms(d.Median), fmt.Sprintf("%d runs, mean %s ± %s", d.Runs, ms(d.Mean), ms(d.Stdev)))
	row("small: doctor / runbook", fmt.Sprintf("%.3f", d.Median/r.Median), verdict(d.Median/r.Median <= targetRatio, "≤ 0.05"))

	// (2) 10,000 pods and 1,000 nodes, exactly: the small seed goes first.
	unseed()
	cs, err := fastClient(b.env)
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	if err := load(t.Context(), cs, tenK, runnerNS); err != nil {
		t.Fatalf("load: %v", err)
	}
	loadTime := time.Since(began)
	pods, err := cs.CoreV1().Pods("").List(t.Context(), metav1.ListOptions{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := cs.CoreV1().Nodes().List(t.Context(), metav1.ListOptions{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	// A limited list without selectors counts the rest for us.
	total, totalNodes := int64(len(pods.Items))+*pods.RemainingItemCount, int64(len(nodes.Items))+*nodes.RemainingItemCount
	t.Logf("loaded %d pods (%d in %s), %d nodes, %d events in %s", total, tenK.RunnerRunning+tenK.RunnerPending, runnerNS,
		totalNodes, tenK.RunnerPending+tenK.Warnings, loadTime.Round(time.Second))
	row("10k: cluster loaded", fmt.Sprintf("%d pods, %d nodes", total, totalNodes), fmt.Sprintf("in %s", loadTime.Round(time.Second)))

	dq, rq = b.validate("10k")
	row("10k: API requests, doctor / runbook", fmt.Sprintf("%d / %d", dq, rq), "audit log, one run each")
	load0 = loadavg()
	var runs []doctorRun
	for i := 0; i < 9; i++ {
		runs = append(runs, b.runDoctor())
	}
	walls, rss, nreq, reqs := make([]float64, len(runs)), int64(0), 0, map[int]int{}
	for i, x := range runs {
		walls[i] = x.Wall.Seconds()
		rss, nreq = max(rss, x.MaxRSS), max(nreq, len(x.Requests))
		reqs[len(x.Requests)]++
	}
	sort.Float64s(walls)
	row("10k: doctor run wall, median", ms(median(walls)),
		verdict(median(walls) <= targetWall.Seconds(), "≤ 300 ms")+fmt.Sprintf("; %d runs, min %s, max %s", len(walls), ms(walls[0]), ms(walls[len(walls)-1])))
	row("10k: doctor peak RSS, max of runs", fmt.Sprintf("%.1f MiB", float64(rss)/1024), verdict(rss <= targetRSSKiB, "≤ 100 MiB"))
	row("10k: API requests per doctor run, max of runs", fmt.Sprint(nreq), verdict(nreq <= targetRequests, "≤ 25")+fmt.Sprintf("; per-run counts %v", reqs))
	row("10k: machine load before / after the doctor runs", load0+" / "+loadavg(), "")
	t.Logf("requests of the first 10k run (audit log, completion order):\n%s", requestTable(runs[0]))
	t.Logf("check durations of the first 10k run:\n%s", checkTable(runs[0]))

	d, r = b.pair("10k", 1, 5)
	row("10k: runbook median", ms(r.Median), fmt.Sprintf("%d runs", r.Runs))
	row("10k: doctor median (same paired session)", ms(d.Median), fmt.Sprintf("%d runs", d.Runs))
	row("10k: doctor / runbook", fmt.Sprintf("%.3f", d.Median/r.Median), "(no target at 10k)")

	b.profile()

	var sb strings.Builder
	sb.WriteString("| figure | value | target / note |\n|---|---|---|\n")
	for _, x := range rows {
		fmt.Fprintf(&sb, "| %s | %s | %s |\n", x[0], x[1], x[2])
	}
	t.Logf("RESULTS\n%s", sb.String())
}

// validate runs both sides once before timing them: doctor must produce a
// report in which every API check ran, and the runbook must succeed. It
// returns how many API requests each sent.
func (b *bench) validate(label string) (doctorReqs, runbookReqs int) {
	t := b.t
	r := b.runDoctor()
	findings := map[string]int{}
	for _, x := range r.Report.Findings {
		findings[x.Check+"("+x.Severity.String()+")"]++
	}
	t.Logf("%s: doctor exit %d, %d checks pass, findings %v, %d API requests", label, r.Exit, r.Report.Summary.Pass, findings, len(r.Requests))
	// Twice: the first run may fill kubectl's discovery cache; the second
	// sends what an operator's warm kubectl sends.
	var out []byte
	var kubectl []auditEvent
	for range 2 {
		offset := b.auditSize()
		cmd := exec.Command("bash", b.runbook)
		cmd.Env = b.cmdEnv
		var err error
		if out, err = cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: runbook failed: %v\n%s", label, err, out)
		}
		kubectl = b.waitRequests(offset, "kubectl/")
	}
	t.Logf("%s: runbook ok, %d API requests, %d lines of output; head:\n%s", label, len(kubectl), strings.Count(string(out), "\n"), head(string(out), 12))
	return len(r.Requests), len(kubectl)
}

// profile runs doctor in this process (cli.Main, as cmd/doctor does) under
// the CPU profiler and between two heap profiles, and prints the top of each:
// where a 10k run spends its CPU and what it allocates.
func (b *bench) profile() {
	t := b.t
	dir := b.profileDir()
	cpu, heap0, heap1 := filepath.Join(dir, "doctor-10k.cpu.pprof"), filepath.Join(dir, "doctor-10k.heap0.pprof"), filepath.Join(dir, "doctor-10k.heap1.pprof")
	writeHeap := func(p string) {
		runtime.GC()
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := pprof.WriteHeapProfile(f); err != nil {
			t.Fatal(err)
		}
	}
	const n = 5
	writeHeap(heap0)
	b.cpuProfile(cpu, n)
	writeHeap(heap1)
	t.Logf("CPU profile of %d in-process 10k runs (%s), by cumulative time:\n%s", n, cpu, b.pprofTop(40, "-cum", "-nodecount=30", cpu))
	t.Logf("allocations of those %d runs (alloc_space, %s minus %s):\n%s", n, heap1, heap0,
		b.pprofTop(40, "-sample_index=alloc_space", "-nodecount=25", "-base", heap0, heap1))
}

// profileDir is where profiles are kept: $DOCTOR_BENCH_PROFILES, or the
// benchmark's own directory.
func (b *bench) profileDir() string {
	if dir := os.Getenv("DOCTOR_BENCH_PROFILES"); dir != "" {
		return dir
	}
	return b.dir
}

// cpuProfile runs doctor n times in this process (cli.Main, as cmd/doctor
// does) under the CPU profiler, writing the profile to path, and returns
// the time of one run.
func (b *bench) cpuProfile(path string, n int) time.Duration {
	t := b.t
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := pprof.StartCPUProfile(f); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for i := 0; i < n; i++ {
		if code := cli.Main(b.doctorArgs(), cli.IO{Out: io.Discard, Err: io.Discard, Getenv: func(string) string { return "" }}); code > 2 {
			pprof.StopCPUProfile()
			t.Fatalf("in-process doctor exit %d", code)
		}
	}
	each := time.Since(start) / time.Duration(n)
	pprof.StopCPUProfile()
	return each
}

// pprofTop is the first lines of go tool pprof -top with args.
func (b *bench) pprofTop(lines int, args ...string) string {
	out, err := exec.Command("go", append([]string{"tool", "pprof", "-top"}, args...)...).CombinedOutput()
	if err != nil {
		b.t.Errorf("pprof: %v", err)
	}
	return head(string(out), lines)
}

func checkTable(r doctorRun) string {
	cs := append(r.Report.Checks[:0:0], r.Report.Checks...)
	sort.Slice(cs, func(i, j int) bool { return cs[i].DurationMs > cs[j].DurationMs })
	var sb strings.Builder
	fmt.Fprintf(&sb, "report durationMs %d, process wall %s\n", r.Report.DurationMs, r.Wall.Round(time.Millisecond))
	for _, c := range cs {
		fmt.Fprintf(&sb, "  %-24s %-8s %4d ms\n", c.ID, c.Status, c.DurationMs)
	}
	return sb.String()
}

func ms(s float64) string { return fmt.Sprintf("%.1f ms", s*1000) }

func verdict(ok bool, target string) string {
	if ok {
		return "met (" + target + ")"
	}
	return "**MISSED** (" + target + ")"
}

func head(s string, n int) string {
	lines := strings.SplitAfter(s, "\n")
	if len(lines) > n {
		lines = append(lines[:n], fmt.Sprintf("… (%d more lines)\n", len(lines)-n))
	}
	return strings.Join(lines, "")
}
