package runnermetrics

import (
	"slices"
	"strconv"
	"strings"

	dto "github.com/prometheus/client_model/go"
)

// Def is one metric family of gitlab-runner's /metrics that doctor reads,
// as the runner's source defines it: its name, type and help (those of the
// newest tag doctor knows, v19.3.0), and its label names as they changed
// from tag to tag. Every name, label and help below is quoted from the
// file and tag its comment gives (the x.y.0 tags from v15.0.0 to v19.3.0
// were compared; a label set is the one of every tag from Since until the
// next entry).
type Def struct {
	Name string
	Type dto.MetricType
	Help string
	// Labels are the family's label names by runner version, oldest first.
	Labels []LabelSet
}

// LabelSet is a family's label names from a runner version on.
type LabelSet struct {
	Since  string // "15.8.0": the first x.y.0 tag that has these labels
	Labels []string
}

// The families doctor reads.
const (
	VersionInfo          = "gitlab_runner_version_info"
	ConfigLoadingErrors  = "gitlab_runner_configuration_loading_error_total"
	ConfigLoaded         = "gitlab_runner_configuration_loaded_total"
	APIRequestStatuses   = "gitlab_runner_api_request_statuses_total"
	APIRequestRetries    = "gitlab_runner_api_request_retries_total"
	HealthCheckFailures  = "gitlab_runner_worker_health_check_failures_total"
	FailedJobs           = "gitlab_runner_failed_jobs_total"
	Jobs                 = "gitlab_runner_jobs"
	Concurrent           = "gitlab_runner_concurrent"
	Limit                = "gitlab_runner_limit"
	RequestConcurrency   = "gitlab_runner_request_concurrency"
	RequestConcExceeded  = "gitlab_runner_request_concurrency_exceeded_total"
	RequestConcHardLimit = "gitlab_runner_request_concurrency_hard_limit"
	RequestConcUsedLimit = "gitlab_runner_request_concurrency_used_limit"
)

var (
	counter = dto.MetricType_COUNTER
	gauge   = dto.MetricType_GAUGE
)

