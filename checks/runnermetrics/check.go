// Package runnermetrics asks the runner itself what it saw: its own
// Prometheus metrics (listen_address's /metrics), read once, each family
// checked against the runner version's definitions. A config.toml reload
// it rejected, GitLab refusing its job requests, job requests failing until
// it stops asking, jobs failing for the runner's own reasons, every slot
// taken, a version running that is not the binary on disk: each is a
// finding that names the metric and its labels.
package runnermetrics

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts/configfacts"
	"github.com/socialwebcomputer/doctor/checks/facts/hostfacts"
	rm "github.com/socialwebcomputer/doctor/checks/facts/runnermetrics"
	"github.com/socialwebcomputer/doctor/runnerconfig"
)

// ID names the check.
const ID = "runner-metrics"

var Check = &checks.Check{
	ID:       ID,
	Title:    "The runner's own metrics show no failure",
	Severity: checks.Warning,
	Doc: checks.Doc{
		Cause: "With listen_address set in config.toml (or --listen-address), the runner serves Prometheus metrics of what " +
			"it saw since it started. gitlab_runner_configuration_loading_error_total counts config.toml edits it rejected: " +
			"it keeps running the configuration it last loaded. gitlab_runner_api_request_statuses_total{endpoint=\"request_job\"," +
			"status=\"403\"} counts job requests GitLab refused: its token was revoked or the runner deleted. " +
			"gitlab_runner_worker_health_check_failures_total counts failed job requests: after unhealthy_requests_limit (3) " +
			"in a row it asks for no job for unhealthy_interval (1h). gitlab_runner_failed_jobs_total{failure_reason} tells " +
			"runner_system_failure (the runner or its executor) from script_failure (the job). gitlab_runner_jobs against " +
			"gitlab_runner_concurrent and gitlab_runner_limit shows every slot taken; gitlab_runner_version_info is the version " +
			"actually running. A listen_address nothing answers on loses all of it.",
		// commands/multi.go, gitlab-runner v19.3.0 (setupMetricsAndDebugServer).
		Symptom: "FATAL: Failed to create listener for metrics server  error=listen tcp :9252: bind: address already in use",
		Fix: checks.Steps{checks.Say("Each finding names the metric and the check that says why (config-decode for a rejected reload, " +
			"runner-token for refused job requests, gitlab-reachability for GitLab's errors); for failed jobs, doctor job with " +
			"a failed job's URL names the cause. For an address nothing answers on, set listen_address to one the runner can " +
			"bind (\":9252\") and restart it.")},
		Verify: checks.Steps{checks.Sh("doctor run --only runner-metrics")},
		Patterns: []string{
			// commands/multi.go, v19.3.0 (setupMetricsAndDebugServer): Fatal("Failed to create
			// listener for metrics server") when listen_address cannot be bound.
			"Failed to create listener for metrics server",
			// commands/multi.go, v19.3.0: Errorf("invalid listen address: %s", err); no metrics.
			"invalid listen address: ",
			// commands/multi.go, v19.3.0: Fatal("Metrics server terminated").
			"Metrics server terminated",
		},
	},
	Requires: []checks.Node{rm.Fact, configfacts.ConfigFact, hostfacts.VersionFact, hostfacts.RunAsFact},
	Network:  true,
	Run:      run,
}

// infrastructure are the failure reasons that are the runner's or its
// executor's, not the job's (common/network.go, gitlab-runner v19.3.0):
// runner_system_failure, and runner_external_dependency_failure ("an
// external dependency of the runner, e.g. Docker Hub, GitHub clones").
var infrastructure = []string{"runner_system_failure", "runner_external_dependency_failure"}

// Observation names: the few gauges the cron's textfile carries
// (cmd/doctor/app/metrics).
const (
	ObserveReloadErrors   = "runner_config_reload_errors"
	ObserveRefused        = "runner_request_job_refused"
	ObserveHealthFailures = "runner_health_check_failures"
	ObserveSystemFailures = "runner_system_failed_jobs"
	ObserveSlotsUsed      = "runner_slots_used_ratio"
)

type judge struct {
	p     *checks.Pass
	m     *rm.Exposition
	s     *rm.Scrape
	where checks.Evidence
	get   string // "GET http://…/metrics"
	since string // "since the process started (2026-11-29T10:00Z)"
}

