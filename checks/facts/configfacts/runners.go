package configfacts

import (
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/runnerconfig"
)

// Runners are the [[runners]] of config.toml, as the engine expands
// per-runner nodes over them.
type Runners struct {
	subjects []checks.Subject
	none     string
}

func (s *Runners) Subjects() []checks.Subject { return s.subjects }
func (s *Runners) NoRunners() string          { return s.none }

// RunnersFact lists the runners of a config that decoded. Without one there
// is nothing to run per runner, and config-decode says why.
var RunnersFact = &checks.Fact[*Runners]{
	ID:       "runners",
	Doc:      "the [[runners]] of config.toml: each one's position, name and executor",
	Requires: []checks.Node{ConfigFact},
	Compute: func(p *checks.Pass) (*Runners, error) {
		c := ConfigFact.Get(p)
		s := &Runners{}
		if p.Env.KubeconfigPath != "" && (c.Path == "" || errors.Is(c.ReadErr, fs.ErrNotExist)) {
			// A kubeconfig checked before any runner points at it (the
			// guide's "check it before pointing a runner at it"): one
			// Kubernetes runner with the executor's defaults.
			s.subjects = []checks.Subject{{Ref: ImpliedRunner, Executor: checks.Kubernetes}}
			return s, nil
		}
		switch {
		case !c.Decoded():
			s.none = "needs config-decode"
		case len(c.Config.Runners) == 0:
			s.none = "config.toml has no [[runners]]"
		}
		if s.none != "" {
			return s, nil
		}
		for i, r := range c.Config.Runners {
			s.subjects = append(s.subjects, checks.Subject{
				Ref:      checks.RunnerRef{Index: i + 1, Name: r.Name},
				Executor: checks.NormalizeExecutor(r.Executor),
			})
		}
		return s, nil
	},
}

// ImpliedRunner stands for the runner when doctor is given --kubeconfig and
// no config.toml exists: index 0, as no [[runners]] entry has it.
var ImpliedRunner = checks.RunnerRef{Index: 0, Name: "--kubeconfig"}

// RunnerEntry is the runner a per-runner node diagnoses: its [[runners]]
// element and where in config.toml it stands.
type RunnerEntry struct {
	checks.Subject
	Pos    int // 0-based index into Config.Runners
	Runner *runnerconfig.Runner
	File   *ConfigFile
	// NamespaceOverride is -n/--namespace, when the operator overrides the runner's.
	NamespaceOverride string
}

// RunnerEntryFact is the per-runner root: every node that requires it runs once
// for each [[runners]] entry.
var RunnerEntryFact = &checks.Fact[*RunnerEntry]{
	ID:       "runner-entry",
	Doc:      "the [[runners]] entry a per-runner check diagnoses",
	ForEach:  RunnersFact,
	Requires: []checks.Node{ConfigFact},
	Compute: func(p *checks.Pass) (*RunnerEntry, error) {
		c, s := ConfigFact.Get(p), p.Runner()
		pos := s.Ref.Index - 1
		ns := p.Env.NamespaceOverride
		if s.Ref == ImpliedRunner {
			return &RunnerEntry{Subject: *s, Pos: -1, Runner: &runnerconfig.Runner{Executor: checks.Kubernetes}, File: c, NamespaceOverride: ns}, nil
		}
		if !c.Decoded() || pos < 0 || pos >= len(c.Config.Runners) {
			return nil, fmt.Errorf("%s is not in config.toml", s.Ref)
		}
		return &RunnerEntry{Subject: *s, Pos: pos, Runner: c.Config.Runners[pos], File: c, NamespaceOverride: ns}, nil
	},
}

// Label names the runner in a finding's text.
func (e *RunnerEntry) Label() string {
	if e.Pos < 0 {
		return "the runner of --kubeconfig (no config.toml)"
	}
	return RunnerLabel(e.Pos, e.Runner)
}

// At is the line of one of this runner's keys, not the first runner's.
func (e *RunnerEntry) At(parts ...string) (source, text string) {
	return e.File.AtRunner(e.Pos, parts...)
}

// Kube is [runners.kubernetes], empty when the table is absent.
func (e *RunnerEntry) Kube() *runnerconfig.Kubernetes {
	if e.Runner.Kubernetes == nil {
		return &runnerconfig.Kubernetes{}
	}
	return e.Runner.Kubernetes
}

// Namespace is [runners.kubernetes] namespace, "default" when unset, as the
// executor defaults it.
func (e *RunnerEntry) Namespace() string {
	if e.NamespaceOverride != "" {
		return e.NamespaceOverride
	}
	return NamespaceOf(e.Runner)
}

// NamespaceOf is a Kubernetes runner's namespace, "default" when unset.
func NamespaceOf(r *runnerconfig.Runner) string {
	if r.Kubernetes != nil && r.Kubernetes.Namespace != "" {
		return r.Kubernetes.Namespace
	}
	return "default"
}

// AtRunner names the line of a key of the pos-th [[runners]] element
// (0-based): ("/etc/gitlab-runner/config.toml:23", the line's text), or the
// file alone when that runner does not set the key.
func (c *ConfigFile) AtRunner(pos int, parts ...string) (source, text string) {
	key := append(toml.Key{"runners"}, parts...)
	prefix := "runners[" + strconv.Itoa(pos) + "]"
	for _, o := range runnerconfig.LocateAll(c.Data, key) {
		if o.Path == prefix || strings.HasPrefix(o.Path, prefix+".") {
			return fmt.Sprintf("%s:%d", c.Path, o.Line), c.LineText(o.Line)
		}
	}
	return c.Path, ""
}

// RunnerOfPath is the runner an Occurrence path such as
// runners[2].kubernetes.host belongs to, nil for a top-level key.
func RunnerOfPath(c *ConfigFile, path string) *checks.RunnerRef {
	rest, ok := strings.CutPrefix(path, "runners[")
	if !ok {
		return nil
	}
	n, _, ok := strings.Cut(rest, "]")
	if !ok {
		return nil
	}
	pos, err := strconv.Atoi(n)
	if err != nil || !c.Decoded() || pos < 0 || pos >= len(c.Config.Runners) {
		return nil
	}
	return &checks.RunnerRef{Index: pos + 1, Name: c.Config.Runners[pos].Name}
}

// RefOf is the RunnerRef of the pos-th [[runners]] element (0-based).
func RefOf(pos int, r *runnerconfig.Runner) *checks.RunnerRef {
	return &checks.RunnerRef{Index: pos + 1, Name: r.Name}
}
