package metrics

import (
	"bytes"
	"fmt"
	"sort"
	"strconv"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/runnermetrics"
	"github.com/socialwebcomputer/doctor/internal/hostio/atomicfile"
	"github.com/socialwebcomputer/doctor/report"
)

// Metric names, as doc.go lists them.
const (
	CheckStatus       = "doctor_check_status"
	Findings          = "doctor_findings"
	CheckDuration     = "doctor_check_duration_seconds"
	RunDuration       = "doctor_run_duration_seconds"
	LastRunTimestamp  = "doctor_last_run_timestamp_seconds"
	CertExpiry        = "doctor_cert_expiry_timestamp_seconds"
	certExpiryObserve = "cert_expiry_timestamp_seconds" // the Observation's name

	// What runner-metrics read of the runner's own /metrics (doc.go).
	RunnerConfigReloadErrors  = "doctor_runner_config_reload_errors"
	RunnerRequestJobRefused   = "doctor_runner_request_job_refused"
	RunnerHealthCheckFailures = "doctor_runner_health_check_failures"
	RunnerSystemFailedJobs    = "doctor_runner_system_failed_jobs"
	RunnerSlotsUsed           = "doctor_runner_slots_used_ratio"
)

// runnerGauges are the few values of the runner's own metrics the textfile
// carries (runner-metrics' observations): one series per runner at most,
// so the file grows with the runners, never with the runner's labels.
var runnerGauges = []struct {
	name, observe, help string
	perRunner           bool
}{
	{RunnerConfigReloadErrors, runnermetrics.ObserveReloadErrors,
		"config.toml reloads the running runner rejected since it started (its gitlab_runner_configuration_loading_error_total).", false},
	{RunnerRequestJobRefused, runnermetrics.ObserveRefused,
		"Job requests of the runner GitLab answered 401 or 403 since the runner started (its gitlab_runner_api_request_statuses_total{endpoint=\"request_job\"}).", true},
	{RunnerHealthCheckFailures, runnermetrics.ObserveHealthFailures,
		"Failed job requests of the runner since it started (its gitlab_runner_worker_health_check_failures_total).", true},
	{RunnerSystemFailedJobs, runnermetrics.ObserveSystemFailures,
		"Jobs of the runner that failed for the runner's own reasons (runner_system_failure, runner_external_dependency_failure) since it started (its gitlab_runner_failed_jobs_total).", true},
	{RunnerSlotsUsed, runnermetrics.ObserveSlotsUsed,
		"The jobs the runner holds over its concurrent setting (its gitlab_runner_jobs over gitlab_runner_concurrent); 1 is every slot taken.", false},
}

// The values of doctor_check_status.
const (
	StatusPass    = 1.0
	StatusFail    = 0.0
	StatusUnknown = -1.0 // unknown or skipped: the check proved nothing
)

// Severities are the values of doctor_findings' severity label, in order.
var Severities = []checks.Severity{checks.Info, checks.Warning, checks.Error, checks.Critical}

// WriteTextfile writes rep and obs (every check's Observations, see
// Observations) to path for node_exporter's textfile collector, atomically:
// a temporary file in path's directory, renamed over path, mode 0644, as
// client_golang's prometheus.WriteToTextfile does (prometheus/registry.go,
// client_golang v1.24.1), through atomicfile.Publish: the temporary file
// is hidden (the collector reads only *.prom), and the directory one only
// its owner may write (the collector's own user's, often).
func WriteTextfile(path string, rep *report.Report, obs []checks.Observation) error {
	text, err := Text(rep, obs)
	if err != nil {
		return fmt.Errorf("--textfile %s: %w", path, err)
	}
	// Mode 0644: node_exporter, which reads it, need not run as root.
	if err := atomicfile.Publish(path, text, 0o644); err != nil {
		return fmt.Errorf("--textfile %s: %w", path, err)
	}
	return nil
}

// Observations collects what every check of res observed, in check order.
func Observations(res *checks.Result) []checks.Observation {
	var out []checks.Observation
	for _, cr := range res.Checks {
		out = append(out, cr.Observations...)
	}
	return out
}

// Text is the metrics of one run (doc.go) in Prometheus's text format.
// Nothing of doctor's own process is in it: there is no registry, only
// these families.
func Text(rep *report.Report, obs []checks.Observation) ([]byte, error) {
	fams, err := families(rep, obs)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	for _, f := range fams {
		f.writeTo(&b)
	}
	return b.Bytes(), nil
}

