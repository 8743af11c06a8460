package metrics

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/runnermetrics"
	"github.com/socialwebcomputer/doctor/internal/text/safetext/safetexttest"
	"github.com/socialwebcomputer/doctor/report"
)

func ref(i int, name string) *checks.RunnerRef { return &checks.RunnerRef{Index: i, Name: name} }

// fabricated is a report of four runners: a named one, an unnamed one and
// two that share a name, with host-wide and per-runner checks of every
// status.
func fabricated() (*report.Report, []checks.Observation) {
	rep := &report.Report{
		StartedAt:  time.Date(2026, 11, 29, 12, 0, 0, 500_000_000, time.UTC),
		DurationMs: 8123,
		Runners: []report.Runner{
			{Index: 1, Name: "kubernetes", Executor: "kubernetes"},
			{Index: 2, Name: "", Executor: "shell"},
			{Index: 3, Name: "dup", Executor: "kubernetes"},
			{Index: 4, Name: "dup", Executor: "kubernetes"},
		},
		Checks: []report.CheckStatus{
			{ID: "runner-process", Status: checks.StatusPass, DurationMs: 12},
			{ID: "config-lint", Status: checks.StatusFail, DurationMs: 3},
			{ID: "cert-expiry", Runner: ref(1, "kubernetes"), Status: checks.StatusFail, DurationMs: 40},
			{ID: "cert-expiry", Runner: ref(3, "dup"), Status: checks.StatusPass, DurationMs: 70},
			{ID: "cert-expiry", Runner: ref(4, "dup"), Status: checks.StatusUnknown, DurationMs: 5, Reason: "timed out"},
			{ID: "namespace", Runner: ref(1, "kubernetes"), Status: checks.StatusSkipped, Reason: "offline"},
			{ID: "runner-rbac", Runner: ref(2, ""), Status: checks.StatusPass, DurationMs: 1500},
			{ID: "image-pull", Status: checks.StatusSkipped, Reason: "applies to kubernetes runners"},
		},
		Findings: []report.Finding{
			{Rank: 1, Check: "cert-expiry", Runner: ref(1, "kubernetes"), Severity: checks.Critical, Title: "expired", Fingerprint: "aaaaaaaaaaaa"},
			{Rank: 2, Check: "config-lint", Severity: checks.Warning, Title: "a", Fingerprint: "bbbbbbbbbbbb"},
			{Rank: 3, Check: "config-lint", Severity: checks.Warning, Title: "b", Fingerprint: "cccccccccccc"},
			{Rank: 4, Check: "config-lint", Severity: checks.Info, Title: "c", Fingerprint: "dddddddddddd"},
			// A host-wide check's finding about one runner counts for that runner.
			{Rank: 5, Check: "config-lint", Runner: ref(1, "kubernetes"), Severity: checks.Warning, Title: "d", Fingerprint: "eeeeeeeeeeee"},
		},
	}
	obs := []checks.Observation{
		{Name: "cert_expiry_timestamp_seconds", Labels: map[string]string{"subject": "CN=did:plc:abc"}, Value: 1_900_000_000, Runner: ref(1, "kubernetes")},
		// The same runner and subject twice: the earliest is kept.
		{Name: "cert_expiry_timestamp_seconds", Labels: map[string]string{"subject": "CN=did:plc:abc"}, Value: 1_800_000_000, Runner: ref(1, "kubernetes")},
		{Name: "cert_expiry_timestamp_seconds", Labels: map[string]string{"subject": "CN=b"}, Value: 2_000_000_000, Runner: ref(3, "dup")},
		{Name: "cert_expiry_timestamp_seconds", Labels: map[string]string{"subject": "CN=b"}, Value: 2_100_000_000, Runner: ref(4, "dup")},
		// An observation with no metric of its own is not exported.
		{Name: "something_else", Labels: map[string]string{"x": "y"}, Value: 7, Runner: ref(2, "")},
		// What runner-metrics read of the runner's own /metrics.
		{Name: runnermetrics.ObserveReloadErrors, Labels: map[string]string{}, Value: 2},
		{Name: runnermetrics.ObserveRefused, Labels: map[string]string{}, Value: 12, Runner: ref(1, "kubernetes")},
		{Name: runnermetrics.ObserveRefused, Labels: map[string]string{}, Value: 0, Runner: ref(2, "")},
		{Name: runnermetrics.ObserveHealthFailures, Labels: map[string]string{}, Value: 12, Runner: ref(1, "kubernetes")},
		{Name: runnermetrics.ObserveSystemFailures, Labels: map[string]string{}, Value: 3, Runner: ref(3, "dup")},
		{Name: runnermetrics.ObserveSlotsUsed, Labels: map[string]string{}, Value: 0.5},
	}
	return rep, obs
}

