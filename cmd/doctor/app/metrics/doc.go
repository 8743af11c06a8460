// Package metrics writes a run's report as Prometheus metrics for
// node_exporter's textfile collector (doctor run --textfile PATH).
//
// The file is Prometheus's text format, byte for byte what client_golang's
// registry and expfmt would write (text.go says why doctor does not link
// them; a test compares the two), and it is written as
// prometheus.WriteToTextfile writes: a temporary file in the target's
// directory, renamed over the target, so the collector never reads half a
// file. The
// temporary name is the target's plus a random suffix ("doctor.prom123456"),
// which the collector's *.prom glob does not match.
//
// # Metrics
//
//	doctor_check_status{check,runner}
//	    How the check ended: 1 pass, 0 fail, -1 unknown or skipped (it
//	    proved nothing). One series per check and runner, as the report's
//	    checks list them; a per-runner check that applied to no runner is
//	    one series with runner="". Should two entries share a label set,
//	    the worst wins (fail, then unknown/skipped, then pass).
//	doctor_findings{severity,check,runner}
//	    How many findings of this severity (info, warning, error,
//	    critical) the report holds for the check and runner, after
//	    --ignore and .doctor.yaml. Every check that ran (pass or fail) has
//	    a series for each of the four severities, 0 included, so "ran and
//	    found nothing" is 0 while "did not run" is no series (its
//	    doctor_check_status is -1). The runner is the finding's own, which
//	    for a host-wide check's finding about a runner is that runner.
//	doctor_check_duration_seconds{check}
//	    How long the check took: the longest of its runs when it ran once
//	    per runner. Per-runner runs are concurrent, so the longest is the
//	    time the check added to the run, and what compares with its
//	    timeout. Millisecond resolution.
//	doctor_run_duration_seconds
//	    How long the whole run took. Millisecond resolution.
//	doctor_last_run_timestamp_seconds
//	    When the run started, in Unix seconds, by the run's clock (--now
//	    when given, else the system clock). Alert on time() minus this.
//	doctor_cert_expiry_timestamp_seconds{runner,subject}
//	    When the client certificate the runner's kubeconfig presents
//	    expires (NotAfter), in Unix seconds, whatever cert-expiry's verdict;
//	    subject is "CN=<common name>". The earliest one when a runner has
//	    two with one subject. Absent when no certificate was read (a token
//	    credential, --offline, a kubeconfig that did not load).
//	doctor_runner_config_reload_errors
//	    config.toml reloads the running runner rejected since it started:
//	    its own gitlab_runner_configuration_loading_error_total, as
//	    runner-metrics read it from the runner's /metrics. Absent when the
//	    runner serves no metrics (no listen_address) or doctor could not
//	    read them.
//	doctor_runner_request_job_refused{runner}
//	    Job requests of the runner GitLab answered 401 or 403 since the
//	    runner started (gitlab_runner_api_request_statuses_total with
//	    endpoint="request_job"): a revoked token.
//	doctor_runner_health_check_failures{runner}
//	    Failed job requests of the runner since it started
//	    (gitlab_runner_worker_health_check_failures_total).
//	doctor_runner_system_failed_jobs{runner}
//	    Jobs of the runner that failed with runner_system_failure or
//	    runner_external_dependency_failure since it started
//	    (gitlab_runner_failed_jobs_total).
//	doctor_runner_slots_used_ratio
//	    gitlab_runner_jobs over gitlab_runner_concurrent: 1 is every slot
//	    taken.
//
// The runner's counters start again at 0 when it restarts: alert on their
// delta over a window (deploy/prometheus-rules.yaml), not their value.
// Each carries at most one series per runner; none carries a label of the
// runner's own exposition.
//
// # The runner label
//
// "" for a host-wide check or finding, which Prometheus stores as no runner
// label at all (match it with runner=""). Otherwise the runner's name in
// config.toml, which stays when [[runners]] entries are reordered; "#N"
// (its position, from 1) when it has no name; and that label with "#N"
// appended ("NAME#N") for each runner whose label would otherwise be shared
// with another runner's (two runners with one name). The fingerprints of doctor run -o json use the position;
// the metrics use the name, which is what an alert should print.
//
// Observations other than cert_expiry_timestamp_seconds and runner-metrics'
// are not exported (yet): a new one needs its metric here, with its help
// text and labels.
package metrics
