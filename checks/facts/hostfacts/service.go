package hostfacts

import (
	"path"
	"strconv"
	"strings"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/internal/fixcode"
	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/internal/redact"
	"github.com/socialwebcomputer/doctor/internal/source/systemd"
)

// DefaultUnit is the unit `gitlab-runner install` writes: --service
// defaults to gitlab-runner (commands/service.go, gitlab-runner v19.3.0).
const DefaultUnit = "gitlab-runner.service"

// Service is the runner's systemd unit as systemd would load it: what the
// service runs when no process does, and what a running process may have
// started from.
type Service struct {
	Name string
	// NameFrom says how Name was chosen when it is not the default: the
	// process's cgroup or --service, or the template's enabled instance.
	NameFrom string
	Unit     *systemd.Unit // nil when it could not be looked for
	Enabled  bool
	Wants    []string // the wants/requires symlinks that enable it
	Err      error
	// AskErr says why the running manager could not be asked (no
	// systemctl, systemd not PID 1, no answer in time): the unit is then
	// the files' model alone. nil when it answered, or when there was no
	// manager to ask (--root, a bundle made without its answer).
	AskErr error
}

// Systemd is the running manager's answer for the unit, nil when none.
func (s *Service) Systemd() *systemd.Show {
	if s.Unit == nil {
		return nil
	}
	return s.Unit.Systemd
}

// NotLoaded says the unit's file exists but the running manager does not
// know the unit: it was written after the last `systemctl daemon-reload`.
func (s *Service) NotLoaded() bool {
	sd := s.Systemd()
	return s.Found() && sd != nil && sd.LoadState == "not-found"
}

// Found reports whether a unit file exists.
func (s *Service) Found() bool { return s.Unit != nil && s.Unit.Found() }

// RefusedEnvironmentFiles are the EnvironmentFile= settings without "-"
// that cannot be read: with any, systemd refuses to start the service
// (exec_context_load_environment, src/core/execute.c), so the environment
// the unit describes is never any process's.
func (s *Service) RefusedEnvironmentFiles() []systemd.EnvFile {
	if !s.Found() {
		return nil
	}
	var out []systemd.EnvFile
	for _, f := range s.Unit.EnvironmentFiles {
		if !f.Optional && f.Err != nil {
			out = append(out, f)
		}
	}
	return out
}

// ServiceFact reads the unit named by the running process's --service flag,
// else gitlab-runner.service, searching systemd's unit path under the root;
// on a live host it asks the running manager too (`systemctl show`), whose
// answer wins where the two differ (systemd.Unit.UseSystemd).
var ServiceFact = &checks.Fact[*Service]{
	ID:       "service",
	Doc:      "the gitlab-runner systemd unit and its drop-ins, as the running systemd loaded them (systemctl show) or, without one, read as systemd reads them",
	Requires: []checks.Node{RunnerFact},
	Compute: func(p *checks.Pass) (*Service, error) {
		s := &Service{}
		proc := RunnerFact.Get(p).Selected
		s.Name, s.NameFrom = unitName(p.Env, proc)
		s.Unit, s.Err = systemd.Load(p.Env, s.Name)
		if s.Err != nil {
			return s, nil
		}
		if proc == nil && s.Name == DefaultUnit && !s.Found() {
			if inst := systemd.EnabledInstances(p.Env, "gitlab-runner@.service"); len(inst) > 0 {
				s.Name, s.NameFrom = inst[0], "the enabled instance of gitlab-runner@.service"
				if s.Unit, s.Err = systemd.Load(p.Env, s.Name); s.Err != nil {
					return s, nil
				}
			}
		}
		show, err := systemd.Ask(p.Context, p.Env, s.Name)
		if err != nil {
			s.AskErr = err
			p.Env.Logf(2, "systemd: %s: the files' model alone: %v", s.Name, err)
		}
		s.Unit.UseSystemd(p.Env, show)
		if s.Unit != nil && s.Unit.ExecStart != nil {
			// ExecStart= is a runner command line: its settings' values
			// become stand-ins where it is read, as the process's do.
			s.Unit.ExecStart = redact.Argv(s.Unit.ExecStart, redact.StandIn)
		}
		if s.Found() {
			s.Enabled, s.Wants = systemd.Enabled(p.Env, s.Name)
		}
		return s, nil
	},
}

// unitName is the unit the runner runs from: the one whose cgroup the
// running process is in (systemd puts a service's processes in a cgroup
// named after the unit: /system.slice/.../NAME.service, cgroups(7) and
// systemd.service(5)) when that is a runner's unit, else the process's
// --service (gitlab-runner's install writes it into ExecStart=), else
// gitlab-runner.service; where
// no file has that name and no process runs, the first enabled instance
// of the template gitlab-runner@.service (`systemctl enable
// gitlab-runner@NAME`, a .wants/ link named for the instance).
func unitName(env *hostio.Env, proc *Process) (name, how string) {
	if proc != nil {
		flag, hasFlag := FlagValue(proc.Cmdline, "--service")
		if hasFlag && flag != "" && !strings.Contains(flag, ".") {
			flag += ".service"
		}
		// The cgroup's unit is the runner's when it is the one --service
		// names, or, without --service, a gitlab-runner unit: a runner
		// started by hand from some other service's shell, or by a
		// supervisor, is in that service's cgroup, which is not the
		// runner's unit.
		if u := cgroupUnit(env, proc.PID); u != "" && (u == flag || !hasFlag && strings.HasPrefix(u, "gitlab-runner")) {
			return u, "the runner process's cgroup (/proc/" + strconv.Itoa(proc.PID) + "/cgroup)"
		}
		if hasFlag && flag != "" {
			return flag, "the runner process's --service"
		}
	}
	return DefaultUnit, ""
}

// cgroupUnit is the service unit a process's cgroup names: the last
// component of its cgroup v2 path (the "0::" line), or of the v1
// name=systemd hierarchy's, when it is a valid service name.
func cgroupUnit(env *hostio.Env, pid int) string {
	b, err := env.ReadProc("/proc/" + strconv.Itoa(pid) + "/cgroup")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 || !(parts[0] == "0" && parts[1] == "" || parts[1] == "name=systemd") {
			continue
		}
		last := path.Base(parts[2])
		if strings.HasSuffix(last, ".service") && fixcode.UnitName(last) == nil {
			return last
		}
	}
	return ""
}