// series renders a family's samples as `{a="x",b="y"} value` lines, sorted.
func series(mf *dto.MetricFamily) []string {
	var out []string
	for _, m := range mf.GetMetric() {
		var ls []string
		for _, lp := range m.GetLabel() {
			ls = append(ls, fmt.Sprintf("%s=%q", lp.GetName(), lp.GetValue()))
		}
		out = append(out, fmt.Sprintf("{%s} %v", strings.Join(ls, ","), m.GetGauge().GetValue()))
	}
	sort.Strings(out)
	return out
}

func parse(t *testing.T, b []byte) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("the textfile does not parse: %v\n%s", err, b)
	}
	return mfs
}

func TestTextfileParses(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "doctor.prom")
	rep, obs := fabricated()
	if err := WriteTextfile(path, rep, obs); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	mfs := parse(t, b)

	zero := func(check, runner string) []string {
		var out []string
		for _, s := range []string{"critical", "error", "info", "warning"} {
			out = append(out, fmt.Sprintf(`{check=%q,runner=%q,severity=%q} 0`, check, runner, s))
		}
		return out
	}
	with := func(base []string, repl map[string]string) []string {
		out := []string{}
		for _, s := range base {
			for from, to := range repl {
				if s == from {
					s = to
				}
			}
			out = append(out, s)
		}
		return out
	}
	var findings []string
	// config-lint host-wide: 2 warnings, 1 info.
	findings = append(findings, with(zero("config-lint", ""), map[string]string{
		`{check="config-lint",runner="",severity="warning"} 0`: `{check="config-lint",runner="",severity="warning"} 2`,
		`{check="config-lint",runner="",severity="info"} 0`:    `{check="config-lint",runner="",severity="info"} 1`,
	})...)
	// Its finding about runner 1 has no check status of its own: no zeros.
	findings = append(findings, `{check="config-lint",runner="kubernetes",severity="warning"} 1`)
	findings = append(findings, with(zero("cert-expiry", "kubernetes"), map[string]string{
		`{check="cert-expiry",runner="kubernetes",severity="critical"} 0`: `{check="cert-expiry",runner="kubernetes",severity="critical"} 1`,
	})...)
	findings = append(findings, zero("cert-expiry", "dup#3")...) // passed: zeros
	// cert-expiry dup#4 unknown, namespace skipped, image-pull skipped: no series.
	findings = append(findings, zero("runner-process", "")...)
	findings = append(findings, zero("runner-rbac", "#2")...)
	sort.Strings(findings)

	want := map[string][]string{
		CheckStatus: {
			`{check="cert-expiry",runner="dup#3"} 1`,
			`{check="cert-expiry",runner="dup#4"} -1`,
			`{check="cert-expiry",runner="kubernetes"} 0`,
			`{check="config-lint",runner=""} 0`,
			`{check="image-pull",runner=""} -1`,
			`{check="namespace",runner="kubernetes"} -1`,
			`{check="runner-process",runner=""} 1`,
			`{check="runner-rbac",runner="#2"} 1`,
		},
		Findings: findings,
		CheckDuration: {
			`{check="cert-expiry"} 0.07`, // the longest of 40, 70 and 5 ms
			`{check="config-lint"} 0.003`,
			`{check="image-pull"} 0`,
			`{check="namespace"} 0`,
			`{check="runner-process"} 0.012`,
			`{check="runner-rbac"} 1.5`,
		},
		RunDuration:      {`{} 8.123`},
		LastRunTimestamp: {fmt.Sprintf(`{} %v`, 1_795_953_600.5)},
		CertExpiry: {
			`{runner="dup#3",subject="CN=b"} 2e+09`,
			`{runner="dup#4",subject="CN=b"} 2.1e+09`,
			`{runner="kubernetes",subject="CN=did:plc:abc"} 1.8e+09`,
		},
		RunnerConfigReloadErrors:  {`{} 2`},
		RunnerRequestJobRefused:   {`{runner="#2"} 0`, `{runner="kubernetes"} 12`},
		RunnerHealthCheckFailures: {`{runner="kubernetes"} 12`},
		RunnerSystemFailedJobs:    {`{runner="dup#3"} 3`},
		RunnerSlotsUsed:           {`{} 0.5`},
	}
	if got := float64(rep.StartedAt.Unix()); got != 1_795_953_600 {
		t.Fatalf("the fixture's clock is %v, the test assumes 1795953600", got)
	}
	var names []string
	for n := range mfs {
		names = append(names, n)
	}
	sort.Strings(names)
	var wantNames []string
	for n := range want {
		wantNames = append(wantNames, n)
	}
	sort.Strings(wantNames)
	if strings.Join(names, " ") != strings.Join(wantNames, " ") {
		t.Errorf("metric families:\n got %v\nwant %v", names, wantNames)
	}
	for name, w := range want {
		mf, ok := mfs[name]
		if !ok {
			continue
		}
		if mf.GetType() != dto.MetricType_GAUGE {
			t.Errorf("%s is a %s, want a gauge", name, mf.GetType())
		}
		if len(mf.GetHelp()) < 20 {
			t.Errorf("%s has no real help string: %q", name, mf.GetHelp())
		}
		if got := series(mf); strings.Join(got, "\n") != strings.Join(w, "\n") {
			t.Errorf("%s:\n got\n\t%s\nwant\n\t%s", name, strings.Join(got, "\n\t"), strings.Join(w, "\n\t"))
		}
	}
	// The HELP and TYPE lines are there for each family, as the collector
	// and promtool expect.
	for _, n := range wantNames {
		for _, line := range []string{"# HELP " + n + " ", "# TYPE " + n + " gauge\n"} {
			if !bytes.Contains(b, []byte(line)) {
				t.Errorf("the file lacks %q", line)
			}
		}
	}
}

