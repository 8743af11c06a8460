//go:build integration

package bench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/socialwebcomputer/doctor/report"
)

// pairResult is one command's timing in a paired comparison, in seconds.
type pairResult struct {
	Name                string
	Median, Mean, Stdev float64
	Min, Max            float64
	Runs                int
}

// pair times doctor and the runbook in the same session: hyperfine when it
// is installed (its -N runs each command without a shell, so no shell
// start-up is measured or subtracted), else, or with DOCTOR_BENCH_HYPERFINE=0,
// alternating runs.
func (b *bench) pair(label string, warmup, runs int) (doctor, runbook pairResult) {
	t := b.t
	doctorCmd := append([]string{b.doctor}, b.doctorArgs()...)
	runbookCmd := []string{"bash", b.runbook}
	if hf, err := exec.LookPath("hyperfine"); err == nil && os.Getenv("DOCTOR_BENCH_HYPERFINE") != "0" {
		out := filepath.Join(b.dir, "hyperfine-"+label+".json")
		args := []string{"-N", "--style", "basic", "--warmup", fmt.Sprint(warmup), "--runs", fmt.Sprint(runs),
			// doctor exits 1 or 2 when it has findings; the validation
			// run already required a report with no unknown check.
			"--ignore-failure", "--export-json", out,
			"-n", "doctor", strings.Join(doctorCmd, " "), "-n", "runbook", strings.Join(runbookCmd, " ")}
		cmd := exec.Command(hf, args...)
		cmd.Env = b.cmdEnv
		o, err := cmd.CombinedOutput()
		t.Logf("hyperfine %s:\n$ hyperfine %s\n%s", label, strings.Join(args, " "), o)
		if err != nil {
			t.Fatalf("hyperfine: %v", err)
		}
		var r struct {
			Results []struct {
				Command                        string
				Median, Mean, Stddev, Min, Max float64
				Times                          []float64
			}
		}
		raw, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, &r); err != nil || len(r.Results) != 2 {
			t.Fatalf("hyperfine JSON %s: %v", out, err)
		}
		conv := func(i int) pairResult {
			x := r.Results[i]
			return pairResult{x.Command, x.Median, x.Mean, x.Stddev, x.Min, x.Max, len(x.Times)}
		}
		return conv(0), conv(1)
	}
	t.Logf("%s: no hyperfine: alternating doctor and runbook, %d warm-up + %d runs of each", label, warmup, runs)
	var dt, rt []float64
	for i := 0; i < warmup+runs; i++ {
		d, _ := b.timeCmd(doctorCmd)
		r, err := b.timeCmd(runbookCmd)
		if err != nil {
			t.Fatalf("runbook: %v", err)
		}
		if i >= warmup {
			dt, rt = append(dt, d.Seconds()), append(rt, r.Seconds())
		}
	}
	return summarize("doctor", dt), summarize("runbook", rt)
}

func (b *bench) timeCmd(argv []string) (time.Duration, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = b.cmdEnv
	start := time.Now()
	err := cmd.Run()
	if _, ok := err.(*exec.ExitError); ok && argv[0] == b.doctor {
		err = nil // findings
	}
	return time.Since(start), err
}

func summarize(name string, xs []float64) pairResult {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	var sum, sq float64
	for _, x := range s {
		sum += x
	}
	mean := sum / float64(len(s))
	for _, x := range s {
		sq += (x - mean) * (x - mean)
	}
	sd := 0.0
	if len(s) > 1 {
		sd = math.Sqrt(sq / float64(len(s)-1))
	}
	return pairResult{name, median(s), mean, sd, s[0], s[len(s)-1], len(s)}
}

func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// doctorRun is one measured run of the doctor binary.
type doctorRun struct {
	Start time.Time
	Wall  time.Duration
	// MaxRSS is doctor's peak RSS in KiB, measured by peakrss: read from
	// this process, a child's ru_maxrss starts at this process's own RSS
	// (Linux keeps it across the vfork and execve).
	MaxRSS int64
	// CPU is the process's user and system time (without peakrss: with
	// it, the wrapper's and doctor's together).
	CPU      time.Duration
	Exit     int
	Report   *report.Report
	Requests []auditEvent // doctor's own requests, from the apiserver's audit log
}

// runDoctor runs the binary once, and reads the requests it sent from the
// audit log lines written after offset.
func (b *bench) runDoctor() doctorRun {
	offset := b.auditSize()
	r := b.runDoctorNoAudit()
	r.Requests = b.waitRequests(offset, doctorUA)
	return r
}

// runDoctorNoAudit runs the binary once, under peakrss, and reads its
// report.
func (b *bench) runDoctorNoAudit() doctorRun { return b.execDoctor(true) }