func run(p *checks.Pass) error {
	m := rm.Fact.Get(p)
	if m.None != "" {
		return checks.Skip("%s", m.None)
	}
	j := &judge{p: p, m: m, s: m.Scrape, where: checks.Evidence{Source: m.Source, Detail: m.Detail}, get: "GET " + m.URL,
		since: "since the process started"}
	if ra := hostfacts.RunAsFact.Get(p); ra.Process != nil && !ra.Process.Started.IsZero() {
		j.since += " (" + ra.Process.Started.UTC().Format("2006-01-02T15:04Z") + ")"
	}
	if j.s.Err != nil {
		j.unreachable()
		return nil
	}
	j.reloads(configfacts.ConfigFact.Get(p))
	refused := j.requests()
	j.health(refused)
	j.failures()
	j.saturation()
	j.version(hostfacts.VersionFact.Get(p))
	if len(j.s.Mismatches) > 0 {
		return fmt.Errorf("the exposition at %s does not match the runner's metric definitions, so these were not judged: %s",
			m.URL, strings.Join(j.s.Mismatches, "; "))
	}
	return nil
}

// unreachable: the address nothing answers on, or an answer that is not
// the metrics.
func (j *judge) unreachable() {
	s := j.s
	cause := fmt.Sprintf("The runner's metrics at %s cannot be read (%v): what the runner saw (reloads it rejected, GitLab's "+
		"answers, why its jobs failed) is not available to doctor, nor to Prometheus.", j.m.Address, s.Err)
	fix := checks.Text("Check that the runner process is running and listens on " + j.m.Address + " (ss -ltnp), that " +
		"listen_address is the address it can bind, and that nothing else holds the port (the runner exits with " +
		"`Failed to create listener for metrics server`).")
	if inContainer(j.p) && j.m.Source != "--metrics-url" {
		cause += " The runner runs in a container: its listen_address is the container's, which doctor on the host reaches only where the port is published."
		fix = checks.Text("Publish the runner container's metrics port (docker run -p 127.0.0.1:9252:9252, or a Service in Kubernetes) and give doctor that " +
			"address with --metrics-url, or run doctor in the runner's network namespace.")
	}
	if s.Status != 0 {
		cause = fmt.Sprintf("%s answers %d where the runner serves its metrics: another server holds the runner's listen_address %s, "+
			"or --metrics-url names another endpoint.", j.m.URL, s.Status, j.m.Address)
	}
	j.p.Report(checks.Finding{Cause: cause, Evidence: []checks.Evidence{j.where, {Source: j.get, Detail: s.Err.Error()}}, Fix: fix})
}

// inContainer says the runner process runs in a container, by its cgroup
// (Docker, containerd, Podman and Kubernetes name theirs).
func inContainer(p *checks.Pass) bool {
	ra := hostfacts.RunAsFact.Get(p)
	if ra.Process == nil {
		return false
	}
	b, err := p.Env.ReadProc("/proc/" + strconv.Itoa(ra.Process.PID) + "/cgroup")
	if err != nil {
		return false
	}
	for _, k := range []string{"docker", "containerd", "kubepods", "libpod"} {
		if strings.Contains(string(b), k) {
			return true
		}
	}
	return false
}