// TestLint runs client_golang's own linter (promtool check metrics) over the
// file: names, units and help are as Prometheus conventions want.
func TestLint(t *testing.T) {
	text, err := Text(fabricated())
	if err != nil {
		t.Fatal(err)
	}
	problems, err := promlint.New(bytes.NewReader(text)).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
}

// TestTextIsClientGolangs: the file is byte for byte what client_golang's
// registry and expfmt write for the same gauges, runner names that need
// escaping included. client_golang is the oracle; doctor does not link it
// (TestDoctorDoesNotLink, cmd/doctor).
func TestTextIsClientGolangs(t *testing.T) {
	rep, obs := fabricated()
	rep.Runners = append(rep.Runners, report.Runner{Index: 5, Name: "quote\" back\\slash\nnewline", Executor: "shell"})
	rep.Checks = append(rep.Checks, report.CheckStatus{ID: "runner-rbac", Runner: ref(5, "quote\" back\\slash\nnewline"), Status: checks.StatusFail})
	rep.Findings = append(rep.Findings, report.Finding{Check: "runner-rbac", Runner: ref(5, "quote\" back\\slash\nnewline"), Severity: checks.Error})
	got, err := Text(rep, obs)
	if err != nil {
		t.Fatal(err)
	}
	fams, err := families(rep, obs)
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewPedanticRegistry()
	for _, f := range fams {
		vec := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: f.name, Help: f.help}, f.labels)
		for _, s := range f.series {
			vec.WithLabelValues(s.values...).Set(s.value)
		}
		reg.MustRegister(vec)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	for _, mf := range mfs {
		if _, err := expfmt.MetricFamilyToText(&want, mf); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Errorf("doctor's textfile differs from client_golang's:\n--- doctor\n%s\n--- client_golang\n%s", got, want.Bytes())
	}
	if !bytes.Contains(got, []byte(`runner="quote\" back\\slash\\nnewline"`)) {
		t.Errorf("the escaped runner name is not in the file:\n%s", got)
	}
}

// TestTextInvalidUTF8: a runner name with a byte that is not UTF-8 is
// written with the byte's escape, \xff, in its place; the file still parses.
func TestTextInvalidUTF8(t *testing.T) {
	rep := &report.Report{Runners: []report.Runner{{Index: 1, Name: "bad\xffname"}},
		Checks: []report.CheckStatus{{ID: "config-lint", Runner: ref(1, "bad\xffname"), Status: checks.StatusPass}}}
	text, err := Text(rep, nil)
	if err != nil {
		t.Fatal(err)
	}
	mfs := parse(t, text)
	if got := series(mfs[CheckStatus]); len(got) != 1 || got[0] != `{check="config-lint",runner="bad\\xffname"} 1` {
		t.Errorf("check status series = %q", got)
	}
}