// Defs are the families doctor reads, as gitlab-runner defines them.
var Defs = []Def{
	// common/version.go, v15.0.0 to v19.3.0 (AppVersionInfo.NewMetricsCollector):
	// a GaugeVec whose label names are the keys of a map, set to 1.
	{Name: VersionInfo, Type: gauge, Help: "A metric with a constant '1' value labeled by different build stats fields.",
		Labels: []LabelSet{{"15.0.0", []string{"name", "version", "revision", "branch", "go_version", "built_at", "os", "architecture"}}}},
	// commands/config.go, v15.9.0 to v18.0.0; commands/internal/configfile/metrics.go,
	// v18.1.0 to v19.3.0 (newConfigAccessCollector): plain counters, no label.
	{Name: ConfigLoadingErrors, Type: counter, Help: "Total number of times the configuration file was not loaded by Runner process due to errors",
		Labels: []LabelSet{{"15.9.0", nil}}},
	{Name: ConfigLoaded, Type: counter, Help: "Total number of times the configuration file was loaded by Runner process",
		Labels: []LabelSet{{"15.9.0", nil}}},
	// network/gitlab.go, v15.0.0 to v15.9.0; network/api_requests_collector.go, v15.10.0 to
	// v19.3.0 (newAPIRequestCollectorWithBuckets). endpoint is one of reset_token,
	// request_job, update_job, patch_trace, discovery; status the HTTP status code.
	{Name: APIRequestStatuses, Type: counter, Help: "The total number of API requests made by GitLab Runner, partitioned by runner, system_id, endpoint, status and method.",
		Labels: []LabelSet{
			{"15.0.0", []string{"runner", "endpoint", "status"}},
			{"15.8.0", []string{"runner", "system_id", "endpoint", "status"}},
			{"18.3.0", []string{"runner", "system_id", "endpoint", "status", "method"}},
		}},
	// network/api_requests_collector.go, v18.3.0 to v19.3.0.
	{Name: APIRequestRetries, Type: counter, Help: "The total number of retries made by GitLab Runner in process of completing a request, partitioned by path and method.",
		Labels: []LabelSet{{"18.3.0", []string{"path", "method"}}}},
	// commands/health_helper.go, v15.11.0 to v19.3.0 (newHealthHelper): incremented
	// by markHealth for every job request that failed.
	{Name: HealthCheckFailures, Type: counter, Help: "Total number of runner worker health check failures",
		Labels: []LabelSet{{"15.11.0", []string{"runner", "runner_name", "system_id"}}}},
	// helpers/prometheus/failures_collector.go, v15.0.0 to v19.3.0 (numJobFailuresDesc).
	{Name: FailedJobs, Type: counter, Help: "Total number of failed jobs",
		Labels: []LabelSet{
			{"15.0.0", []string{"runner", "failure_reason"}},
			{"18.2.0", []string{"runner", "runner_name", "failure_reason"}},
			{"19.0.0", []string{"runner", "runner_name", "failure_reason", "mode"}},
		}},
	// commands/builds_helper.go, v15.0.0 to v19.3.0 (numBuildsDesc): the builds the
	// process holds, by state (common/build.go: pending, running, success, failed,
	// canceled, terminated, timedout), stage and executor stage.
	{Name: Jobs, Type: gauge, Help: "The current number of running builds.",
		Labels: []LabelSet{
			{"15.0.0", []string{"runner", "state", "stage", "executor_stage"}},
			{"15.8.0", []string{"runner", "system_id", "state", "stage", "executor_stage"}},
			{"18.2.0", []string{"runner", "runner_name", "system_id", "state", "stage", "executor_stage"}},
		}},
	// commands/multi.go, v15.0.0 to v19.3.0 (concurrentDesc, limitDesc; Collect).
	{Name: Concurrent, Type: gauge, Help: "The current value of concurrent setting",
		Labels: []LabelSet{{"15.0.0", nil}}},
	{Name: Limit, Type: gauge, Help: "The current value of concurrent setting",
		Labels: []LabelSet{
			{"15.0.0", []string{"runner"}},
			{"15.8.0", []string{"runner", "system_id"}},
			{"18.2.0", []string{"runner", "runner_name", "system_id"}},
		}},
	// commands/builds_helper.go, v15.0.0 to v19.3.0 (requestConcurrencyDesc,
	// requestConcurrencyExceededDesc), v18.0.0 to v19.3.0 (the hard and used limits).
	{Name: RequestConcurrency, Type: gauge, Help: "The current number of concurrent requests for a new job",
		Labels: []LabelSet{{"15.0.0", []string{"runner"}}, {"15.8.0", []string{"runner", "system_id"}}}},
	{Name: RequestConcExceeded, Type: counter, Help: "Count of excess requests above the configured request_concurrency limit",
		Labels: []LabelSet{{"15.0.0", []string{"runner"}}, {"15.8.0", []string{"runner", "system_id"}}}},
	{Name: RequestConcHardLimit, Type: gauge, Help: "Configured request_concurrency limit",
		Labels: []LabelSet{{"18.0.0", []string{"runner", "system_id"}}}},
	{Name: RequestConcUsedLimit, Type: gauge, Help: "Used request concurrency limit",
		Labels: []LabelSet{{"18.0.0", []string{"runner", "system_id"}}}},
}

// Newest is the newest tag the definitions were read from; a runner newer
// than it is judged by its definitions.
const Newest = "19.3.0"

// Oldest is the oldest tag they were read from: an older runner's
// exposition is judged by the names and types alone.
const Oldest = "15.0.0"

// DefOf is the definition of a family doctor reads, nil for another.
func DefOf(name string) *Def {
	for i := range Defs {
		if Defs[i].Name == name {
			return &Defs[i]
		}
	}
	return nil
}

// LabelsAt are the family's label names at runner version v (sorted), and
// whether the family exists there at all. An unknown version (v "") or one
// older than Oldest gives ok with nil labels: only the name and type can
// be checked.
func (d *Def) LabelsAt(v string) (labels []string, exists, known bool) {
	if v == "" || Less(v, Oldest) {
		return nil, true, false
	}
	exists = false
	for _, s := range d.Labels {
		if !Less(v, s.Since) {
			labels, exists = s.Labels, true
		}
	}
	labels = slices.Clone(labels)
	slices.Sort(labels)
	return labels, exists, true
}

// Less compares two runner versions ("19.3.0", "v18.2.1", "19.4.0~pre.12.g1")
// by major, minor and patch; what follows the patch is ignored.
func Less(a, b string) bool {
	x, y := parse(a), parse(b)
	for i := range x {
		if x[i] != y[i] {
			return x[i] < y[i]
		}
	}
	return false
}

func parse(v string) [3]int {
	v = strings.TrimPrefix(strings.TrimSpace(v), "v")
	var out [3]int
	for i, part := range strings.SplitN(v, ".", 3) {
		end := 0
		for end < len(part) && part[end] >= '0' && part[end] <= '9' {
			end++
		}
		out[i], _ = strconv.Atoi(part[:end])
	}
	return out
}
