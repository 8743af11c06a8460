//go:build integration

package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/report"
)

// TestBenchScale is issue 24's benchmark: one real apiserver grown to a real
// cluster's shape (grow) at 1k, 10k, 30k and 60k pods, and at each size the
// doctor binary run against it: wall, CPU, peak RSS, requests (audit log),
// bytes on the wire, kept by the cut and decoded, and collections (the
// DOCTOR_STATS line). With DOCTOR_BENCH_BEFORE naming another doctor binary
// (the code before a change), the two run alternately, run by run, on the
// same cluster. Every run's findings and check statuses must equal those
// recorded in testdata/scale-findings.json for its size (DOCTOR_BENCH_RECORD=1
// records them, from the first binary: record with the code before a change).
//
//	DOCTOR_BENCH=1 DOCTOR_LOOPBACK_ONLY=1 go test -tags integration -run TestBenchScale -v -count=1 -timeout 60m ./bench/
//
// DOCTOR_BENCH_SIZES (default 1000,10000,30000,60000), DOCTOR_BENCH_RUNS
// (runs of each binary at each size, default 5), DOCTOR_BENCH_PROFILE_AT (a
// size: a CPU profile of the current code's in-process runs there).
func TestBenchScale(t *testing.T) {
	if os.Getenv("DOCTOR_BENCH") != "1" {
		t.Skip("benchmark: DOCTOR_BENCH=1")
	}
	sizes := []int{1000, 10000, 30000, 60000}
	if s := os.Getenv("DOCTOR_BENCH_SIZES"); s != "" {
		sizes = nil
		for _, f := range strings.Split(s, ",") {
			n, err := strconv.Atoi(f)
			if err != nil {
				t.Fatal(err)
			}
			sizes = append(sizes, n)
		}
	}
	runs := 5
	if s := os.Getenv("DOCTOR_BENCH_RUNS"); s != "" {
		runs, _ = strconv.Atoi(s)
	}
	b := setup(t)
	bins := []scaleBinary{{"this", b.doctor}}
	if before := os.Getenv("DOCTOR_BENCH_BEFORE"); before != "" {
		bins = []scaleBinary{{"before", before}, {"after", b.doctor}}
	}
	record := os.Getenv("DOCTOR_BENCH_RECORD") == "1"
	want := map[string][]string{}
	const findingsFile = "testdata/scale-findings.json"
	if !record {
		raw, err := os.ReadFile(findingsFile)
		if err != nil {
			t.Fatalf("%v (record it with DOCTOR_BENCH_RECORD=1 and the code before a change)", err)
		}
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatal(err)
		}
	}
	kubelet := b.env.StartFakeKubelet(t)
	css, err := growClients(b.env, 4)
	if err != nil {
		t.Fatal(err)
	}
	var prev scaleShape
	var table []scaleRow
	for _, size := range sizes {
		sh := shapeOf(size)
		began := time.Now()
		if err := grow(t.Context(), css, prev, sh, kubelet.Port); err != nil {
			t.Fatalf("growing to %d pods: %v", size, err)
		}
		t.Logf("grew %d → %d pods (%d nodes, %d kube-system pods, %d app pods in %d namespaces, %d job pods) in %s",
			prev.Pods, sh.Pods, sh.Nodes, sh.System, sh.Apps, (sh.Apps+appsPerNS-1)/appsPerNS, runnerJobs, time.Since(began).Round(100*time.Millisecond))
		prev = sh
		key := strconv.Itoa(size)
		load0 := loadavg()
		got := map[string][]scaleRun{}
		var first []string
		for i := -1; i < runs; i++ { // run -1 warms each binary and the apiserver's caches
			for _, bin := range bins {
				r := b.scaleRun(bin.path)
				if record && i == -1 && bin == bins[0] {
					want[key] = portless(r.Outcome)
				}
				if i == -1 && bin == bins[0] {
					first = r.Outcome
				} else if d := diffLines(first, r.Outcome); d != "" {
					// The same cluster, the same ports: every run of every
					// binary must say exactly what the first said.
					t.Errorf("%d pods, %s run %d: findings and statuses differ from the first run's (%s):\n%s", size, bin.name, i, bins[0].name, d)
				}
				if w, ok := want[key]; !ok {
					t.Errorf("%d pods: no findings recorded in %s for this size", size, findingsFile)
				} else if d := diffLines(w, portless(r.Outcome)); d != "" {
					t.Errorf("%d pods, %s run %d: findings and statuses differ from %s:\n%s", size, bin.name, i, findingsFile, d)
				}
				if i == -1 {
					t.Logf("%d pods, %s: requests of the warm-up run (audit log, completion order):\n%s\n%s", size, bin.name, requestTable(r.doctorRun), checkTable(r.doctorRun))
					continue
				}
				got[bin.name] = append(got[bin.name], r)
			}
		}
		for _, bin := range bins {
			table = append(table, summarizeScale(size, sh, bin.name, got[bin.name]))
		}
		t.Logf("%d pods: load average %s before, %s after", size, load0, loadavg())
		if at := os.Getenv("DOCTOR_BENCH_PROFILE_AT"); at == key {
			path := filepath.Join(b.profileDir(), fmt.Sprintf("doctor-%s.cpu.pprof", key))
			b.cpuProfile(path, 5)
			t.Logf("CPU profile of 5 in-process runs at %d pods (%s), by cumulative time:\n%s", size, path, b.pprofTop(60, "-cum", "-nodecount=50", path))
		}
	}
	if record {
		raw, _ := json.MarshalIndent(want, "", "  ")
		if err := os.WriteFile(findingsFile, append(raw, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("recorded %s", findingsFile)
	}
	t.Logf("SCALE\n%s", scaleTable(table))
}

type scaleBinary struct{ name, path string }

// scaleRun is one run at a size: the measured run, its stats line and its
// outcome (findingLines).
type scaleRun struct {
	doctorRun
	CPU     time.Duration // user + system, of the child (and peakrss, a millisecond)
	Stats   map[string]int64
	Outcome []string
}

var statsLine = regexp.MustCompile(`(?m)^doctor-stats: (.*)$`)

func (b *bench) scaleRun(doctor string) scaleRun {
	t := b.t
	offset := b.auditSize()
	rssFile := filepath.Join(t.TempDir(), "peakrss")
	cmd := exec.Command(b.peakrss, append([]string{doctor}, b.doctorArgs()...)...)
	cmd.Env = append(b.cmdEnv[:len(b.cmdEnv):len(b.cmdEnv)], "PEAKRSS_OUT="+rssFile, "DOCTOR_STATS=1")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	r := scaleRun{doctorRun: doctorRun{Start: start, Wall: time.Since(start)}, Stats: map[string]int64{}}
	if ee, ok := err.(*exec.ExitError); ok {
		r.Exit = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("doctor: %v", err)
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.CPU = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	if rss, err := os.ReadFile(rssFile); err == nil {
		r.MaxRSS, _ = strconv.ParseInt(strings.TrimSpace(string(rss)), 10, 64)
	}
	if m := statsLine.FindSubmatch(errb.Bytes()); m != nil {
		for _, kv := range strings.Fields(string(m[1])) {
			k, v, _ := strings.Cut(kv, "=")
			r.Stats[k], _ = strconv.ParseInt(v, 10, 64)
		}
	}
	r.Report = &report.Report{}
	if err := json.Unmarshal(out.Bytes(), r.Report); err != nil {
		t.Fatalf("doctor exit %d, stderr %s, report does not parse: %v", r.Exit, errb.String(), err)
	}
	for _, c := range r.Report.Checks {
		if c.Status == "unknown" && (apiChecks[c.ID] || c.ID == "kubelet-reach" || c.ID == "node-local-dns") {
			t.Errorf("%s unknown: %s", c.ID, c.Reason)
		}
	}
	r.Outcome = findingLines(r.Report)
	r.Requests = b.waitRequests(offset, doctorUA)
	return r
}

// findingLines is what must not change: every check's status and reason,
// and every finding as the report gives it but its rank, with the durations
// of log reads ("after 3ms") taken out.
func findingLines(rep *report.Report) []string {
	var out []string
	for _, c := range rep.Checks {
		out = append(out, fmt.Sprintf("check %s %s %s", c.ID, c.Status, c.Reason))
	}
	for _, f := range rep.Findings {
		f.Rank = 0
		raw, _ := json.Marshal(f)
		out = append(out, "finding "+durations.ReplaceAllString(string(raw), "after <d>"))
	}
	sort.Strings(out)
	return out
}

var durations = regexp.MustCompile(`after [0-9.]+(ms|s|µs)`)

// portless is findingLines as the committed file keeps them: the loopback
// ports of this run's apiserver and DNS server (and the fingerprints,
// which hash evidence sources that name them) are another run's next time.
func portless(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = fingerprints.ReplaceAllString(loopbackPorts.ReplaceAllString(l, "127.0.0.1:<port>"), `"fingerprint":"<hash>"`)
	}
	return out
}

var (
	loopbackPorts = regexp.MustCompile(`127\.0\.0\.1:[0-9]+`)
	fingerprints  = regexp.MustCompile(`"fingerprint":"[0-9a-f]+"`)
)

func diffLines(want, got []string) string {
	w, g := map[string]bool{}, map[string]bool{}
	for _, x := range want {
		w[x] = true
	}
	for _, x := range got {
		g[x] = true
	}
	var sb strings.Builder
	for _, x := range want {
		if !g[x] {
			fmt.Fprintf(&sb, "- %s\n", x)
		}
	}
	for _, x := range got {
		if !w[x] {
			fmt.Fprintf(&sb, "+ %s\n", x)
		}
	}
	return sb.String()
}

type scaleRow struct {
	Size                    int
	Shape                   scaleShape
	Binary                  string
	Wall, CPU               float64 // medians, seconds
	WallMin, WallMax        float64
	RSS                     int64 // max, KiB
	Requests                int   // max
	Wire, Kept, Decoded, GC int64 // medians
}

func summarizeScale(size int, sh scaleShape, name string, rs []scaleRun) scaleRow {
	row := scaleRow{Size: size, Shape: sh, Binary: name}
	var walls, cpus []float64
	var wire, kept, dec, gc []float64
	for _, r := range rs {
		walls, cpus = append(walls, r.Wall.Seconds()), append(cpus, r.CPU.Seconds())
		wire, kept = append(wire, float64(r.Stats["wire_bytes"])), append(kept, float64(r.Stats["kept_bytes"]))
		dec, gc = append(dec, float64(r.Stats["decoded_bytes"])), append(gc, float64(r.Stats["gc_cycles"]))
		row.RSS, row.Requests = max(row.RSS, r.MaxRSS), max(row.Requests, len(r.Requests))
	}
	for _, xs := range [][]float64{walls, cpus, wire, kept, dec, gc} {
		sort.Float64s(xs)
	}
	row.Wall, row.CPU, row.WallMin, row.WallMax = median(walls), median(cpus), walls[0], walls[len(walls)-1]
	row.Wire, row.Kept, row.Decoded, row.GC = int64(median(wire)), int64(median(kept)), int64(median(dec)), int64(median(gc))
	return row
}

// scaleTable is the table of RESULTS.md, and per binary the slope (cost per
// 1k pods from the smallest size to the largest) and the largest-but-one
// size's wall against the smallest's (30k / 1k).
func scaleTable(rows []scaleRow) string {
	var sb strings.Builder
	sb.WriteString("| pods (nodes) | binary | wall median (min–max) | CPU median | peak RSS max | requests | wire | kept | decoded | GCs |\n|---|---|---|---|---|---|---|---|---|---|\n")
	mb := func(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }
	for _, r := range rows {
		fmt.Fprintf(&sb, "| %dk (%d) | %s | %.0f ms (%.0f–%.0f) | %.0f ms | %.1f MiB | %d | %s | %s | %s | %d |\n",
			r.Size/1000, r.Shape.Nodes, r.Binary, r.Wall*1000, r.WallMin*1000, r.WallMax*1000, r.CPU*1000, float64(r.RSS)/1024, r.Requests,
			mb(r.Wire), mb(r.Kept), mb(r.Decoded), r.GC)
	}
	by := map[string][]scaleRow{}
	var names []string
	for _, r := range rows {
		if by[r.Binary] == nil {
			names = append(names, r.Binary)
		}
		by[r.Binary] = append(by[r.Binary], r)
	}
	for _, n := range names {
		rs := by[n]
		first, last := rs[0], rs[len(rs)-1]
		if len(rs) < 2 {
			continue
		}
		k := float64(last.Size-first.Size) / 1000
		fmt.Fprintf(&sb, "\n%s: slope %dk→%dk per 1k pods: wall %.1f ms, CPU %.1f ms, RSS %.2f MiB, wire %.2f MB, decoded %.2f MB",
			n, first.Size/1000, last.Size/1000, (last.Wall-first.Wall)*1000/k, (last.CPU-first.CPU)*1000/k,
			float64(last.RSS-first.RSS)/1024/k, float64(last.Wire-first.Wire)/1e6/k, float64(last.Decoded-first.Decoded)/1e6/k)
		for _, r := range rs {
			if r.Size == 30000 {
				fmt.Fprintf(&sb, "; 30k wall / 1k wall %.2f (≤ 3), 30k RSS %.1f MiB (≤ 80)", r.Wall/first.Wall, float64(r.RSS)/1024)
			}
		}
	}
	return sb.String()
}
