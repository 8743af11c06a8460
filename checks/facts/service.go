package facts

import (
	"strings"

	"github.com/socialwebcomputer/doctor/checks"
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
	Name    string
	Unit    *systemd.Unit // nil when it could not be looked for
	Enabled bool
	Wants   []string // the wants/requires symlinks that enable it
	Err     error
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
// else gitlab-runner.service, searching systemd's unit path under the root.
var ServiceFact = &checks.Fact[*Service]{
	ID:       "service",
	Doc:      "the gitlab-runner systemd unit and its drop-ins, read as systemd reads them",
	Requires: []checks.Node{RunnerFact},
	Compute: func(p *checks.Pass) (*Service, error) {
		s := &Service{Name: unitName(RunnerFact.Get(p).Selected)}
		s.Unit, s.Err = systemd.Load(p.Env, s.Name)
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

func unitName(proc *Process) string {
	if proc != nil {
		if v, ok := FlagValue(proc.Cmdline, "--service"); ok && v != "" {
			if !strings.Contains(v, ".") {
				v += ".service"
			}
			return v
		}
	}
	return DefaultUnit
}
