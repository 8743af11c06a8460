// Package runnerprocess checks that a `gitlab-runner … run` process exists.
package runnerprocess

import (
	"fmt"
	"strings"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts/configfacts"
	"github.com/socialwebcomputer/doctor/checks/facts/hostfacts"
	"github.com/socialwebcomputer/doctor/internal/fixcode"
	"github.com/socialwebcomputer/doctor/internal/hostio"
)

var Check = &checks.Check{
	ID:       "runner-process",
	Title:    "A gitlab-runner run process is running",
	Severity: checks.Error,
	Doc: checks.Doc{
		Cause: "No `gitlab-runner run` process exists on this host: the service is stopped, or it exited at " +
			"start-up (a FATAL while decoding config.toml ends the process). GitLab keeps showing the runner " +
			"online for a while after its last contact, so the runner page is not evidence that it runs.",
		Symptom: "Jobs stay pending with \"This job is stuck because the project doesn't have any runners online\", " +
			"or the runner's own log ends with FATAL: Service run failed                           error=decoding configuration file: toml: line 9",
		Fix: checks.Steps{checks.TargetSay, checks.TargetVars,
			checks.Say("Start the runner's service, then read its own output for a FATAL:"),
			checks.Sh(startAndReadCatalog),
			checks.Say("Without a service, install one for the runner's config.toml and user (the runner's install subcommand writes the unit), then start it as above:"),
			checks.Sh(`sudo gitlab-runner install --service "${RUNNER_UNIT%.service}" --config "$RUNNER_CONFIG" --user "$RUNNER_USER" --working-directory "$(getent passwd "$RUNNER_USER" | cut -d: -f6)"`),
		},
		Verify: checks.Steps{checks.TargetSay, checks.TargetVars,
			checks.Sh(`pgrep -a gitlab-runner` + "\n" + `sudo journalctl -u "$RUNNER_UNIT" -n 50 --no-pager`)},
		Patterns: []string{
			// commands/multi.go, v19.3.0: logrus.WithError(err).Fatal("Service run failed"),
			// printed with the FATAL: prefix of log/runner_formatter.go: the process has exited.
			"FATAL: Service run failed",
			// commands/multi.go, v19.3.0 (reload, runner log): "Failed to load config" with
			// os.Stat's error: the file the process reads is gone.
			"Failed to load config stat *: no such file or directory",
			// systemd's own lines when the process exits with the runner's Fatal (exit status 1):
			// src/core/service.c "Main process exited, code=%s, status=%i/%s" and src/core/unit.c
			// "Failed with result '%s'." (voxpupuli/puppet-gitlab_ci_runner#141).
			"gitlab-runner.service: Main process exited, code=exited, status=1/FAILURE",
			"gitlab-runner.service: Failed with result '",
		},
	},
	Requires: []checks.Node{hostfacts.RunnerFact, hostfacts.ServiceFact},
	Run:      run,
}

// startAndReadCatalog starts the unit and prints its last lines, where a
// FATAL at start-up is, for the catalog's $RUNNER_UNIT.
const startAndReadCatalog = `sudo systemctl start "$RUNNER_UNIT"
sudo journalctl -u "$RUNNER_UNIT" -n 50 --no-pager`

// startAndRead is startAndReadCatalog for the unit this host has. A name
// systemd would not take, or one systemctl would read as an option, gets
// no command.
func startAndRead(unit string) checks.Step {
	if err := fixcode.UnitName(unit); err != nil {
		return checks.Withheld(err)
	}
	if strings.HasPrefix(unit, "-") {
		return checks.Withheld(fmt.Errorf("the unit name %q begins with -, which systemctl would read as an option", unit))
	}
	return checks.Commands(
		fixcode.Command("systemctl", "start", unit).Sudo(),
		fixcode.Command("journalctl", "-u", unit, "-n", "50", "--no-pager").Sudo())
}

