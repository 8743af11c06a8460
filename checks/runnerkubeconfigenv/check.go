// Package runnerkubeconfigenv checks that the runner process itself has a
// kubeconfig to load.
package runnerkubeconfigenv

import (
	"fmt"
	"path"
	"strings"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts/configfacts"
	"github.com/socialwebcomputer/doctor/checks/facts/hostfacts"
	"github.com/socialwebcomputer/doctor/checks/facts/kubefacts"
	"github.com/socialwebcomputer/doctor/internal/fixcode"
	"github.com/socialwebcomputer/doctor/internal/source/systemd"
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
		Fix: append(checks.Text("For the unit gitlab-runner.service and the kubeconfig /etc/gitlab-runner/kubeconfig.yaml "+
			"(doctor run names this host's, and names the drop-in so that it applies after any of the unit's drop-ins that "+
			"resets Environment= or sets KUBECONFIG):"), dropIn("gitlab-runner.service", "/etc/gitlab-runner/kubeconfig.yaml", plan{name: defaultDropIn})...),
		Verify: checks.Steps{checks.TargetSay, checks.TargetVars,
			checks.Say("The KUBECONFIG of the unit's running process:"),
			// As root, by sudo cat: a redirection would be opened by the
			// operator's shell.
			checks.Sh(`sudo cat "/proc/$(systemctl show -p MainPID --value "$RUNNER_UNIT")/environ" | tr '\0' '\n' | grep ^KUBECONFIG=`),
			checks.Say("What systemd gives the unit's process when it starts it:"),
			checks.Sh(`systemctl show -p Environment "$RUNNER_UNIT"`)},
		Patterns: []string{
			// executors/kubernetes/kubernetes.go, v19.3.0: fmt.Errorf("getting Kubernetes config: %w", err);
			// client-go tools/clientcmd/validation.go, v0.36.3: ErrEmptyConfig = "no configuration has
			// been provided, try setting KUBERNETES_MASTER environment variable".
			"getting Kubernetes config: invalid configuration: no configuration has been provided",
		},
	},
	// Not runner-process: a stopped runner is diagnosed from its unit.
	Requires:  []checks.Node{hostfacts.RunAsFact, hostfacts.EnvironFact, hostfacts.ServiceFact, configfacts.RunnerEntryFact, kubefacts.InClusterFact, kubefacts.FixScopeFact},
	Executors: []string{checks.Kubernetes},
	Run:       run,
}

