package checks

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// The unit of diagnosis is the runner: one [[runners]] entry of the config
// the process runs, or that its service would run. Host facts (the process,
// its environ, the unit, config.toml) are computed once; a per-runner node
// runs once for each runner, with that runner's values.

// RunnerRef names a runner in findings and results: its position in
// config.toml (from 1, as "[[runners]] #2" reads) and its name.
type RunnerRef struct {
	Index int    `json:"index"`
	Name  string `json:"name"`
}

func (r RunnerRef) String() string {
	if r.Index == 0 {
		return r.Name
	}
	if r.Name != "" {
		return fmt.Sprintf("[[runners]] #%d %q", r.Index, r.Name)
	}
	return fmt.Sprintf("[[runners]] #%d", r.Index)
}

// Subject is one runner a per-runner node runs for.
type Subject struct {
	Ref      RunnerRef
	Executor string // normalised: one of Executors, or the runner's own word
}

// RunnerLister is the value of the fact a per-runner fact expands over
// (Fact.ForEach): the runners of the configuration, or why there are none.
type RunnerLister interface {
	Subjects() []Subject
	// NoRunners says why Subjects is empty ("needs config-decode" when the
	// file did not decode), so the skipped checks read as what they are.
	NoRunners() string
}

// The executors a check may declare, as config.toml's executor key spells
// them (gitlab-runner v19.3.0, common/config.go and executors/*/).
const (
	Kubernetes       = "kubernetes"
	Docker           = "docker"
	DockerAutoscaler = "docker-autoscaler"
	DockerMachine    = "docker+machine"
	Instance         = "instance"
	Shell            = "shell"
	Custom           = "custom"
)

// Executors lists them in the order `doctor checks` prints them.
var Executors = []string{Kubernetes, Docker, DockerAutoscaler, DockerMachine, Instance, Shell, Custom}

// NormalizeExecutor maps the executor key to the family a check declares:
// docker-windows is the Docker executor on Windows.
func NormalizeExecutor(e string) string {
	e = strings.TrimSpace(e)
	if e == "docker-windows" {
		return Docker
	}
	return e
}

// AppliesTo reports whether c runs for a runner of executor e. A check that
// declares no executors applies to every runner.
func (c *Check) AppliesTo(e string) bool {
	return len(c.Executors) == 0 || slices.Contains(c.Executors, NormalizeExecutor(e))
}

// ExecutorList is what `doctor checks` shows: "any", or the declared list.
func (c *Check) ExecutorList() string {
	if len(c.Executors) == 0 {
		return "any"
	}
	return strings.Join(c.Executors, ",")
}

// MatchRunner reports whether --runner NAME|INDEX selects s: a number is
// the position in config.toml, anything else the name.
func MatchRunner(sel string, s Subject) bool {
	if n, err := strconv.Atoi(sel); err == nil {
		return s.Ref.Index == n
	}
	return s.Ref.Name == sel
}
