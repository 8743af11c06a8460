// Package runnerprovenance checks that the runner process doctor
// diagnoses is one someone installed.
package runnerprovenance

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts/hostfacts"
	"github.com/socialwebcomputer/doctor/checks/facts/kubefacts"
	"github.com/socialwebcomputer/doctor/internal/fixcode"
)

var Check = &checks.Check{
	ID:       "runner-provenance",
	Title:    "The runner process is one someone installed",
	Severity: checks.Error,
	Doc: checks.Doc{
		Cause: "Any local user can start a process named gitlab-runner and point it at root's files as its " +
			"config.toml and kubeconfig. doctor diagnoses the first `gitlab-runner run` process it finds, and its " +
			"fixes run as root: so it vouches for a process before any fix acts for it. A runner someone installed " +
			"runs as root, as the User= of its systemd unit, as its container's main process, or as a user with a " +
			"config.toml that user owns (a user's own runner, whose fixes stay in that user's home). Any other is " +
			"a runner nobody installed: its findings are reported, and no fix chowns, chmods, installs or adds a " +
			"user to a group for it.",
		Symptom: "doctor's findings about this host name files the runner has no business reading (/etc/shadow as config.toml), " +
			"and their fixes say \"doctor prints no command here: doctor acts for no runner it cannot vouch for\"",
		Fix: checks.Steps{
			checks.Say("Find out who started the process and from where (its user, its parent, its unit or session):"),
			checks.Sh(`PID=4242
ps -o user,pid,ppid,lstart,args -p "$PID"
systemctl status --no-pager "$PID"`),
			checks.Say("Stop it if no one meant to run it; a runner someone meant to run is installed as a service (`gitlab-runner install`) or runs as its container's main process."),
		},
		Verify: checks.Steps{checks.Sh("pgrep -a gitlab-runner")},
		Patterns: []string{
			// commands/user_mode_warning.go, v19.3.0 (userModeWarning, which
			// `run` calls from commands/multi.go): when os.Getuid() != 0,
			// logrus.Warningln("Use sudo for system-mode:") and
			// logrus.Warningln("$ sudo gitlab-runner..."): a runner that is
			// not root's, whose provenance this check judges. (Its
			// "Running in user-mode." is other programs' words too.)
			"Use sudo for system-mode:",
			"$ sudo gitlab-runner...",
		},
	},
	Requires: []checks.Node{hostfacts.RunnerFact, hostfacts.ServiceFact, kubefacts.FixScopeFact},
	// What doctor found about the files such a process names is about that
	// process: its config.toml that does not decode, files it cannot read.
	Explains: []string{"config-decode", "config-file", "kubeconfig-file", "runner-kubeconfig-env"},
	Run:      run,
}

func run(p *checks.Pass) error {
	r, svc, scope := hostfacts.RunnerFact.Get(p), hostfacts.ServiceFact.Get(p), kubefacts.FixScopeFact.Get(p)
	proc := r.Selected
	switch {
	case proc == nil:
		return checks.Skip("no runner process runs")
	case !proc.UIDKnown:
		// Refused too, but an unknown, not a finding: who it is is unknown.
		return fmt.Errorf("%s: %s, so whether someone installed it is unknown", proc.Label(), proc.UIDProblem())
	case scope.Refused == "":
		return nil
	}
	uninstalled(p, proc, svc, scope.Refused)
	return nil
}

// uninstalled reports a runner process nobody installed: a process named
// gitlab-runner that runs as neither root nor the user its unit names, and
// is not the main process of a container (kubefacts.FixScope.Refused). Any
// local user can start one, naming root's files as its config and
// kubeconfig; doctor diagnoses it, but no fix acts for it. What it
// prints are commands that only read: who started it, and from where.
func uninstalled(p *checks.Pass, proc *hostfacts.Process, svc *hostfacts.Service, refused string) {
	pid := strconv.Itoa(proc.PID)
	ev := []checks.Evidence{{Source: "/proc/" + pid + "/status", Detail: uidDetail(proc)}}
	if proc.CmdlineErr == nil {
		ev = append(ev, checks.Evidence{Source: "/proc/" + pid + "/cmdline", Detail: strings.Join(proc.Cmdline, " ")})
	}
	switch {
	case svc == nil || svc.Unit == nil:
	case svc.Found():
		user := "no User= (runs as root)"
		if svc.Unit.User != "" {
			user = "User=" + svc.Unit.User
		}
		ev = append(ev, checks.Evidence{Source: svc.Unit.Path, Detail: user})
	default:
		ev = append(ev, checks.Evidence{Source: svc.Name, Detail: "no such unit: no service runs gitlab-runner as this user"})
	}
	p.Report(checks.Finding{
		Cause: fmt.Sprintf("This host runs a gitlab-runner process doctor cannot vouch for: %s. Any local user can start a "+
			"process with that name and point it at root's files as its config and kubeconfig; doctor diagnoses it, but "+
			"no fix acts for it (no chown, chmod, install or usermod).", refused),
		Evidence: ev,
		Fix:      uninstalledFix(proc.PID),
	})
}

// uninstalledFix is what to do about a runner nobody installed: find out
// who started it, with commands that only read, then stop it or install
// it. No command acts for it. `systemctl status PID` shows the unit (or
// session scope) the process belongs to (systemctl(1), systemd v252:
// "status [PATTERN…|PID…]", "If a PID is passed, show information about
// the unit the process belongs to"); ps -o with lstart names when it
// started and ppid who started it (procps-ng ps(1)).
func uninstalledFix(pid int) checks.Steps {
	return checks.Steps{
		checks.Say("No command here acts for it. Find out who started it and from where (its user, its parent, its unit or session):"),
		checks.Commands(
			fixcode.Command("ps", "-o", "user,pid,ppid,lstart,args", "-p", strconv.Itoa(pid)),
			fixcode.Command("systemctl", "status", "--no-pager", strconv.Itoa(pid))),
		checks.Say("Stop it if no one meant to run it. A runner someone meant to run is installed as a service (root's, " +
			"or one whose User= is its user) or run as its container's main process; run doctor again then."),
	}
}

func uidDetail(proc *hostfacts.Process) string {
	if !proc.UIDKnown {
		return proc.UIDProblem()
	}
	if proc.User != "" {
		return fmt.Sprintf("Uid %d (%s)", proc.UID, proc.User)
	}
	return fmt.Sprintf("Uid %d (no /etc/passwd entry)", proc.UID)
}