func run(p *checks.Pass) error {
	e := configfacts.RunnerEntryFact.Get(p)
	if e.Kube().Host != "" {
		return checks.Skip("host is set: the executor does not load a kubeconfig")
	}
	env, ra := hostfacts.EnvironFact.Get(p), hostfacts.RunAsFact.Get(p)
	if env.Err != nil {
		return fmt.Errorf("the runner's environment is unknown: %v%s", env.Err, env.AccessHint())
	}
	if v, ok := env.Lookup("KUBECONFIG"); ok && v != "" {
		return nil // kubeconfig-file examines what it names
	}
	if kubefacts.InClusterFact.Get(p).Config != nil {
		return nil // in-cluster config: the runner runs in a pod (cluster-override weighs this)
	}
	home, how := ra.KubeHome()
	if _, err := p.Env.Stat(home); err == nil {
		return nil // client-go falls back to it; kubeconfig-file examines it
	}
	svc, scope := hostfacts.ServiceFact.Get(p), kubefacts.FixScopeFact.Get(p)
	ev := []checks.Evidence{
		{Source: env.Source, Detail: "KUBECONFIG is not set in the environment of " + ra.Label()},
		{Source: home, Detail: "does not exist: " + how},
	}
	candidates := kubefacts.CandidateKubeconfigs(p.Env, path.Dir(e.File.Path), kubefacts.DefaultRootConfigDir)
	var fix checks.Steps
	want := path.Join(path.Dir(e.File.Path), "kubeconfig.yaml")
	if len(candidates) > 0 {
		want = candidates[0]
		ev = append(ev, checks.Evidence{Source: strings.Join(candidates, ", "), Detail: "kubeconfig files on this host the runner could be given"})
	}
	cause := fmt.Sprintf("%s uses the Kubernetes executor with no host, but the runner's environment has no KUBECONFIG and "+
		"no %s: every job fails with `getting Kubernetes config: invalid configuration: no "+
		"configuration has been provided, try setting KUBERNETES_MASTER environment variable`.", e.Label(), home)
	if vars, _ := svc.Unit.Environ(); svc.Found() && vars["KUBECONFIG"] == "" {
		// The unit's own files set it, and another of its lines undoes it.
		w, srcs := why(svc.Unit)
		cause += w
		for i, s := range srcs {
			detail := "sets KUBECONFIG"
			if i > 0 {
				detail = "undoes it"
			}
			ev = append(ev, checks.Evidence{Source: s.String(), Detail: detail})
		}
	}
	if len(candidates) == 0 {
		fix = checks.Text("No kubeconfig was found on this host: install the one for this cluster as " + want +
			" (kubeconfig-file says how), then give the runner's service its path.")
	}
	fix = append(fix, hostDropIn(scope, ra, svc, want, "")...)
	if v, ok := kubefacts.EnvironmentValue(e.Runner.Environment, "KUBECONFIG"); ok {
		src, _ := e.At("environment")
		ev = append(ev, checks.Evidence{Source: src, Detail: "environment = [...] sets KUBECONFIG=" + v})
		cause += " KUBECONFIG appears only in [[runners]] environment = [...], which reaches the job container, not the runner."
		fix = append(checks.Text("Move KUBECONFIG from environment = [...] of "+e.Label()+" ("+src+") to the runner's own environment."),
			hostDropIn(scope, ra, svc, v, "environment = [...] of "+e.Label())...)
	}
	f := checks.Finding{Cause: cause, Evidence: ev, Fix: fix}
	if svc := hostfacts.ServiceFact.Get(p); svc.Found() && !env.FromUnit {
		if vars, origin := svc.Unit.Environ(); vars["KUBECONFIG"] != "" {
			// The unit gives it; the process started before it did.
			f.CausedBy = "runner-service"
			f.Cause += fmt.Sprintf(" %s sets KUBECONFIG=%s (%s), but the running process predates that: it needs a restart.",
				svc.Name, vars["KUBECONFIG"], origin["KUBECONFIG"])
			f.Fix = checks.Steps{checks.Say("Restart the runner, so that it starts with its unit's environment:"), restart(svc.Name)}
		}
	}
	if ic := kubefacts.InClusterFact.Get(p); ic.Vars() && ic.Config == nil {
		// In a pod, in-cluster config would have served it: the token it
		// cannot read is the cause (cluster-override), not a missing
		// drop-in.
		f.CausedBy = "cluster-override"
		f.Cause += fmt.Sprintf(" The runner is in a pod (KUBERNETES_SERVICE_HOST=%s), where in-cluster config would serve it, but its service-account token cannot be read (cluster-override).", ic.HostPort)
	}
	if svc := hostfacts.ServiceFact.Get(p); env.FromUnit {
		if refused := svc.RefusedEnvironmentFiles(); len(refused) > 0 {
			// The unit's environment is what it would have: systemd starts nothing.
			f.CausedBy = "runner-service"
			f.Cause += fmt.Sprintf(" %s never starts, though: its EnvironmentFile=%s cannot be read (runner-service).", svc.Name, refused[0].Path)
		}
	}
	p.Report(f)
	return nil
}

// dropIn is the systemd fix: the service's own environment, not the job's.
// The value is data of the Environment= line: systemd's encoder quotes and
// C-escapes it (a newline in it is \n inside one quoted word, never a
// second directive), and refuses what systemd would not take. The drop-in
// is named and filled so that it wins (plan); the last step reads back
// what systemd now gives the runner.
func dropIn(unit, kubeconfig string, pl plan) checks.Steps {
	steps := checks.Text("Give the runner's service its KUBECONFIG with a systemd drop-in.")
	if pl.name != defaultDropIn && pl.stuck == nil {
		steps = checks.Text(fmt.Sprintf("Give the runner's service its KUBECONFIG with a systemd drop-in named %s: drop-ins apply in file-name "+
			"order, whatever their directory, and it must come after %s.", pl.name, sourcesText(pl.after)))
	}
	steps = append(steps, checks.DropIn(unit, pl.name, kubeconfigSection(kubeconfig, pl))...)
	if len(steps) > 0 && steps[len(steps)-1].Kind == checks.KindShell {
		steps = append(steps, checks.Say("Then read what systemd gives the runner now (KUBECONFIG must be among it):"),
			checks.Commands(fixcode.Command("systemctl", "show", "-p", "Environment", unit)))
	}
	return steps
}

