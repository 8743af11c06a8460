// Package configlint weighs each setting of a Kubernetes runner against the
// reason the guide's settings table gives for its value.
package configlint

import (
	"fmt"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts/configfacts"
	"github.com/socialwebcomputer/doctor/checks/facts/hostfacts"
	"github.com/socialwebcomputer/doctor/runnerconfig"
)

var Check = &checks.Check{
	ID:       "config-lint",
	Title:    "Runner settings fit a cluster whose nodes are rented",
	Severity: checks.Warning,
	Doc: checks.Doc{
		Cause: "Settings that decode fine but fight the rented-node model: concurrent of 1 wedges on a stale job; " +
			"output_limit below 51200 KB cuts a Go test log; poll_timeout below 600 s gives up while a rented node " +
			"is still booting (the runner's default is 180 s); concurrent below the number of [[runners]], or a limit of 1 or 2 " +
			"with request_concurrency 1, leaves a job waiting out GitLab's long poll; without required pod anti-affinity two jobs share a " +
			"node; an autoscaler policy with idle_count > 0 and no periods keeps a node billed around the clock.",
		Symptom: "ERROR: Job failed (system failure): prepare environment: waiting for pod running: timed out waiting for pod to start (last phase: Pending)" + checks.PrepareHint + "; or \"Job's log exceeded limit of 4194304 bytes.\"",
		Fix: checks.Steps{
			checks.Say("Set what the finding names: concurrent at most the number of nodes you pay for (here 2) at the top of config.toml; in [[runners]] " +
				"output_limit = 51200; in [runners.kubernetes] poll_timeout = 3600 and a required pod anti-affinity on kubernetes.io/hostname; " +
				"idle_count > 0 only inside [[runners.autoscaler.policy]] periods. The global key:"),
			checks.Toml("concurrent = 2"),
			checks.Say("In the runner's [[runners]] entry:"),
			checks.Toml("output_limit = 51200\n[runners.kubernetes]\npoll_timeout = 3600"),
		},
		Verify: checks.Steps{checks.Sh("doctor run --only config-lint")},
		Patterns: []string{
			// commands/multi.go, v19.3.0 (checkConfigConcurrency)
			"CONFIGURATION: Long polling issues detected.",
			"Worker starvation bottleneck: 'concurrent' setting (*) is less than number of runners (*)",
			"Build limit bottleneck: * runners have low 'limit' settings (≤2) with request_concurrency=1",
			// commands/multi.go, v19.3.0 (updateWorkers): concurrent below 1 stops the runner.
			"Current configuration 'concurrent = *' means that no jobs will be processed",
			// commands/register.go, v19.3.0
			"The specified runner request concurrency (*) is larger than the current global concurrent limit (*).",
			// commands/multi.go, v15.0.0 to v17.10: Fatalln("Concurrent is less than 1 - no jobs will be processed").
			"Concurrent is less than 1 - no jobs will be processed",
			// "timed out waiting for pod to start" is pending-no-node's Doc.Ambiguous, with this check
			// (poll_timeout) among its causes.
			// helpers/trace/buffer.go, v19.3.0: "\n%sJob's log exceeded limit of %v bytes.\n": output_limit.
			"Job's log exceeded limit of * bytes.",
		},
	},
	Requires: []checks.Node{checks.Ref("config-decode"), configfacts.ConfigFact, hostfacts.EnvironFact},
	Run:      run,
}

// The runner's own defaults, applied when a key is absent or zero.
const (
	defaultOutputLimitKB  = 4096
	defaultPollTimeoutSec = 180
	wantOutputLimitKB     = 51200
	minPollTimeoutSec     = 600
)

func run(p *checks.Pass) error {
	c := configfacts.ConfigFact.Get(p)
	cfg := c.Config
	// Decode leaves an absent concurrent 0, which the runner reads as its
	// default, 1 (NewConfig, common/config.go, v19.3.0); written out below
	// 1, it stops the runner, and nothing else about concurrency matters.
	if src, line := c.At([]string{"concurrent"}); line != "" && cfg.Concurrent < 1 {
		stopsTheRunner(p, cfg.Concurrent, src, line)
	} else {
		if cfg.Concurrent <= 1 {
			p.Report(checks.Finding{
				Cause:    fmt.Sprintf("concurrent = %d: one job in flight at a time, and a stale job from a cancelled pipeline wedges the runner.", max(cfg.Concurrent, 1)),
				Evidence: []checks.Evidence{{Source: src, Detail: orDefault(line, "concurrent not set (the runner's default is 1)")}},
				Fix:      checks.Text("Set concurrent to the number of nodes the user will pay for (every concurrent job is a rented node), at least 2."),
			})
		}
		lintConcurrency(p, c)
	}
	for i, r := range cfg.Runners {
		lintFleeting(p, c, i, r)
		if r.Executor != "kubernetes" {
			continue
		}
		lintRunner(p, c, i, r, rented(hostfacts.EnvironFact.Get(p)))
	}
	return nil
}

// rented tells the gateway shape, whose nodes the market rents, from a
// runner in a pod (the Deckhouse in-cluster shape), which places jobs on its
// own cluster's nodes: the boot-time and one-job-one-node rules are the
// former's.
func rented(e *hostfacts.Environ) bool {
	if e.Err != nil {
		return true
	}
	_, inPod := e.InCluster()
	return !inPod
}

