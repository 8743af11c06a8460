// Package runnerservice checks the runner's systemd unit, and that the
// running process is what the unit would start now.
package runnerservice

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts/hostfacts"
	"github.com/socialwebcomputer/doctor/checks/facts/kubefacts"
	"github.com/socialwebcomputer/doctor/internal/fixcode"
	"github.com/socialwebcomputer/doctor/internal/source/systemd"
)

var Check = &checks.Check{
	ID:       "runner-service",
	Title:    "The runner's systemd unit is enabled and the running process matches it",
	Severity: checks.Warning,
	Doc: checks.Doc{
		Cause: "systemd starts the runner from gitlab-runner.service and its drop-ins (<unit>.d/*.conf). A unit " +
			"that is not enabled does not start at boot; a masked one never starts. A drop-in written with " +
			"`systemctl edit` reaches the process only after `systemctl daemon-reload` and a restart: until then " +
			"the running process has the old environment, so a KUBECONFIG added in a drop-in is not in it, and " +
			"jobs fail as if it had never been set.",
		Symptom: "ERROR: Job failed: getting Kubernetes config: invalid configuration: no configuration has been provided, try setting KUBERNETES_MASTER environment variable (with Environment=KUBECONFIG=… in a drop-in); or, after a reboot, no runner process and jobs stuck as pending",
		Fix: checks.Target(checks.Sh(`sudo systemctl daemon-reload
sudo systemctl restart "$RUNNER_UNIT"
sudo systemctl enable "$RUNNER_UNIT"`)),
		Verify: checks.Target(checks.Sh(`systemctl show "$RUNNER_UNIT" -p FragmentPath,DropInPaths,UnitFileState,ActiveEnterTimestamp
sudo cat "/proc/$(systemctl show -p MainPID --value "$RUNNER_UNIT")/environ" | tr '\0' '\n' | grep ^KUBECONFIG=`)),
		Patterns: []string{
			// executors/kubernetes/kubernetes.go, v19.3.0: fmt.Errorf("getting Kubernetes config: %w", err),
			// with client-go's ErrEmptyConfig (tools/clientcmd/validation.go, v0.36.3): the process
			// never got the drop-in's KUBECONFIG.
			"getting Kubernetes config: invalid configuration: no configuration has been provided",
			// systemd 252 (libsystemd-core-252.so; src/core/execute.c exec_child, src/core/unit.c):
			// "%s: Failed to locate executable %s: %m", "%s: Failed at step %s spawning %s: %m",
			// "%s was skipped because of an unmet condition check (%s=%s%s)." for the runner's binary.
			"Failed to locate executable *gitlab-runner: ",
			"Failed at step EXEC spawning *gitlab-runner: ",
			"was skipped because of an unmet condition check (ConditionFileIsExecutable=*gitlab-runner)",
		},
	},
	Requires: []checks.Node{hostfacts.ServiceFact, hostfacts.RunnerFact, hostfacts.EnvironFact, kubefacts.FixScopeFact},
	// A unit systemd cannot start (its condition, an EnvironmentFile=, its
	// ExecStart= binary), masked or not enabled is why no runner process
	// runs: runner-process's "not running" folds under it.
	Explains: []string{"runner-process"},
	Run:      run,
}