func kubeconfigSection(kubeconfig string, pl plan) fixcode.Doc {
	return fixcode.UnitSection("Service", pl.entries(kubeconfig)...)
}

// sourcesText names the lines a drop-in must come after: "override.conf:2".
func sourcesText(srcs []systemd.Source) string {
	seen := map[string]bool{}
	var out []string
	for _, s := range srcs {
		if n := s.String(); !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return strings.Join(out, ", ")
}

// hostDropIn is dropIn for this host's unit and a kubeconfig it names
// (from, when it is a value of config.toml, says where). A relative
// KUBECONFIG in a unit means a file under whatever directory the process
// runs in, so it gets no drop-in; and the drop-in is written (tee, as
// root) only for a unit systemd has, in the runner's own drop-in
// directory (FixScope).
func hostDropIn(scope *kubefacts.FixScope, ra *hostfacts.RunAs, svc *hostfacts.Service, kubeconfig, from string) checks.Steps {
	unit := svc.Name
	if relativeList(kubeconfig) {
		where, of := "", unit
		if from != "" {
			where = " (" + from + ")"
		}
		if fixcode.UnitName(unit) != nil {
			of = "the runner's unit"
		}
		// client-go splits KUBECONFIG with filepath.SplitList and opens
		// each entry as it is: a relative one from the process's working
		// directory (tools/clientcmd/loader.go, NewDefaultClientConfigLoadingRules,
		// v0.37.2); the runner changes to --working-directory first.
		return checks.Text(fmt.Sprintf("The KUBECONFIG %q%s is not an absolute path (client-go splits it at ':' and opens each "+
			"entry as it is): in a systemd drop-in it would name a file relative to whatever directory the runner's process "+
			"runs in. doctor writes no drop-in for it: give the runner's service the kubeconfig's absolute path "+
			"(Environment=KUBECONFIG=/etc/gitlab-runner/kubeconfig.yaml, say) in a drop-in of %s.", kubeconfig, where, of))
	}
	if err := fixcode.UnitName(unit); err != nil {
		return append(checks.Text("Give the runner's service its KUBECONFIG with a systemd drop-in."), checks.Withheld(err))
	}
	pl := planDropIn(svc.Unit, kubeconfig)
	file := "/etc/systemd/system/" + unit + ".d/" + pl.name
	var first checks.Steps
	if pl.stuck != nil {
		first = checks.Text(fmt.Sprintf("%s resets Environment= or removes KUBECONFIG, and its name sorts after any drop-in name doctor "+
			"writes: remove that line (or the file) first, or no drop-in gives the runner its KUBECONFIG.", pl.stuck))
	}
	if err := scope.Path(file); err != nil {
		return append(first,
			checks.Say("Give the runner's service its KUBECONFIG with a systemd drop-in, "+file+":"),
			checks.Document(kubeconfigSection(kubeconfig, pl)),
			checks.Withheld(err),
		)
	}
	return append(first, dropIn(unit, kubeconfig, pl)...)
}

// relativeList says whether a KUBECONFIG names no file or a file by a
// relative path: its entries (':'-separated, empty ones skipped, as
// client-go's filepath.SplitList and its loader do) must all be absolute.
func relativeList(kubeconfig string) bool {
	n := 0
	for _, p := range strings.Split(kubeconfig, ":") {
		if p == "" {
			continue
		}
		if !path.IsAbs(p) {
			return true
		}
		n++
	}
	return n == 0
}

// restart is daemon-reload and a restart of the unit, whose name is one
// word of the command; a name systemd would refuse gets no command.
func restart(unit string) checks.Step {
	if err := fixcode.UnitName(unit); err != nil {
		return checks.Withheld(err)
	}
	return checks.Commands(fixcode.Command("systemctl", "daemon-reload").Sudo(), fixcode.Command("systemctl", "restart", unit).Sudo())
}