func TestRunnerLabels(t *testing.T) {
	rep := &report.Report{Runners: []report.Runner{{Index: 1, Name: "a"}, {Index: 2}, {Index: 3, Name: "b"}, {Index: 4, Name: "b"}, {Index: 5, Name: "#2"}}}
	label := runnerLabels(rep, nil)
	for _, c := range []struct {
		ref  *checks.RunnerRef
		want string
	}{
		{nil, ""},
		{ref(1, "a"), "a"},
		{ref(2, ""), "#2#2"}, // "#2" is also runner 5's name
		{ref(3, "b"), "b#3"},
		{ref(4, "b"), "b#4"},
		{ref(5, "#2"), "#2#5"},
		{ref(1, ""), "a"}, // a reference without the name gets the runner's
	} {
		if got := label(c.ref); got != c.want {
			t.Errorf("label(%v) = %q, want %q", c.ref, got, c.want)
		}
	}
	// Without the clash an unnamed runner is "#N".
	if got := runnerLabels(&report.Report{Runners: []report.Runner{{Index: 2}}}, nil)(ref(2, "")); got != "#2" {
		t.Errorf("unnamed runner 2: %q, want #2", got)
	}
}

// TestTextfileEmptyReport: a run with no checks still writes the run's own
// metrics, so "doctor ran" is visible even when nothing else is.
func TestTextfileEmptyReport(t *testing.T) {
	path := filepath.Join(t.TempDir(), "doctor.prom")
	if err := WriteTextfile(path, &report.Report{StartedAt: time.Unix(100, 0)}, nil); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	mfs := parse(t, b)
	if len(mfs) != 2 || mfs[LastRunTimestamp] == nil || mfs[RunDuration] == nil {
		t.Errorf("families %v, want only %s and %s", mfs, LastRunTimestamp, RunDuration)
	}
	if v := mfs[LastRunTimestamp].GetMetric()[0].GetGauge().GetValue(); v != 100 {
		t.Errorf("%s = %v, want 100", LastRunTimestamp, v)
	}
}

// entries lists dir's names.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// TestTextfileAtomic: the target is replaced by a rename (a reader that had
// the old file open keeps reading the old, whole file), a concurrent reader
// only ever sees a whole file, and no temporary file is left behind.
func TestTextfileAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "doctor.prom")
	old := "# the previous run's file\n"
	if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	before, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer before.Close()
	rep, obs := fabricated()
	if err := WriteTextfile(path, rep, obs); err != nil {
		t.Fatal(err)
	}
	fiOld, _ := before.Stat()
	fiNew, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if os.SameFile(fiOld, fiNew) {
		t.Errorf("the target was rewritten in place, not replaced by a rename")
	}
	if b, _ := os.ReadFile(before.Name()); string(b) == old {
		t.Errorf("the target still holds the old content")
	}
	var oldContent bytes.Buffer
	if _, err := oldContent.ReadFrom(before); err != nil || oldContent.String() != old {
		t.Errorf("the old file, open before the write, reads %q (%v), want its whole old content", oldContent.String(), err)
	}
	if fiNew.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644 (node_exporter reads it as another user)", fiNew.Mode().Perm())
	}
	if got := entries(t, dir); len(got) != 1 || got[0] != "doctor.prom" {
		t.Errorf("the directory holds %v, want only doctor.prom", got)
	}

	// A reader racing many writes sees a whole file every time: it parses,
	// and its last family (alphabetically, which is how it is written) is
	// there with the value that write carried.
	var stop atomic.Bool
	var wg sync.WaitGroup
	var reads, bad atomic.Int64
	var firstBad atomic.Value
	wg.Go(func() {
		for !stop.Load() {
			b, err := os.ReadFile(path)
			if err != nil {
				bad.Add(1)
				firstBad.CompareAndSwap(nil, err.Error())
				continue
			}
			reads.Add(1)
			p := expfmt.NewTextParser(model.UTF8Validation)
			mfs, err := p.TextToMetricFamilies(bytes.NewReader(b))
			if err != nil || mfs[RunDuration] == nil || mfs[CertExpiry] == nil || mfs[CheckStatus] == nil {
				bad.Add(1)
				firstBad.CompareAndSwap(nil, fmt.Sprintf("%v: %q", err, b))
			}
		}
	})
	for i := range 300 {
		rep.DurationMs = int64(i)
		if err := WriteTextfile(path, rep, obs); err != nil {
			stop.Store(true)
			wg.Wait()
			t.Fatal(err)
		}
	}
	stop.Store(true)
	wg.Wait()
	if bad.Load() > 0 {
		t.Errorf("%d of %d reads saw a partial or missing file; first: %v", bad.Load(), reads.Load()+bad.Load(), firstBad.Load())
	}
	if reads.Load() == 0 {
		t.Errorf("the reader never read the file")
	}
	if got := entries(t, dir); len(got) != 1 {
		t.Errorf("after 300 writes the directory holds %v, want only doctor.prom", got)
	}
}