func lintRunner(p *checks.Pass, c *configfacts.ConfigFile, i int, r *runnerconfig.Runner, rented bool) {
	label := configfacts.RunnerLabel(i, r)
	if limit := orInt(r.OutputLimit, defaultOutputLimitKB); limit < wantOutputLimitKB {
		src, line := c.AtRunner(i, "output_limit")
		f := checks.Finding{
			Runner:   configfacts.RefOf(i, r),
			Cause:    fmt.Sprintf("%s: output_limit is %d KB; the trace is cut at %d MiB, too small for a Go test log.", label, limit, limit/1024),
			Evidence: []checks.Evidence{{Source: src, Detail: orDefault(line, "output_limit not set (the runner's default is 4096 KB)")}},
			Fix:      checks.Text("Set output_limit = 51200 in [[runners]] (kilobytes)."),
		}
		if !rented {
			// The 51200 is the rented-node guide's settings table; the
			// runner as a Deployment in its own cluster (the Deckhouse
			// document, which leaves the default) is not that shape, and a
			// trace cap is a taste of the jobs there, not a fault: a note.
			f.Severity = checks.Info
			f.Cause = fmt.Sprintf("%s: output_limit is %d KB; the trace is cut at %d MiB, which a long test log can exceed.", label, limit, limit/1024)
		}
		p.Report(f)
	}
	k := r.Kubernetes
	if k == nil {
		k = &runnerconfig.Kubernetes{}
	}
	if pt := orInt(k.PollTimeout, defaultPollTimeoutSec); rented && pt < minPollTimeoutSec {
		src, line := c.AtRunner(i, "kubernetes", "poll_timeout")
		p.Report(checks.Finding{
			Runner: configfacts.RefOf(i, r),
			Cause: fmt.Sprintf("%s: poll_timeout is %d s; a job pod waits for the market to rent and boot a node and then for its image, "+
				"which takes minutes, and the runner gives up after %d s.", label, pt, pt),
			Evidence: []checks.Evidence{{Source: src, Detail: orDefault(line, "poll_timeout not set (the runner's default is 180 s)")}},
			Fix:      checks.Text("Set poll_timeout = 3600 in [runners.kubernetes]."),
		})
	}
	if rented && !requiredAntiAffinity(k) {
		src, _ := c.AtRunner(i, "kubernetes")
		p.Report(checks.Finding{
			Runner:   configfacts.RefOf(i, r),
			Cause:    label + ": no required pod anti-affinity, so two jobs can share one rented node; one job is one node, which is the cost model.",
			Evidence: []checks.Evidence{{Source: src, Detail: "[runners.kubernetes.affinity.pod_anti_affinity] has no required_during_scheduling_ignored_during_execution term"}},
			Fix: checks.Text("Add a required pod anti-affinity term with topology_key = \"kubernetes.io/hostname\" and a label_selector on " +
				"project.runner.gitlab.com/id Exists, as in the guide's config.toml."),
		})
	}
	if a := k.Autoscaler; a != nil {
		for j, pol := range a.Policy {
			if pol.IdleCount > 0 && len(pol.Periods) == 0 {
				src, line := c.AtRunner(i, "kubernetes", "autoscaler", "policy", "idle_count")
				p.Report(checks.Finding{
					Runner: configfacts.RefOf(i, r),
					Cause: fmt.Sprintf("%s: pause-pod policy #%d keeps idle_count = %d with no periods: a pause pod is always Pending, "+
						"so a node is rented and billed 24x7 and the cluster never returns to zero.", label, j+1, pol.IdleCount),
					Evidence: []checks.Evidence{{Source: src, Detail: line}},
					Fix:      checks.Text("Give the policy periods (working hours) and a policy with idle_count = 0 for the rest, or set idle_count = 0."),
				})
			}
		}
	}
}

func requiredAntiAffinity(k *runnerconfig.Kubernetes) bool {
	pa := k.Affinity.PodAntiAffinity
	return pa != nil && len(pa.RequiredDuringSchedulingIgnoredDuringExecution) > 0
}

func orInt(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}

func orDefault(line, def string) string {
	if line == "" {
		return def
	}
	return line
}

// lintFleeting notes an instance-executor autoscaler (the DVP fleeting
// plugin's VirtualMachinePool) that keeps idle machines with no periods:
// they run around the clock. A note, not a warning: on the operator's own
// virtualization that can be the intent, where on rented nodes it is a bill.
func lintFleeting(p *checks.Pass, c *configfacts.ConfigFile, i int, r *runnerconfig.Runner) {
	if r.Autoscaler == nil {
		return
	}
	for j, pol := range r.Autoscaler.Policy {
		if pol.IdleCount > 0 && len(pol.Periods) == 0 {
			src, line := c.AtRunner(i, "autoscaler", "policy", "idle_count")
			p.Report(checks.Finding{
				Runner:   configfacts.RefOf(i, r),
				Severity: checks.Info,
				// idle_count "refers to the number of jobs, not the number of
				// autoscaled machines" (docs/configuration/advanced-configuration.md, v19.3.0).
				Cause: fmt.Sprintf("%s: autoscaler policy #%d keeps idle capacity for idle_count = %d jobs (plugin %s) with no periods: "+
					"the machines that hold it run around the clock, jobs or not.", configfacts.RunnerLabel(i, r), j+1, pol.IdleCount, orDefault(r.Autoscaler.Plugin, "unnamed")),
				Evidence: []checks.Evidence{{Source: src, Detail: line}},
				Fix:      checks.Text("None if an always-warm machine is wanted; otherwise give the policy periods (working hours) and keep idle_count = 0 outside them."),
			})
		}
	}
}