// execDoctor runs the binary once and reads its report; withRSS runs it
// under peakrss for its peak RSS. Without, the wall time is doctor's
// alone: peakrss's own start (a Go binary, about 2 ms here) is not in it,
// which the latency rows, in round trips, would otherwise carry.
func (b *bench) execDoctor(withRSS bool) doctorRun {
	t := b.t
	rssFile := filepath.Join(t.TempDir(), "peakrss")
	cmd := exec.Command(b.doctor, b.doctorArgs()...)
	cmd.Env = b.cmdEnv
	if withRSS {
		cmd = exec.Command(b.peakrss, append([]string{b.doctor}, b.doctorArgs()...)...)
		cmd.Env = append(b.cmdEnv[:len(b.cmdEnv):len(b.cmdEnv)], "PEAKRSS_OUT="+rssFile)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	r := doctorRun{Start: start, Wall: time.Since(start)}
	if cmd.ProcessState != nil {
		r.CPU = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	if ee, ok := err.(*exec.ExitError); ok {
		r.Exit = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("doctor: %v", err)
	}
	if withRSS {
		rss, err := os.ReadFile(rssFile)
		if err != nil {
			t.Fatalf("doctor's peak RSS: %v (stderr %s)", err, errb.String())
		}
		if r.MaxRSS, err = strconv.ParseInt(strings.TrimSpace(string(rss)), 10, 64); err != nil {
			t.Fatalf("doctor's peak RSS %q: %v", rss, err)
		}
	}
	r.Report = &report.Report{}
	if err := json.Unmarshal(out.Bytes(), r.Report); err != nil {
		t.Fatalf("doctor exit %d, stderr %s, report does not parse: %v", r.Exit, errb.String(), err)
	}
	// Every API check must have run, or the run measured a short cut.
	// Checks of other parts (GitLab, DNS) may be unknown here: their
	// servers are not part of this benchmark.
	for _, c := range r.Report.Checks {
		if c.Status == "unknown" && apiChecks[c.ID] {
			t.Errorf("%s unknown: %s", c.ID, c.Reason)
		}
	}
	if r.Exit > 2 || t.Failed() {
		t.Fatalf("doctor exit %d: a run where an API check could not run measures nothing", r.Exit)
	}
	return r
}

// apiChecks are the checks that read the cluster through the API.
var apiChecks = map[string]bool{"api-auth": true, "owner-rbac": true, "runner-rbac": true, "namespace": true,
	"pending-no-node": true, "pending-unschedulable": true, "image-pull": true, "scale-to-zero": true, "exec-upgrade": true}

// auditEvent is the part of an audit event the benchmark reads; unlike
// testenv.AuditEvent it keeps the timestamps, for server-side latency.
type auditEvent struct {
	// Stage: a long-running request (an exec upgrade, a log read) is
	// written twice, at ResponseStarted and at ResponseComplete; it is
	// counted once.
	Stage      string `json:"stage"`
	Verb       string `json:"verb"`
	RequestURI string `json:"requestURI"`
	User       struct {
		Username string `json:"username"`
	} `json:"user"`
	UserAgent      string `json:"userAgent"`
	ResponseStatus struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	Received time.Time `json:"requestReceivedTimestamp"`
	Done     time.Time `json:"stageTimestamp"`
}

func (b *bench) auditSize() int64 {
	st, err := os.Stat(b.env.AuditLogPath)
	if err != nil {
		b.t.Fatal(err)
	}
	return st.Size()
}

// waitRequests returns the events of the owner identity with a user agent
// that starts with ua, written after offset. The apiserver writes an event
// just after the response, so it polls until the count has not moved for
// 300 ms.
func (b *bench) waitRequests(offset int64, ua string) []auditEvent {
	return b.waitAudit(offset, ua, ownerDID)
}

// waitRequestsAnyUser is waitRequests for requests that reach the apiserver
// through a front, as the front's own identity.
func (b *bench) waitRequestsAnyUser(offset int64, ua string) []auditEvent {
	return b.waitAudit(offset, ua, "")
}

func (b *bench) waitAudit(offset int64, ua, user string) []auditEvent {
	var last []auditEvent
	stable := 0
	for i := 0; i < 100 && stable < 3; i++ {
		time.Sleep(100 * time.Millisecond)
		evs := b.readRequests(offset, ua, user)
		if len(evs) == len(last) && len(evs) > 0 {
			stable++
		} else {
			stable = 0
		}
		last = evs
	}
	return last
}

func (b *bench) readRequests(offset int64, ua, user string) []auditEvent {
	f, err := os.Open(b.env.AuditLogPath)
	if err != nil {
		b.t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		b.t.Fatal(err)
	}
	var out []auditEvent
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		var ev auditEvent
		if json.Unmarshal(sc.Bytes(), &ev) != nil || ev.Stage == "ResponseStarted" {
			continue // a line still being written, or the first of two
		}
		if (user == "" || ev.User.Username == user) && strings.HasPrefix(ev.UserAgent, ua) {
			out = append(out, ev)
		}
	}
	return out
}

// requestTable lists one run's requests with their server-side latency, and
// splits the run's wall time at its first request and its last response:
// start-up, the API span, and rendering plus exit.
func requestTable(r doctorRun) string {
	var sb strings.Builder
	sb.WriteString("| # | verb | request (continue token cut) | code | server ms |\n|---|---|---|---|---|\n")
	first, last := r.Start.Add(r.Wall), r.Start
	var server time.Duration
	for i, e := range r.Requests {
		uri := e.RequestURI
		if j := strings.Index(uri, "continue="); j >= 0 {
			uri = uri[:j] + "continue=…"
		}
		d := e.Done.Sub(e.Received)
		server += d
		first, last = minTime(first, e.Received), maxTime(last, e.Done)
		fmt.Fprintf(&sb, "| %d | %s | `%s` | %d | %.1f |\n", i+1, e.Verb, uri, e.ResponseStatus.Code, float64(d.Microseconds())/1000)
	}
	fmt.Fprintf(&sb, "wall %s = start-up to first request %s + API span %s + last response to exit %s; server time summed over requests %s\n",
		r.Wall.Round(time.Millisecond), first.Sub(r.Start).Round(time.Millisecond), last.Sub(first).Round(time.Millisecond),
		r.Start.Add(r.Wall).Sub(last).Round(time.Millisecond), server.Round(time.Millisecond))
	return sb.String()
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
