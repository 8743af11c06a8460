package runnerservice

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts/hostfacts"
	"github.com/socialwebcomputer/doctor/checks/facts/kubefacts"
	"github.com/socialwebcomputer/doctor/internal/fixcode"
	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/internal/source/systemd"
)

// missingEnvironmentFiles reports, for a runner that is down, each
// EnvironmentFile= without "-" that systemd cannot read: systemd refuses to
// start the service before any process exists, so that file, not anything
// in the environment the unit would have given, is why the runner is down.
// It returns the lines it reported, so the generic problem is not
// reported twice.
func missingEnvironmentFiles(p *checks.Pass, svc *hostfacts.Service) map[systemd.Source]bool {
	done := map[systemd.Source]bool{}
	for _, f := range svc.RefusedEnvironmentFiles() {
		done[f.Source] = true
		// src/core/execute.c exec_context_load_environment's caller ("Failed to load environment
		// files: %m") and src/core/service.c service_enter_start: "Failed to run 'start' task: %m"
		// (systemd 252, Debian 12's libsystemd-core-252.so), "Failed to spawn 'start' task: %m"
		// (the PidRef API, v255 on), then service_enter_signal(..., SERVICE_FAILURE_RESOURCES).
		why := systemd.Strerror(f.Err)
		p.Report(checks.Finding{
			Severity: checks.Critical,
			Cause: fmt.Sprintf("systemd does not start %s: its EnvironmentFile=%s (no \"-\" before the path) cannot be read (%v), so no runner "+
				"process is ever started. The journal says \"%s: Failed to load environment files: %s\", then \"Failed to run 'start' task: %s\" "+
				"(systemd 252; \"Failed to spawn 'start' task\" from v255) and \"Failed with result 'resources'\"; with Restart=always "+
				"systemd retries every RestartSec= and the unit stays activating (auto-restart), never running.",
				svc.Name, f.Path, hostio.FileCause(f.Err), svc.Name, why, why),
			Evidence: []checks.Evidence{
				{Source: f.Source.String(), Detail: "EnvironmentFile=" + f.Path},
				{Source: f.Path, Detail: hostio.FileCause(f.Err).Error()},
			},
			Fix: checks.Steps{
				checks.Say(fmt.Sprintf("Create %s (or write EnvironmentFile=-%s in the unit if it is optional), then restart the runner:", f.Path, f.Path)),
				checks.Commands(reload(svc.Name)...),
			},
		})
	}
	return done
}

// skippedStart reports, for a runner that is down, the
// ConditionFileIsExecutable= that does not hold: systemd skips the start
// (not a failure: result success, no restart even with Restart=always,
// service_shall_restart(), src/core/service.c), so nothing runs and
// nothing retries. It says whether it reported: the rest of the unit is
// never reached.
func skippedStart(p *checks.Pass, svc *hostfacts.Service, scope *kubefacts.FixScope) (bool, error) {
	u := svc.Unit
	c, st, err := u.UnmetCondition(p.Env)
	if c == nil {
		return false, nil
	}
	if errors.Is(err, fs.ErrPermission) {
		return false, fmt.Errorf("cannot tell whether %s holds: doctor may not stat %s (%v); systemd tests it as root", c, c.Path, err)
	}
	state := "is not an executable regular file (" + modeText(st) + ")"
	if err != nil {
		state = "cannot be found: " + systemd.Strerror(err)
	}
	if c.Negate {
		state = "is an executable file, and the condition is negated"
	}
	// systemd 252 (Debian 12's libsystemd-core-252.so, src/core/unit.c):
	// "%s was skipped because of an unmet condition check (%s=%s%s)."; and
	// systemctl status (libsystemd-shared-252.so, src/systemctl/systemctl-show.c):
	// "Condition: start condition failed at %s; %s" then "%s=%s%s was not met".
	p.Report(checks.Finding{
		Severity: checks.Critical,
		Cause: fmt.Sprintf("systemd skips %s: its %s does not hold, as %s %s, so no runner process is ever started; a skipped "+
			"start is no failure, so Restart= never retries it. The journal says \"%s was skipped because of an unmet condition check (%s).\" "+
			"and systemctl status says \"Condition: start condition failed\" and \"%s was not met\".",
			svc.Name, c, c.Path, state, statusName(u, svc.Name), c, c),
		Evidence: []checks.Evidence{
			{Source: c.Source.String(), Detail: c.String()},
			{Source: c.Path, Detail: fileDetail(st, err)},
		},
		Fix: installBinary(scope, c.Path, err, systemctl("start", svc.Name)),
	})
	return true, nil
}