func run(p *checks.Pass) error {
	svc, r := hostfacts.ServiceFact.Get(p), hostfacts.RunnerFact.Get(p)
	if err := fixcode.UnitName(svc.Name); err != nil {
		// The name is the process's --service: no unit systemd loads can
		// have it, and a command carrying it would carry whatever it holds.
		reportInvalidName(p, svc.Name, r.Selected, err)
		return nil
	}
	if svc.Err != nil {
		return fmt.Errorf("reading %s: %w", svc.Name, svc.Err)
	}
	if svc.NotLoaded() {
		notLoaded(p, svc)
		return nil
	}
	if !svc.Found() {
		return checks.Skip("no %s on systemd's unit path (%s): the runner is not run by systemd here", svc.Name, strings.Join(systemd.MainSearchPath, ", "))
	}
	u := svc.Unit
	restart := checks.Commands(reload(svc.Name)...)
	if u.Masked {
		p.Report(checks.Finding{
			Severity: checks.Error,
			Cause:    fmt.Sprintf("%s is masked (%s is empty or a link to /dev/null): systemd never starts the runner.", svc.Name, u.Path),
			Evidence: []checks.Evidence{{Source: u.Path, Detail: "masked"}},
			Fix:      checks.Steps{checks.Commands(systemctl("unmask", svc.Name), systemctl("enable", "--now", svc.Name))},
		})
		return nil
	}
	proc := r.Selected
	systemdView(p, svc, proc == nil && len(r.All) == 0, restart)
	var reported map[systemd.Source]bool
	var unknown error
	if proc == nil && len(r.All) == 0 {
		// systemd tests the conditions first, and a skipped start goes no
		// further: no environment file is read, nothing is executed.
		scope := kubefacts.FixScopeFact.Get(p)
		skipped, err := skippedStart(p, svc, scope)
		unknown = err
		if !skipped {
			reported = missingEnvironmentFiles(p, svc)
			if err := unexecutableStart(p, svc, scope); err != nil {
				unknown = err
			}
		}
	}
	for _, pr := range u.Problems {
		if pr.Fatal && reported[pr.Source] {
			continue
		}
		p.Report(checks.Finding{
			Cause:    fmt.Sprintf("systemd reports a problem in %s: %s", svc.Name, pr.Message),
			Evidence: []checks.Evidence{{Source: pr.Source.String(), Detail: pr.Message}},
			Fix:      checks.Steps{checks.Say("Correct the line, then restart the runner:"), restart},
		})
	}
	if !svc.Enabled {
		p.Report(checks.Finding{
			Cause:    fmt.Sprintf("%s is not enabled: no wants symlink names it, so the runner does not start at boot.", svc.Name),
			Evidence: []checks.Evidence{{Source: u.Path, Detail: "WantedBy=" + strings.Join(u.WantedBy, " ") + "; no <target>.wants/" + svc.Name + " link"}},
			Fix:      checks.Steps{checks.Commands(systemctl("enable", svc.Name))},
		})
	}
	if proc == nil {
		return unknown // runner-process says that nothing runs
	}
	staleEnvironment(p, svc, hostfacts.EnvironFact.Get(p), restart)
	if !proc.Started.IsZero() {
		for _, f := range u.Files {
			if f.ModTime.After(proc.Started) {
				p.Report(checks.Finding{
					Cause: fmt.Sprintf("%s changed at %s, after the runner process (pid %d) started at %s: the process runs "+
						"what the unit said before, not what it says now.", f.Path, stamp(f.ModTime), proc.PID, stamp(proc.Started)),
					Evidence: []checks.Evidence{
						{Source: f.Path, Detail: "modified " + stamp(f.ModTime)},
						{Source: fmt.Sprintf("/proc/%d/stat", proc.PID), Detail: "started " + stamp(proc.Started)},
					},
					Fix: checks.Steps{restart},
				})
			}
		}
	}
	return nil
}

// notLoaded reports a unit whose file exists while the running manager
// does not know the unit (`systemctl show` says LoadState=not-found): it
// was written after the last daemon-reload, and systemctl start answers
// "Unit gitlab-runner.service not found." until systemd reads its unit
// directories again (the manager's unit path cache, src/core/manager.c,
// systemd 252).
func notLoaded(p *checks.Pass, svc *hostfacts.Service) {
	p.Report(checks.Finding{
		Severity: checks.Error,
		Cause: fmt.Sprintf("%s exists (%s), but the running systemd has not loaded it: it was written after the last "+
			"`systemctl daemon-reload`, so `systemctl start %s` says the unit is not found and nothing starts the runner.", svc.Name, svc.Unit.Path, svc.Name),
		Evidence: []checks.Evidence{
			{Source: svc.Unit.Path, Detail: "exists"},
			{Source: "systemctl show " + svc.Name, Detail: "LoadState=not-found"},
		},
		Fix: checks.Steps{checks.Commands(systemctl("daemon-reload"), systemctl("enable", "--now", svc.Name))},
	})
}

