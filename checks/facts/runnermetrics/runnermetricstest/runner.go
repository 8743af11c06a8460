// Package runnermetricstest serves, on loopback, the /metrics of a
// gitlab-runner v19.3.0 process: a prometheus/client_golang registry
// holding the runner's own collectors, declared as its source declares
// them (each with its file), so an exposition doctor reads in a test is
// what client_golang writes for those definitions, not text written by
// hand.
package runnermetricstest

import (
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Version is the runner version whose definitions this package declares.
const Version = "19.3.0"

// Runner is the registry of one runner process and its collectors.
type Runner struct {
	Registry *prometheus.Registry

	// commands/internal/configfile/metrics.go, v19.3.0 (newConfigAccessCollector).
	ConfigLoadingError prometheus.Counter
	ConfigLoaded       prometheus.Counter
	// network/api_requests_collector.go, v19.3.0: labels runner, system_id,
	// endpoint, status, method; and path, method.
	APIStatuses *prometheus.CounterVec
	APIRetries  *prometheus.CounterVec
	// commands/health_helper.go, v19.3.0 (newHealthHelper): runner,
	// runner_name, system_id.
	HealthCheckFailures *prometheus.CounterVec

	mu         sync.Mutex
	concurrent int
	limits     []limit
	builds     map[build]int
	failures   map[failure]int64
	requests   map[string]*requests
}

type limit struct {
	runner, name, systemID string
	value                  int
}

type build struct{ runner, name, systemID, state, stage, executorStage string }

type failure struct{ runner, name, reason, mode string }

type requests struct {
	systemID                      string
	current, exceeded, hard, used int
}

// commands/builds_helper.go, v19.3.0.
var numBuildsDesc = prometheus.NewDesc(
	"gitlab_runner_jobs",
	"The current number of running builds.",
	[]string{"runner", "runner_name", "system_id", "state", "stage", "executor_stage"},
	nil,
)

var requestConcurrencyDesc = prometheus.NewDesc(
	"gitlab_runner_request_concurrency",
	"The current number of concurrent requests for a new job",
	[]string{"runner", "system_id"},
	nil,
)

var requestConcurrencyExceededDesc = prometheus.NewDesc(
	"gitlab_runner_request_concurrency_exceeded_total",
	"Count of excess requests above the configured request_concurrency limit",
	[]string{"runner", "system_id"},
	nil,
)

var requestConcurrencyHardLimitDesc = prometheus.NewDesc(
	"gitlab_runner_request_concurrency_hard_limit",
	"Configured request_concurrency limit",
	[]string{"runner", "system_id"},
	nil,
)

var requestConcurrencyUsedLimitDesc = prometheus.NewDesc(
	"gitlab_runner_request_concurrency_used_limit",
	"Used request concurrency limit",
	[]string{"runner", "system_id"},
	nil,
)

// commands/multi.go, v19.3.0.
var (
	concurrentDesc = prometheus.NewDesc(
		"gitlab_runner_concurrent",
		"The current value of concurrent setting",
		nil,
		nil,
	)

	limitDesc = prometheus.NewDesc(
		"gitlab_runner_limit",
		"The current value of concurrent setting",
		[]string{"runner", "runner_name", "system_id"},
		nil,
	)
)

// helpers/prometheus/failures_collector.go, v19.3.0.
var numJobFailuresDesc = prometheus.NewDesc(
	"gitlab_runner_failed_jobs_total",
	"Total number of failed jobs",
	[]string{"runner", "runner_name", "failure_reason", "mode"},
	nil,
)

// New is a runner process of version (Version when ""), with concurrent
// slots, as commands/multi.go serveMetrics registers its collectors: the
// ones doctor reads, and the Go collector, whose families it ignores.
func New(version string, concurrent int) *Runner {
	if version == "" {
		version = Version
	}
	r := &Runner{
		Registry: prometheus.NewRegistry(),
		ConfigLoadingError: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "gitlab_runner_configuration_loading_error_total",
			Help: "Total number of times the configuration file was not loaded by Runner process due to errors",
		}),
		ConfigLoaded: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "gitlab_runner_configuration_loaded_total",
			Help: "Total number of times the configuration file was loaded by Runner process",
		}),
		APIStatuses: prometheus.NewCounterVec(
			prometheus.CounterOpts{
				Name: "gitlab_runner_api_request_statuses_total",
				Help: "The total number of API requests made by GitLab Runner, partitioned by runner, system_id, endpoint, status and method.",
			},
			[]string{"runner", "system_id", "endpoint", "status", "method"},
		),
		APIRetries: prometheus.NewCounterVec(
			prometheus.CounterOpts{
				Name: "gitlab_runner_api_request_retries_total",
				Help: "The total number of retries made by GitLab Runner in process of completing a request, partitioned by path and method.",
			},
			[]string{"path", "method"},
		),
		HealthCheckFailures: prometheus.NewCounterVec(
			prometheus.CounterOpts{
				Name: "gitlab_runner_worker_health_check_failures_total",
				Help: "Total number of runner worker health check failures",
			},
			[]string{"runner", "runner_name", "system_id"},
		),
		concurrent: concurrent,
		builds:     map[build]int{},
		failures:   map[failure]int64{},
		requests:   map[string]*requests{},
	}
	// common/version.go, v19.3.0 (AppVersionInfo.NewMetricsCollector).
	info := prometheus.NewGaugeVec(
		prometheus.GaugeOpts{
			Name: "gitlab_runner_version_info",
			Help: "A metric with a constant '1' value labeled by different build stats fields.",
		},
		[]string{"name", "version", "revision", "branch", "go_version", "built_at", "os", "architecture"},
	)
	info.With(prometheus.Labels{"name": "gitlab-runner", "version": version, "revision": "9cbf0074", "branch": "19-3-stable",
		"go_version": "go1.24.6", "built_at": "2025-08-14T10:17:02Z", "os": "linux", "architecture": "amd64"}).Set(1)
	r.Registry.MustRegister(r.ConfigLoadingError, r.ConfigLoaded, r.APIStatuses, r.APIRetries, r.HealthCheckFailures,
		info, (*collector)(r), collectors.NewGoCollector())
	return r
}