// TestTextfileErrors: a write that cannot happen names the path, leaves the
// target as it was and no temporary file.
func TestTextfileErrors(t *testing.T) {
	rep, obs := fabricated()
	missing := filepath.Join(t.TempDir(), "no-such-dir", "doctor.prom")
	if err := WriteTextfile(missing, rep, obs); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("a missing directory: %v, want an error naming %s", err, missing)
	}

	dir := t.TempDir()
	target := filepath.Join(dir, "doctor.prom")
	if err := os.Mkdir(target, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteTextfile(target, rep, obs); err == nil || !strings.Contains(err.Error(), target) {
		t.Errorf("a directory in the way: %v, want an error naming %s", err, target)
	}
	if got := entries(t, dir); len(got) != 1 || got[0] != "doctor.prom" {
		t.Errorf("after a failed write the directory holds %v, want only doctor.prom", got)
	}
	if fi, err := os.Stat(target); err != nil || !fi.IsDir() {
		t.Errorf("the directory in the way was replaced: %v %v", fi, err)
	}

	if err := WriteTextfile(filepath.Join(t.TempDir(), "x.prom"), nil, nil); err == nil {
		t.Errorf("a nil report wrote a file")
	}
}

func TestObservations(t *testing.T) {
	o1 := checks.Observation{Name: "a", Value: 1}
	o2 := checks.Observation{Name: "b", Value: 2, Runner: ref(1, "x")}
	res := &checks.Result{Checks: []checks.CheckResult{{Observations: []checks.Observation{o1}}, {}, {Observations: []checks.Observation{o2}}}}
	got := Observations(res)
	if len(got) != 2 || got[0].Name != "a" || got[1].Name != "b" {
		t.Errorf("Observations = %v", got)
	}
}

// FuzzText: whatever a runner's name or a certificate's subject holds, the
// textfile has no character safetext escapes but its own newlines, and
// parses.
func FuzzText(f *testing.F) {
	for _, s := range [][2]string{
		{"kubernetes", "CN=did:plc:abc"},
		{"r\x1b]0;pwned\x07", "CN=\x1b[2J"},
		{"\u202eevil\u2066", "CN=\u009b31m\x7f"},
		{"bad\xffname\n# HELP", "CN=\"quoted\"\\\n"},
		{"kuber\u200bnetes\u00ad", "CN=zero\u200bwidth\ufeff\u2060"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, name, subject string) {
		rep, obs := fabricated()
		rep.Runners = append(rep.Runners, report.Runner{Index: 5, Name: name, Executor: name})
		rep.Checks = append(rep.Checks, report.CheckStatus{ID: "runner-rbac", Runner: ref(5, name), Status: checks.StatusFail})
		rep.Findings = append(rep.Findings, report.Finding{Check: "runner-rbac", Runner: ref(5, name), Severity: checks.Error})
		obs = append(obs, checks.Observation{Name: "cert_expiry_timestamp_seconds", Labels: map[string]string{"subject": subject},
			Value: 1_900_000_000, Runner: ref(5, name)})
		text, err := Text(rep, obs)
		if err != nil {
			t.Fatal(err)
		}
		if p := safetexttest.Terminal(string(text), "\n"); p != "" {
			t.Fatalf("%s\n%s", p, text)
		}
		parse(t, text)
	})
}