// systemdView reports what the running manager says and the files do not:
// unit files changed since it loaded them (NeedDaemonReload=yes), so a
// restart runs what it loaded, not what the files say; and, for a runner
// that is down, the last start's failure as systemd recorded it.
func systemdView(p *checks.Pass, svc *hostfacts.Service, down bool, restart checks.Step) {
	sd := svc.Systemd()
	if sd == nil {
		return
	}
	src := "systemctl show " + svc.Name
	if sd.NeedDaemonReload {
		differs := ""
		if len(svc.Unit.Overridden) > 0 {
			differs = fmt.Sprintf(" What it loaded differs from the files in %s; doctor diagnoses what systemd would run.", strings.Join(svc.Unit.Overridden, ", "))
		}
		p.Report(checks.Finding{
			Cause: fmt.Sprintf("%s's files changed after systemd loaded them (NeedDaemonReload=yes): until `systemctl daemon-reload`, "+
				"starting or restarting the runner runs the unit as systemd loaded it, not as its files say now.%s", svc.Name, differs),
			Evidence: []checks.Evidence{{Source: src, Detail: "NeedDaemonReload=yes"}},
			Fix:      checks.Steps{restart},
		})
	}
	if down && sd.ActiveState == "failed" {
		// systemd.service(5), Result=: "exit-code", "signal", "core-dump",
		// "timeout", "resources", "start-limit-hit" ...; ExecMainStatus= is
		// the main process's exit status.
		p.Report(checks.Finding{
			Severity: checks.Error,
			Cause: fmt.Sprintf("systemd says %s failed (Result=%s, ExecMainStatus=%d): the runner's last start ended, and nothing "+
				"restarted it. Its own last words are in the journal.", svc.Name, sd.Result, sd.ExecMainStatus),
			Evidence: []checks.Evidence{{Source: src, Detail: fmt.Sprintf("ActiveState=%s SubState=%s Result=%s ExecMainStatus=%d", sd.ActiveState, sd.SubState, sd.Result, sd.ExecMainStatus)}},
			Fix: checks.Steps{checks.Say("Read why it stopped, correct it, then start it again:"),
				checks.Commands(fixcode.Command("journalctl", "--unit", svc.Name, "--lines", "50", "--no-pager").Sudo(), systemctl("restart", svc.Name))},
		})
	}
}

// staleEnvironment compares what the unit sets with what the running
// process has: a variable the unit sets that the process lacks, or has with
// another value, came from a unit or drop-in the process predates.
func staleEnvironment(p *checks.Pass, svc *hostfacts.Service, env *hostfacts.Environ, restart checks.Step) {
	if env.Err != nil || env.FromUnit {
		return
	}
	want, origin := svc.Unit.Environ()
	names := make([]string, 0, len(want))
	for k := range want {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		got, ok := env.Lookup(k)
		if ok && got == want[k] {
			continue
		}
		sev, has := checks.Warning, "lacks it"
		if k == "KUBECONFIG" {
			sev = checks.Error
		}
		if ok {
			has = "has another value"
		}
		// Values can be secrets: name the variable and where it is set only.
		p.Report(checks.Finding{
			Severity: sev,
			Cause: fmt.Sprintf("%s sets %s (%s), but the running process %s: the running process predates the drop-in "+
				"(or the unit changed since it started).", svc.Name, k, origin[k], has),
			Evidence: []checks.Evidence{
				{Source: origin[k].String(), Detail: "sets " + k},
				{Source: env.Source, Detail: k + " " + map[bool]string{true: "differs", false: "not set"}[ok]},
			},
			Fix: checks.Steps{restart},
		})
	}
}

// systemctl is `sudo systemctl ARGS...`, each argument one word: the unit
// name among them was checked by fixcode.UnitName first.
func systemctl(args ...string) fixcode.Cmd { return fixcode.Command("systemctl", args...).Sudo() }

// reload is what makes systemd read the unit again and restart it.
func reload(unit string) []fixcode.Cmd {
	return []fixcode.Cmd{systemctl("daemon-reload"), systemctl("restart", unit)}
}

// reportInvalidName reports a --service that no systemd unit can be named:
// systemd's unit_name_is_valid (src/basic/unit-name.c, v252) refuses it,
// so no unit file by that name is ever loaded, and this process was not
// started from one. The name is shown escaped (%q), and no command names
// it.
func reportInvalidName(p *checks.Pass, name string, proc *hostfacts.Process, err error) {
	ev := checks.Evidence{Source: "--service", Detail: fmt.Sprintf("%q", name)}
	if proc != nil {
		ev = checks.Evidence{Source: fmt.Sprintf("/proc/%d/cmdline", proc.PID), Detail: fmt.Sprintf("--service %q", name)}
	}
	p.Report(checks.Finding{
		Cause: fmt.Sprintf("The runner process's --service %q is %v: systemd loads no unit by that name, so no unit "+
			"starts this runner at boot or restarts it, and doctor names it in no command.", name, err),
		Evidence: []checks.Evidence{ev},
		Fix: checks.Text("Run the runner from its systemd unit: `gitlab-runner install` writes gitlab-runner.service (its --service " +
			"names the unit, without .service), and the unit's ExecStart= passes the same --service to `gitlab-runner run`."),
	})
}

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05Z") }