// unexecutableStart reports, for a runner that is down, an ExecStart= whose
// binary systemd cannot execute: the forked child fails before execve, the
// main process exits 203/EXEC, and with Restart= the unit retries without
// end.
func unexecutableStart(p *checks.Pass, svc *hostfacts.Service, scope *kubefacts.FixScope) error {
	u := svc.Unit
	if u.ExecStartPath == "" || u.Masked {
		return nil
	}
	st, err := systemd.ExecutableError(p.Env, u.ExecStartPath)
	if err == nil {
		return nil
	}
	if errors.Is(err, fs.ErrPermission) && !errors.Is(err, systemd.ErrNoExecuteBit) {
		return fmt.Errorf("cannot tell whether systemd can execute %s: doctor may not stat it (%v)", u.ExecStartPath, err)
	}
	why := systemd.Strerror(err)
	restart := "the unit stays failed"
	if u.Restart != "" && u.Restart != "no" {
		restart = fmt.Sprintf("with Restart=%s systemd retries every RestartSec= and the unit never runs", u.Restart)
	}
	// systemd 252 (Debian 12's libsystemd-core-252.so, src/core/execute.c exec_child):
	// "%s: Failed to locate executable %s: %m", "%s: Failed at step %s spawning %s: %m" (step EXEC);
	// src/core/service.c: "Main process exited, code=%s, status=%i/%s", "Failed with result '%s'.";
	// check_x_access(), src/basic/path-util.c, decides the errno.
	p.Report(checks.Finding{
		Severity: checks.Critical,
		Cause: fmt.Sprintf("systemd cannot start %s: its ExecStart= binary %s %s, so the runner process never starts. The journal says "+
			"\"%s: Failed to locate executable %s: %s\", \"%s: Failed at step EXEC spawning %s: %s\", then "+
			"\"Main process exited, code=exited, status=203/EXEC\" and \"Failed with result 'exit-code'.\"; %s.",
			svc.Name, u.ExecStartPath, execState(st, err), svc.Name, u.ExecStartPath, why, svc.Name, u.ExecStartPath, why, restart),
		Evidence: []checks.Evidence{
			{Source: u.ExecStartSource.String(), Detail: "ExecStart=" + strings.Join(u.ExecStart, " ")},
			{Source: u.ExecStartPath, Detail: fileDetail(st, err)},
		},
		Fix: installBinary(scope, u.ExecStartPath, err, reload(svc.Name)...),
	})
	return nil
}

func execState(st fs.FileInfo, err error) string {
	switch {
	case st == nil:
		return "does not exist"
	case errors.Is(err, systemd.ErrNoExecuteBit):
		return "has no execute bit (" + modeText(st) + ")"
	}
	return "is not a regular file (" + modeText(st) + ")"
}

func fileDetail(st fs.FileInfo, err error) string {
	if st == nil {
		return hostio.FileCause(err).Error()
	}
	return modeText(st)
}

func modeText(st fs.FileInfo) string {
	if st == nil {
		return "missing"
	}
	if st.IsDir() {
		return fmt.Sprintf("a directory, mode %04o", st.Mode().Perm())
	}
	if !st.Mode().IsRegular() {
		return fmt.Sprintf("%s, mode %04o", st.Mode().Type(), st.Mode().Perm())
	}
	return fmt.Sprintf("mode %04o", st.Mode().Perm())
}

// statusName is how systemd names the unit in a status line: "name -
// description" (StatusUnitFormat=combined), the name alone without one.
func statusName(u *systemd.Unit, name string) string {
	if u.Description == "" {
		return name
	}
	return name + " - " + u.Description
}

// installBinary is the fix of a runner binary systemd cannot execute: an
// execute bit where the file is there, else the binary itself (the
// package installs it where the unit names it), then start. The chmod
// runs as root on a path a unit names: only the unit's own gitlab-runner
// binary (FixScope.Binary) or a path of the runner's own gets one.
func installBinary(scope *kubefacts.FixScope, path string, err error, start ...fixcode.Cmd) checks.Steps {
	if errors.Is(err, fs.ErrNotExist) {
		return checks.Steps{
			checks.Say("Install the gitlab-runner binary at " + path + " (the gitlab-runner package puts it at /usr/bin/gitlab-runner), or point ExecStart= at where it is, then start the unit:"),
			checks.Commands(start...),
		}
	}
	if err := scope.Path(path); err != nil {
		return checks.Steps{
			checks.Say("Make " + path + " executable (mode 0755) if it is the gitlab-runner binary the unit should run:"),
			checks.Withheld(err),
			checks.Say("Then start the unit:"),
			checks.Commands(start...),
		}
	}
	return checks.Steps{checks.Commands(append([]fixcode.Cmd{fixcode.Command("chmod", "0755", path).Sudo()}, start...)...)}
}
