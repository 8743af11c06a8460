// Package runnerkubeconfigenv checks that the runner process itself has a
// kubeconfig to load.
package runnerkubeconfigenv

import (
	"fmt"
	"path"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/configdecode"
	"github.com/socialwebcomputer/doctor/checks/facts"
	"github.com/socialwebcomputer/doctor/checks/runnerprocess"
)

var Check = &checks.Check{
	ID:       "runner-kubeconfig-env",
	Title:    "The runner process has KUBECONFIG in its own environment",
	Severity: checks.Critical,
	Doc: checks.Doc{
		Cause: "The Kubernetes executor has no kubeconfig setting. With host empty it tries in-cluster config, then " +
			"client-go's default loading rules: $KUBECONFIG of the gitlab-runner process, then ~/.kube/config of " +
			"its user. A KUBECONFIG exported in a login shell, or set in [[runners]] environment = [...] (which " +
			"reaches only the job container), never reaches a runner started by systemd.",
		// The executor loads its config in Prepare and returns a BuildError
		// with FailureReason ConfigurationError: no "(system failure)", no
		// "prepare environment:" (executors/kubernetes/kubernetes.go, v19.3.0).
		Symptom: "ERROR: Job failed: getting Kubernetes config: invalid configuration: no configuration has been provided, try setting KUBERNETES_MASTER environment variable",
		Fix:     dropIn("/etc/gitlab-runner/tenant-ci/kubeconfig.yaml"),
		Verify:  "sudo tr '\\0' '\\n' < /proc/$(pgrep -f 'gitlab-runner.* run' | head -1)/environ | grep ^KUBECONFIG=",
	},
	Requires:  []checks.Node{runnerprocess.Check, configdecode.Check, facts.Runner, facts.RunnerEnviron, facts.ThisRunner},
	Executors: []string{checks.Kubernetes},
	Run:       run,
}

func run(p *checks.Pass) error {
	e := facts.ThisRunner.Get(p)
	if e.Kube().Host != "" {
		return checks.Skip("host is set: the executor does not load a kubeconfig")
	}
	env := facts.RunnerEnviron.Get(p)
	if env.Err != nil {
		return fmt.Errorf("cannot read %s (%v)%s", env.Source, env.Err, facts.AccessHint(env.Err))
	}
	if v, ok := env.Lookup("KUBECONFIG"); ok && v != "" {
		return nil // kubeconfig-file examines what it names
	}
	if _, ok := env.InCluster(); ok {
		return nil // in-cluster config: the runner runs in a pod (cluster-override weighs this)
	}
	proc := facts.Runner.Get(p).Selected
	if proc.Home != "" {
		home := path.Join(proc.Home, ".kube/config")
		if _, err := p.Env.Stat(home); err == nil {
			return nil // client-go falls back to it; kubeconfig-file examines it
		}
	}
	r := e.Runner
	ev := []checks.Evidence{
		{Source: env.Source, Detail: fmt.Sprintf("no KUBECONFIG among %d variables of %s", len(env.Vars), proc.Label())},
		{Source: "~/.kube/config", Detail: homeDetail(proc)},
	}
	fix := dropIn("/etc/gitlab-runner/tenant-ci/kubeconfig.yaml")
	cause := fmt.Sprintf("%s uses the Kubernetes executor with no host, but the runner process has no KUBECONFIG and "+
		"its user has no ~/.kube/config: every job fails with `getting Kubernetes config: invalid configuration: no "+
		"configuration has been provided, try setting KUBERNETES_MASTER environment variable`.", e.Label())
	if v, ok := facts.EnvironmentValue(r.Environment, "KUBECONFIG"); ok {
		src, line := e.At("environment")
		ev = append(ev, checks.Evidence{Source: src, Detail: line})
		cause += " KUBECONFIG appears only in [[runners]] environment = [...], which reaches the job container, not the runner."
		fix = "Move KUBECONFIG from environment = [...] to the runner's own environment. " + dropIn(v)
	}
	p.Report(checks.Finding{Cause: cause, Evidence: ev, Fix: fix})
	return nil
}

func homeDetail(proc *facts.Process) string {
	if proc.Home == "" {
		return fmt.Sprintf("uid %d has no /etc/passwd entry, so client-go has no home directory to look in", proc.UID)
	}
	return path.Join(proc.Home, ".kube/config") + " does not exist"
}

// dropIn is the systemd fix: the service's own environment, not the job's.
func dropIn(kubeconfig string) string {
	return "Give the service its environment with a systemd drop-in: `sudo systemctl edit gitlab-runner`, add\n" +
		"[Service]\nEnvironment=KUBECONFIG=" + kubeconfig + "\n" +
		"then `sudo systemctl restart gitlab-runner`."
}