// samples are the samples of a family.
func (j *judge) samples(name string) []rm.Sample {
	var out []rm.Sample
	for _, s := range j.s.Samples {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

func (j *judge) evidence(ss ...rm.Sample) []checks.Evidence {
	ev := []checks.Evidence{j.where}
	for _, s := range ss {
		ev = append(ev, checks.Evidence{Source: j.get, Detail: s.Series()})
	}
	return ev
}

// reloads: config.toml edits the running process rejected, with
// config-decode's verdict on the file as it is now.
func (j *judge) reloads(cfg *configfacts.ConfigFile) {
	errs := j.samples(rm.ConfigLoadingErrors)
	if len(errs) == 0 {
		return
	}
	n := errs[0].Value
	j.p.Observe(checks.Observation{Name: ObserveReloadErrors, Labels: map[string]string{}, Value: n})
	if n <= 0 {
		return
	}
	ev := j.evidence(append(errs, j.samples(rm.ConfigLoaded)...)...)
	loads, why := fileLoads(cfg)
	if !loads {
		j.p.Report(checks.Finding{
			Severity: checks.Error,
			Cause: fmt.Sprintf("The running runner rejected %s of config.toml %s (%s): it still runs the configuration it last "+
				"loaded, and config.toml as it is now does not load either (%s): the edits it holds take effect on no job.",
				times(n, "reload"), j.since, rm.ConfigLoadingErrors, why),
			Evidence: append(ev, checks.Evidence{Source: orPath(cfg.Path), Detail: "config-decode: " + why}),
			Fix:      checks.Text("Correct config.toml until doctor run --only config-decode passes: the runner reloads it within 3 seconds of the change."),
			CausedBy: "config-decode",
		})
		return
	}
	j.p.Report(checks.Finding{
		Cause: fmt.Sprintf("The running runner rejected %s of config.toml %s (%s). The file as it is now loads (config-decode "+
			"passes), so a later edit fixed it: the runner takes the file when its modification time changes, and the count of "+
			"loads (%s) says whether it has since.", times(n, "reload"), j.since, rm.ConfigLoadingErrors, rm.ConfigLoaded),
		Evidence: append(ev, checks.Evidence{Source: orPath(cfg.Path), Detail: "config-decode: the file decodes and loads"}),
		Fix: checks.Text("Look for `Failed to load config` in the runner's log after the last edit; restart the runner to be sure it " +
			"runs the file as it is (its counters start again at 0)."),
	})
}

// fileLoads is config-decode's verdict: the file decodes, and the runner
// refuses nothing of it at load.
func fileLoads(cfg *configfacts.ConfigFile) (bool, string) {
	switch {
	case cfg.Path == "":
		return true, "" // nothing to judge: the reload count stands alone
	case cfg.ReadErr != nil:
		return false, "it cannot be read: " + cfg.ReadErr.Error()
	case cfg.DecodeErr != nil:
		return false, "it does not decode: " + cfg.DecodeErr.Error()
	}
	for _, r := range runnerconfig.Refusals(cfg.Config) {
		if r.Fatal {
			return false, "the runner refuses it: " + r.Message
		}
	}
	return true, ""
}

func orPath(p string) string {
	if p == "" {
		return "config.toml"
	}
	return p
}

// requests: GitLab's answers to the runner, by runner. 401 and 403 on
// request_job are the token (runner-token); 5xx and 429 anywhere, and
// retries, are GitLab or a proxy in front of it. It returns the runners
// whose job requests were refused.
func (j *judge) requests() map[string]bool {
	type tally struct {
		ref             *checks.RunnerRef
		stranger        bool
		refused, server []rm.Sample
		nRefused, nSrv  float64
	}
	byRunner := map[string]*tally{}
	var order []string
	for _, s := range j.samples(rm.APIRequestStatuses) {
		k := runnerKey(s)
		t := byRunner[k]
		if t == nil {
			t = &tally{ref: s.Runner, stranger: s.Stranger}
			byRunner[k] = t
			order = append(order, k)
		}
		st, _ := strconv.Atoi(s.Labels["status"])
		switch {
		case s.Labels["endpoint"] == "request_job" && (st == 401 || st == 403):
			t.refused, t.nRefused = append(t.refused, s), t.nRefused+s.Value
		case st >= 500 || st == 429:
			if s.Value > 0 {
				t.server, t.nSrv = append(t.server, s), t.nSrv+s.Value
			}
		}
	}
	sort.Strings(order)
	refusedRunners := map[string]bool{}
	for _, k := range order {
		t := byRunner[k]
		if t.ref != nil {
			j.p.Observe(checks.Observation{Name: ObserveRefused, Labels: map[string]string{}, Value: t.nRefused, Runner: t.ref})
		}
		who := label(t.ref, t.stranger)
		if t.nRefused > 0 {
			refusedRunners[k] = true
			j.p.Report(checks.Finding{
				Severity: checks.Error,
				Cause: fmt.Sprintf("%s: GitLab refused %s of its job requests with 401 or 403 %s (%s{endpoint=\"request_job\"}): "+
					"its token is refused (revoked, reset, or the runner deleted in GitLab), and it takes no job.",
					who, num(t.nRefused), j.since, rm.APIRequestStatuses),
				Evidence: j.evidence(t.refused...),
				Fix:      checks.Text("doctor run --only runner-token asks GitLab about the token now, and says how to register the runner again."),
				CausedBy: "runner-token",
				Runner:   t.ref,
			})
		}
		if t.nSrv > 0 {
			ev := j.evidence(t.server...)
			for _, r := range j.samples(rm.APIRequestRetries) {
				if r.Value > 0 {
					ev = append(ev, checks.Evidence{Source: j.get, Detail: r.Series()})
				}
			}
			j.p.Report(checks.Finding{
				Cause: fmt.Sprintf("%s: GitLab, or a proxy in front of it, answered %s with a server error or 429 %s (%s): "+
					"the runner's requests fail on GitLab's side, and jobs wait or lose their logs.", who, times(t.nSrv, "request"), j.since, rm.APIRequestStatuses),
				Evidence: ev,
				Fix:      checks.Text("doctor run --only gitlab-reachability reaches GitLab as the runner does now; GitLab's own logs (or the proxy's) say why it answered 5xx."),
				CausedBy: "gitlab-reachability",
				Runner:   t.ref,
			})
		}
	}
	return refusedRunners
}

// health: failed job requests that make the runner stop asking.
func (j *judge) health(refused map[string]bool) {
	for _, s := range j.samples(rm.HealthCheckFailures) {
		if s.Runner != nil {
			j.p.Observe(checks.Observation{Name: ObserveHealthFailures, Labels: map[string]string{}, Value: s.Value, Runner: s.Runner})
		}
		if s.Value <= 0 {
			continue
		}
		f := checks.Finding{
			Cause: fmt.Sprintf("%s: %s of its job requests failed %s (%s): after unhealthy_requests_limit (3 by default) failures "+
				"in a row the runner asks for no job for unhealthy_interval (1h by default), and logs `is unhealthy and will be "+
				"disabled`.", label(s.Runner, s.Stranger), num(s.Value), j.since, rm.HealthCheckFailures),
			Evidence: j.evidence(s),
			Fix:      checks.Text("The failed requests' cause is runner-token's (GitLab refuses the token) or gitlab-reachability's (GitLab not reached): doctor run --only runner-token,gitlab-reachability."),
			Runner:   s.Runner,
		}
		if refused[runnerKey(s)] {
			f.CausedBy = "runner-token"
		}
		j.p.Report(f)
	}
}

// failures: the failure_reason split, by runner.
func (j *judge) failures() {
	type tally struct {
		ref            *checks.RunnerRef
		stranger       bool
		infra, scripts float64
		all            float64
		ss             []rm.Sample
		reasons        map[string]float64
	}
	by := map[string]*tally{}
	var order []string
	for _, s := range j.samples(rm.FailedJobs) {
		k := runnerKey(s)
		t := by[k]
		if t == nil {
			t = &tally{ref: s.Runner, stranger: s.Stranger, reasons: map[string]float64{}}
			by[k] = t
			order = append(order, k)
		}
		reason := s.Labels["failure_reason"]
		t.all += s.Value
		t.reasons[reason] += s.Value
		switch {
		case contains(infrastructure, reason):
			t.infra += s.Value
			t.ss = append(t.ss, s)
		case reason == "script_failure":
			t.scripts += s.Value
			t.ss = append(t.ss, s)
		}
	}
	sort.Strings(order)
	for _, k := range order {
		t := by[k]
		if t.ref != nil {
			j.p.Observe(checks.Observation{Name: ObserveSystemFailures, Labels: map[string]string{}, Value: t.infra, Runner: t.ref})
		}
		if t.infra <= 0 || t.infra < t.scripts {
			continue
		}
		var parts []string
		for _, r := range infrastructure {
			if t.reasons[r] > 0 {
				parts = append(parts, fmt.Sprintf("%s %s", r, num(t.reasons[r])))
			}
		}
		j.p.Report(checks.Finding{
			Cause: fmt.Sprintf("%s: %s of the %s failed jobs %s failed for the runner's own reasons (%s), against %s script_failure: "+
				"the runner or its executor fails them, not their scripts.", label(t.ref, t.stranger), num(t.infra), num(t.all), j.since,
				strings.Join(parts, ", "), num(t.scripts)),
			Evidence: j.evidence(t.ss...),
			Fix:      checks.Text("doctor job with the URL of one of those jobs (or doctor why with its log) names the check behind its error."),
			Runner:   t.ref,
		})
	}
}

// saturation: the jobs held against concurrent, and each runner's against
// its limit.
func (j *judge) saturation() {
	var held float64
	perRunner := map[string]float64{}
	refs := map[string]*checks.RunnerRef{}
	jobs := j.samples(rm.Jobs)
	for _, s := range jobs {
		held += s.Value
		perRunner[runnerKey(s)] += s.Value
		refs[runnerKey(s)] = s.Runner
	}
	conc := j.samples(rm.Concurrent)
	if len(conc) == 1 && conc[0].Value > 0 {
		c := conc[0].Value
		j.p.Observe(checks.Observation{Name: ObserveSlotsUsed, Labels: map[string]string{}, Value: held / c})
		if held >= c {
			j.p.Report(checks.Finding{
				Cause: fmt.Sprintf("Every one of the runner's %s concurrent slots is taken (%s jobs held, %s %s): new jobs wait in "+
					"GitLab's queue (pending) until one ends.", num(c), num(held), rm.Concurrent, num(c)),
				Evidence: j.evidence(append(conc, jobs...)...),
				Fix:      checks.Text("Raise concurrent in config.toml if the host has room for more jobs at once, or add a runner."),
			})
		}
	}
	for _, l := range j.samples(rm.Limit) {
		k := runnerKey(l)
		if l.Value <= 0 || l.Runner == nil || perRunner[k] < l.Value {
			continue
		}
		j.p.Report(checks.Finding{
			Cause: fmt.Sprintf("%s holds %s jobs, its limit (%s %s): it asks for no more until one ends.",
				l.Runner, num(perRunner[k]), rm.Limit, num(l.Value)),
			Evidence: j.evidence(l),
			Fix:      checks.Text("Raise limit in the runner's [[runners]] entry, or leave it to cap this runner on purpose."),
			Runner:   l.Runner,
		})
	}
	for _, s := range j.samples(rm.RequestConcExceeded) {
		if s.Value <= 0 {
			continue
		}
		j.p.Report(checks.Finding{
			Severity: checks.Info,
			Cause: fmt.Sprintf("%s: %s of its job requests waited for a free request slot %s (%s): request_concurrency limits how "+
				"many it sends at once, and jobs are picked up later.", label(s.Runner, s.Stranger), num(s.Value), j.since, rm.RequestConcExceeded),
			Evidence: j.evidence(s),
			Fix:      checks.Text("Raise request_concurrency in the runner's [[runners]] entry (2 to 4)."),
			Runner:   s.Runner,
		})
	}
}

// version: the version actually running against the binary on disk.
func (j *judge) version(v *hostfacts.Version) {
	running := j.s.Version
	if running == "" || v.Err != nil || v.Version.Version == "" || same(running, v.Version.Version) {
		return
	}
	j.p.Report(checks.Finding{
		Cause: fmt.Sprintf("The running runner is gitlab-runner %s (%s), but its binary is %s: it was upgraded (or downgraded) and "+
			"not restarted, so it runs the old version until it is.", running, rm.VersionInfo, v.Version.Version),
		Evidence: append(j.evidence(versionSample(j.s)...), checks.Evidence{Source: v.Version.Source, Detail: "gitlab-runner " + v.Version.Version}),
		Fix:      checks.Text("Restart the runner (systemctl restart gitlab-runner, or its container) when no job runs."),
	})
}

func versionSample(s *rm.Scrape) []rm.Sample {
	return []rm.Sample{{Name: rm.VersionInfo, Labels: map[string]string{"version": s.Version}, Value: 1}}
}

// same compares two version strings, a leading "v" aside.
func same(a, b string) bool {
	return strings.TrimPrefix(strings.TrimSpace(a), "v") == strings.TrimPrefix(strings.TrimSpace(b), "v")
}

func runnerKey(s rm.Sample) string {
	if s.Runner != nil {
		return fmt.Sprintf("%08d", s.Runner.Index)
	}
	if s.Stranger {
		return "stranger"
	}
	return "host"
}

func label(r *checks.RunnerRef, stranger bool) string {
	switch {
	case r != nil:
		return r.String()
	case stranger:
		return "A runner that is not in config.toml (removed since the process started)"
	}
	return "The runner"
}

func contains(list []string, s string) bool {
	for _, l := range list {
		if l == s {
			return true
		}
	}
	return false
}

// num prints a counter's value: whole numbers without a fraction.
func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// times is "1 reload", "3 reloads".
func times(v float64, noun string) string {
	if v == 1 {
		return "1 " + noun
	}
	return num(v) + " " + noun + "s"
}