// Limit sets a runner's limit (gitlab_runner_limit), by its short token.
func (r *Runner) Limit(short, name, systemID string, value int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.limits = append(r.limits, limit{short, name, systemID, value})
}

// Builds sets how many builds of a runner are in a state (gitlab_runner_jobs).
func (r *Runner) Builds(short, name, systemID, state string, n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.builds[build{short, name, systemID, state, "step_script", "docker_run"}] = n
}

// Failed records n failed jobs of a runner (gitlab_runner_failed_jobs_total),
// as FailuresCollector.RecordFailure does.
func (r *Runner) Failed(short, name, reason string, n int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failures[failure{short, name, reason, "unknown"}] += n
}

// Requests sets a runner's request concurrency counters.
func (r *Runner) Requests(short, systemID string, current, exceeded, hard, used int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests[short] = &requests{systemID, current, exceeded, hard, used}
}

// collector is what buildsHelper, RunCommand and FailuresCollector collect
// (commands/builds_helper.go, commands/multi.go,
// helpers/prometheus/failures_collector.go, v19.3.0): const metrics of the
// descs above, with their value types.
type collector Runner

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{numBuildsDesc, requestConcurrencyDesc, requestConcurrencyExceededDesc,
		requestConcurrencyHardLimitDesc, requestConcurrencyUsedLimitDesc, concurrentDesc, limitDesc, numJobFailuresDesc} {
		ch <- d
	}
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for b, n := range c.builds {
		ch <- prometheus.MustNewConstMetric(numBuildsDesc, prometheus.GaugeValue, float64(n),
			b.runner, b.name, b.systemID, b.state, b.stage, b.executorStage)
	}
	for short, q := range c.requests {
		ch <- prometheus.MustNewConstMetric(requestConcurrencyDesc, prometheus.GaugeValue, float64(q.current), short, q.systemID)
		ch <- prometheus.MustNewConstMetric(requestConcurrencyExceededDesc, prometheus.CounterValue, float64(q.exceeded), short, q.systemID)
		ch <- prometheus.MustNewConstMetric(requestConcurrencyHardLimitDesc, prometheus.GaugeValue, float64(q.hard), short, q.systemID)
		ch <- prometheus.MustNewConstMetric(requestConcurrencyUsedLimitDesc, prometheus.GaugeValue, float64(q.used), short, q.systemID)
	}
	ch <- prometheus.MustNewConstMetric(concurrentDesc, prometheus.GaugeValue, float64(c.concurrent))
	for _, l := range c.limits {
		ch <- prometheus.MustNewConstMetric(limitDesc, prometheus.GaugeValue, float64(l.value), l.runner, l.name, l.systemID)
	}
	for f, n := range c.failures {
		ch <- prometheus.MustNewConstMetric(numJobFailuresDesc, prometheus.CounterValue, float64(n), f.runner, f.name, f.reason, f.mode)
	}
}

// Serve serves the registry's /metrics on 127.0.0.1, as the runner's
// metrics server does (promhttp.HandlerFor, commands/multi.go serveMetrics),
// until the test ends, and returns its host:port.
func (r *Runner) Serve(t testing.TB) string {
	return Serve(t, promhttp.HandlerFor(r.Registry, promhttp.HandlerOpts{}))
}

// Serve serves h at /metrics on 127.0.0.1 until the test ends.
func Serve(t testing.TB, h http.Handler) string {
	mux := http.NewServeMux()
	mux.Handle("/metrics", h)
	s := httptest.NewUnstartedServer(mux)
	s.Config.ErrorLog = log.New(io.Discard, "", 0)
	s.Start()
	t.Cleanup(s.Close)
	return s.Listener.Addr().String()
}
