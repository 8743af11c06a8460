package configlint

import (
	"fmt"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts/configfacts"
)

// lintConcurrency is the runner's own checkConfigConcurrency
// (commands/multi.go, gitlab-runner v19.3.0), which it logs as
// "CONFIGURATION: Long polling issues detected." on every start and
// reload, plus register's warning about request_concurrency above
// concurrent (commands/register.go, v19.3.0). Each job request is a long
// poll GitLab holds open; a worker or a request slot stuck in one cannot
// take the job another runner was just given.
//
// The runner also warns about every runner left at request_concurrency=1
// (its default, GetRequestConcurrency = max(1, request_concurrency)); that
// is every runner of the guide's config, so it is said only where it
// binds: with a limit of 1 or 2, as the runner's "Build limit
// bottleneck" says.
func lintConcurrency(p *checks.Pass, c *configfacts.ConfigFile) {
	cfg := c.Config
	concurrent := max(cfg.Concurrent, 1) // the runner's default is 1
	if n := len(cfg.Runners); concurrent < n {
		src, line := c.At([]string{"concurrent"})
		p.Report(checks.Finding{
			// "Worker starvation bottleneck: 'concurrent' setting (%d) is less than number of runners (%d)"
			Cause: fmt.Sprintf("concurrent = %d is less than the %d [[runners]]: the runner warns \"Worker starvation bottleneck: "+
				"'concurrent' setting (%d) is less than number of runners (%d)\"; a runner waits for a worker that another "+
				"holds in a long poll, and its jobs wait GitLab's long polling timeout.", concurrent, n, concurrent, n),
			Evidence: []checks.Evidence{{Source: src, Detail: orDefault(line, "concurrent not set (the runner's default is 1)")}},
			// "Increase 'concurrent' to at least %d (current: %d)"
			Fix: checks.Text(fmt.Sprintf("Set concurrent to at least %d in %s (the runner's own advice: the number of [[runners]] plus one).", n+1, c.Path)),
		})
	}
	for i, r := range cfg.Runners {
		rc := max(r.RequestConcurrency, 1)
		label := configfacts.RunnerLabel(i, r)
		if r.Limit > 0 && r.Limit <= 2 && rc == 1 {
			src, line := c.AtRunner(i, "limit")
			p.Report(checks.Finding{
				Runner: configfacts.RefOf(i, r),
				// "Build limit bottleneck: %d runners have low 'limit' settings (≤2) with request_concurrency=1"
				Cause: fmt.Sprintf("%s: limit = %d with request_concurrency = 1: the runner warns \"Build limit bottleneck\": its one "+
					"job request sits in GitLab's long poll, so a job queued meanwhile waits for the poll to end.", label, r.Limit),
				Evidence: []checks.Evidence{{Source: src, Detail: line}},
				// "For %d runners with low limits: either increase 'limit' to 5+ or increase 'request_concurrency' to 2+"
				Fix: checks.Text("Set request_concurrency = 2 (or more) in this [[runners]], or raise limit to 5 or more."),
			})
		}
		if rc > concurrent {
			src, line := c.AtRunner(i, "request_concurrency")
			p.Report(checks.Finding{
				Runner: configfacts.RefOf(i, r),
				// commands/register.go, v19.3.0
				Cause: fmt.Sprintf("%s: request_concurrency = %d is larger than concurrent = %d: \"The global concurrent limit will not be "+
					"increased and takes precedence\", so the extra requests never go out.", label, rc, concurrent),
				Evidence: []checks.Evidence{{Source: src, Detail: line}},
				Fix:      checks.Text(fmt.Sprintf("Set request_concurrency to at most %d, or raise concurrent.", concurrent)),
			})
		}
	}
}

// stopsTheRunner: concurrent set below 1 is no slow poll but a runner that
// exits. updateWorkers (commands/multi.go, gitlab-runner v19.3.0), run
// moments after start-up and on every reload, does
//
//	mr.log().Fatalln(fmt.Printf("Current configuration 'concurrent = %d' means that no jobs will be processed, see https://docs.gitlab.com/runner/configuration/advanced-configuration.html#the-global-section", concurrentLimit))
//
// so the sentence goes to stdout unterminated and the FATAL line that ends
// the process carries Printf's byte count and nil error. Under systemd the
// unit restarts and dies again.
func stopsTheRunner(p *checks.Pass, concurrent int, src, line string) {
	p.Report(checks.Finding{
		Severity: checks.Critical,
		Cause: fmt.Sprintf("concurrent = %d: the runner starts no worker and exits: it prints \"Current configuration "+
			"'concurrent = %d' means that no jobs will be processed\" and stops with a FATAL line, at start-up and at the "+
			"first reload after the change, so no [[runners]] takes a job.", concurrent, concurrent),
		Evidence: []checks.Evidence{{Source: src, Detail: line}},
		Fix: checks.Text("Set concurrent to the number of jobs the runner may run at once (at least 1; the guide's value is the number of nodes " +
			"you pay for). To stop one runner taking jobs, pause it in GitLab instead."),
	})
}