// families builds the gauges of one run, sorted by name.
func families(rep *report.Report, obs []checks.Observation) ([]*gauge, error) {
	if rep == nil {
		return nil, fmt.Errorf("no report")
	}
	status := newGauge(CheckStatus,
		"How the check ended for the runner (\"\" host-wide): 1 pass, 0 fail, -1 unknown or skipped.",
		"check", "runner")
	findings := newGauge(Findings,
		"Findings of this severity the run reported for the check and runner (\"\" host-wide), after ignores; 0 for a check that ran and found none of it.",
		"severity", "check", "runner")
	duration := newGauge(CheckDuration,
		"How long the check took, in seconds: the longest of its per-runner runs.",
		"check")
	runDuration := newGauge(RunDuration, "How long the whole doctor run took, in seconds.")
	lastRun := newGauge(LastRunTimestamp, "When the doctor run started, in Unix seconds (its --now when given).")
	certExpiry := newGauge(CertExpiry,
		"When the client certificate of the runner's kubeconfig expires (NotAfter), in Unix seconds.",
		"runner", "subject")

	label := runnerLabels(rep, obs)

	// doctor_check_status and doctor_check_duration_seconds.
	type key struct{ check, runner string }
	st := map[key]float64{}
	var order []key
	dur := map[string]float64{}
	for _, cs := range rep.Checks {
		k := key{cs.ID, label(cs.Runner)}
		v := statusValue(cs.Status)
		if old, ok := st[k]; !ok {
			order = append(order, k)
			st[k] = v
		} else {
			st[k] = worse(old, v)
		}
		if d, cur := float64(cs.DurationMs)/1000, dur[cs.ID]; d > cur {
			dur[cs.ID] = d
		} else if _, ok := dur[cs.ID]; !ok {
			dur[cs.ID] = d
		}
	}
	for _, k := range order {
		status.set(st[k], k.check, k.runner)
		if st[k] != StatusUnknown {
			for _, s := range Severities {
				findings.set(0, s.String(), k.check, k.runner)
			}
		}
	}
	for id, d := range dur {
		duration.set(d, id)
	}

	// doctor_findings.
	for _, f := range rep.Findings {
		findings.add(1, f.Severity.String(), f.Check, label(f.Runner))
	}

	runDuration.set(float64(rep.DurationMs) / 1000)
	lastRun.set(float64(rep.StartedAt.UnixNano()) / 1e9)

	// doctor_cert_expiry_timestamp_seconds: the earliest per runner and subject.
	type ckey struct{ runner, subject string }
	exp := map[ckey]float64{}
	for _, o := range obs {
		if o.Name != certExpiryObserve {
			continue
		}
		k := ckey{label(o.Runner), o.Labels["subject"]}
		if old, ok := exp[k]; !ok || o.Value < old {
			exp[k] = o.Value
		}
	}
	for k, v := range exp {
		certExpiry.set(v, k.runner, k.subject)
	}
	fams := []*gauge{status, findings, duration, runDuration, lastRun, certExpiry}
	for _, rg := range runnerGauges {
		var g *gauge
		if rg.perRunner {
			g = newGauge(rg.name, rg.help, "runner")
		} else {
			g = newGauge(rg.name, rg.help)
		}
		for _, o := range obs {
			if o.Name != rg.observe {
				continue
			}
			if rg.perRunner {
				g.set(o.Value, label(o.Runner))
			} else {
				g.set(o.Value)
			}
		}
		fams = append(fams, g)
	}
	sort.Slice(fams, func(i, j int) bool { return fams[i].name < fams[j].name })
	return fams, nil
}

func statusValue(s checks.Status) float64 {
	switch s {
	case checks.StatusPass:
		return StatusPass
	case checks.StatusFail:
		return StatusFail
	}
	return StatusUnknown
}

// worse merges two statuses of one label set: a failure is what must be
// seen, then a check that proved nothing, then a pass.
func worse(a, b float64) float64 {
	rank := func(v float64) int {
		switch v {
		case StatusFail:
			return 2
		case StatusUnknown:
			return 1
		}
		return 0
	}
	if rank(b) > rank(a) {
		return b
	}
	return a
}

// runnerLabels gives the runner label of every runner the report and the
// observations name (doc.go, "The runner label").
func runnerLabels(rep *report.Report, obs []checks.Observation) func(*checks.RunnerRef) string {
	names := map[int]string{} // index -> name
	add := func(r *checks.RunnerRef) {
		if r != nil {
			if _, ok := names[r.Index]; !ok || names[r.Index] == "" {
				names[r.Index] = r.Name
			}
		}
	}
	for _, r := range rep.Runners {
		add(&checks.RunnerRef{Index: r.Index, Name: r.Name})
	}
	for _, c := range rep.Checks {
		add(c.Runner)
	}
	for _, f := range rep.Findings {
		add(f.Runner)
	}
	for _, o := range obs {
		add(o.Runner)
	}
	plain := func(index int, name string) string {
		if name == "" {
			return "#" + strconv.Itoa(index)
		}
		return name
	}
	users := map[string]int{} // label -> how many runners would carry it
	for i, n := range names {
		users[plain(i, n)]++
	}
	return func(r *checks.RunnerRef) string {
		if r == nil {
			return ""
		}
		name := r.Name
		if n, ok := names[r.Index]; ok && name == "" {
			name = n
		}
		l := plain(r.Index, name)
		if users[l] > 1 {
			return l + "#" + strconv.Itoa(r.Index)
		}
		return l
	}
}
