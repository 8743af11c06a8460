package runnerservice

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts"
	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/internal/source/systemd"
)

// missingEnvironmentFiles reports, for a runner that is down, each
// EnvironmentFile= without "-" that systemd cannot read: systemd refuses to
// start the service before any process exists, so that file, not anything
// in the environment the unit would have given, is why the runner is down.
// It returns the lines it reported, so the generic problem is not
// reported twice.
func missingEnvironmentFiles(p *checks.Pass, svc *facts.Service) map[systemd.Source]bool {
	done := map[systemd.Source]bool{}
	for _, f := range svc.RefusedEnvironmentFiles() {
		done[f.Source] = true
		// src/core/execute.c exec_context_load_environment's caller ("Failed to load environment
		// files: %m") and src/core/service.c service_enter_start: "Failed to run 'start' task: %m"
		// (systemd 252, Debian 12's libsystemd-core-252.so), "Failed to spawn 'start' task: %m"
		// (the PidRef API, v255 on), then service_enter_signal(..., SERVICE_FAILURE_RESOURCES).
		why := errnoText(f.Err)
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
				checks.Sh("sudo systemctl daemon-reload\nsudo systemctl restart " + checks.Quote(svc.Name)),
			},
		})
	}
	return done
}

// errnoText is strerror(3) of the failure, as systemd's %m prints it.
func errnoText(err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "No such file or directory"
	case errors.Is(err, fs.ErrPermission):
		return "Permission denied"
	}
	s := hostio.FileCause(err).Error()
	if s != "" {
		s = strings.ToUpper(s[:1]) + s[1:]
	}
	return s
}