func run(p *checks.Pass) error {
	r, svc := hostfacts.RunnerFact.Get(p), hostfacts.ServiceFact.Get(p)
	if r.ScanErr != nil {
		return fmt.Errorf("cannot look for runner processes: %w", r.ScanErr)
	}
	if r.Problem != "" {
		p.Report(checks.Finding{
			Cause:    r.Problem + ".",
			Evidence: listed(r, configs(p.Env, r)),
			Fix:      checks.Text("Give --runner-pid one of the listed pids, or leave it out to diagnose the first."),
		})
		return nil
	}
	switch len(r.All) {
	case 0:
		f := checks.Finding{
			Cause: "No `gitlab-runner run` process is running (none in /proc whose comm or argv[0] is gitlab-runner " +
				"with the run subcommand): no job runs here, though GitLab may still show the runner online.",
			Evidence: append([]checks.Evidence{{Source: "/proc", Detail: "no process whose comm or argv[0] is gitlab-runner with the run subcommand"}},
				r.NotRun...),
		}
		if svc.Found() {
			// The unit says what would run; doctor diagnoses that instead.
			f.Cause = fmt.Sprintf("No `gitlab-runner run` process is running, though %s exists: the service is stopped, "+
				"or it exited at start-up (a config it refuses ends it with a FATAL). No job runs here, though GitLab "+
				"may still show the runner online.", svc.Name)
			f.Evidence = append(f.Evidence, checks.Evidence{Source: svc.Unit.Path, Detail: "ExecStart=" + strings.Join(svc.Unit.ExecStart, " ")})
			f.Fix = checks.Steps{checks.Say("Start " + svc.Name + ", then read why it stopped:"), startAndRead(svc.Name)}
		}
		p.Report(f)
	case 1:
	default:
		several(p, r)
	}
	if proc := r.Selected; proc != nil && proc.CmdlineErr != nil {
		// A gitlab-runner by its comm, but `run` or `register`, and with
		// which --config, only its command line says.
		return fmt.Errorf("%s is gitlab-runner by its comm alone: %v, so whether it is `gitlab-runner run`, and its flags, are unknown%s",
			proc.Label(), proc.CmdlineErr, hostfacts.PermissionHint(proc.CmdlineErr))
	}
	return nil
}

// several examines each runner process: two that serve one config.toml poll
// GitLab with the same token and split its jobs between them.
func several(p *checks.Pass, r *hostfacts.Runner) {
	cfgs := configs(p.Env, r)
	ev := listed(r, cfgs)
	// Group in pid order, so the finding is the same on every run.
	var order []string
	byConfig := map[string][]int{}
	for i, proc := range r.All {
		if cfgs[i] == "" {
			continue
		}
		if byConfig[cfgs[i]] == nil {
			order = append(order, cfgs[i])
		}
		byConfig[cfgs[i]] = append(byConfig[cfgs[i]], proc.PID)
	}
	for _, cfg := range order {
		if pids := byConfig[cfg]; len(pids) > 1 {
			p.Report(checks.Finding{
				Severity: checks.Warning,
				Cause: fmt.Sprintf("%d runner processes (pids %s) serve the same %s: they poll GitLab with the same tokens "+
					"and each takes jobs the other was expected to run.", len(pids), joinInts(pids), cfg),
				Evidence: ev,
				Fix:      checks.Text("Stop the extra process; run one gitlab-runner per config.toml."),
			})
			return
		}
	}
	p.Report(checks.Finding{
		Severity: checks.Info,
		Cause: fmt.Sprintf("%d gitlab-runner run processes; diagnosing %s. Pass --runner-pid to diagnose another.",
			len(r.All), r.Selected.Label()),
		Evidence: ev,
		Fix:      checks.Text("None needed; run doctor once per runner with --runner-pid."),
	})
}

// configs locates each process's config.toml once ("" when it cannot be),
// in the order of r.All.
func configs(env *hostio.Env, r *hostfacts.Runner) []string {
	out := make([]string, len(r.All))
	for i, proc := range r.All {
		out[i] = configfacts.LocateConfigFor(env, proc)
	}
	return out
}

func listed(r *hostfacts.Runner, cfgs []string) []checks.Evidence {
	var ev []checks.Evidence
	for i, proc := range r.All {
		cfg := cfgs[i]
		if cfg == "" {
			cfg = "config.toml not locatable"
		}
		argv := strings.Join(proc.Cmdline, " ")
		if proc.CmdlineErr != nil {
			argv = "command line unknown (" + hostio.FileCause(proc.CmdlineErr).Error() + "), gitlab-runner by its comm"
		}
		ev = append(ev, checks.Evidence{
			Source: fmt.Sprintf("/proc/%d/cmdline", proc.PID),
			Detail: fmt.Sprintf("%s: %s; config %s", proc.Label(), argv, cfg),
		})
	}
	return ev
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}
