// Package fleetingplugin checks that the fleeting plugin a runner names is
// where the runner looks for it, and that the runner's user may execute it.
package fleetingplugin

import (
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts"
)

var Check = &checks.Check{
	ID:       "fleeting-plugin",
	Title:    "The fleeting plugin is where the runner looks, and the runner may execute it",
	Severity: checks.Error,
	Doc: checks.Doc{
		Cause: "The runner starts [runners.autoscaler] plugin itself, resolving it with fleeting-artifact's LookPath: " +
			"the value as a path; a plain fleeting-plugin-<name> on the process's $PATH (an entry it may not execute " +
			"is passed over); otherwise the version `gitlab-runner fleeting install` put under $FLEETING_PLUGIN_PATH or " +
			"$HOME/.config/fleeting/plugins of the runner's own user. A plugin installed for another user, on another " +
			"PATH, or without the execute bit for the runner's uid and groups leaves every job without an instance.",
		Symptom: "Failed to process runner  builds=0 error=failed to update executor: initializing taskscaler: running autoscaler plugin: " +
			"loading fleeting plugin: plugin not found: lstat /home/gitlab-runner/.config/fleeting/plugins/registry.gitlab.com/gitlab-org/fleeting/plugins/fleeting-plugin-dvp: no such file or directory",
		Fix: checks.Target(
			checks.Say("Put the plugin in a directory of the runner's PATH with mode 0755 (the Deckhouse runner image carries fleeting-plugin-dvp in /usr/local/bin), "+
				"or install the plugins config.toml names as the runner's user:"),
			checks.Sh(`sudo -u "$RUNNER_USER" -H gitlab-runner fleeting --config "$RUNNER_CONFIG" install`)),
		Verify: checks.Target(checks.Say("The plugins the runner's user has:"),
			checks.Sh(`sudo -u "$RUNNER_USER" -H gitlab-runner fleeting --config "$RUNNER_CONFIG" list`)),
		Patterns: []string{
			// executors/internal/autoscaler/provider.go, v19.3.0: "loading fleeting
			// plugin: %w" around installer.ErrPluginNotFound ("plugin not found",
			// fleeting-artifact pkg/installer/installer.go).
			"loading fleeting plugin: plugin not found: *",
			// provider.go, v19.3.0: "running autoscaler plugin: %w" (the plugin
			// found but not started).
			"initializing taskscaler: running autoscaler plugin: *",
			// provider.go, v19.3.0: init without [runners.autoscaler].
			"executor requires autoscaler config",
		},
	},
	Requires: []checks.Node{facts.RunnerEntryFact, facts.RunAsFact, facts.EnvironFact},
	// The docker-autoscaler executor is the same autoscaler provider around
	// the Docker executor (executors/docker/autoscaler/autoscaler.go,
	// v19.3.0: autoscaler.New(dockerProvider, …)), so it starts the plugin
	// the same way.
	Executors: []string{checks.Instance, checks.DockerAutoscaler},
	Run:       run,
}

func run(p *checks.Pass) error {
	r := facts.RunnerEntryFact.Get(p)
	a := r.Runner.Autoscaler
	if a == nil {
		src, _ := r.At("executor")
		p.Report(checks.Finding{
			Cause: fmt.Sprintf("%s: executor %q has no [runners.autoscaler]: every job fails with `initializing taskscaler: executor requires autoscaler config`.",
				r.Label(), r.Runner.Executor),
			Evidence: []checks.Evidence{{Source: src, Detail: "no [runners.autoscaler] table in this [[runners]]"}},
			Fix:      checks.Text("Add [runners.autoscaler] with plugin, max_instances and connector_config to this runner."),
		})
		return nil
	}
	if strings.TrimSpace(a.Plugin) == "" {
		src, _ := r.At("autoscaler")
		p.Report(checks.Finding{
			Cause:    fmt.Sprintf("%s: [runners.autoscaler] names no plugin: the runner has nothing to start for instances.", r.Label()),
			Evidence: []checks.Evidence{{Source: src, Detail: "plugin not set"}},
			Fix:      checks.Text("Set plugin in [runners.autoscaler] (for Deckhouse Virtualization Platform: plugin = \"fleeting-plugin-dvp\")."),
		})
		return nil
	}
	e, ra := facts.EnvironFact.Get(p), facts.RunAsFact.Get(p)
	if e.Err != nil {
		return fmt.Errorf("cannot tell where %s looks for %s: its environment is unknown: %w", ra.Label(), a.Plugin, e.Err)
	}
	res := lookPath(p.Env, ra, e, a.Plugin)
	src, line := r.At("autoscaler", "plugin")
	ev := []checks.Evidence{{Source: src, Detail: strings.TrimSpace(line)}}
	for _, pr := range res.probes {
		ev = append(ev, checks.Evidence{Source: pr.path, Detail: pr.what})
	}
	if res.runnerEr == "" {
		res.runnerEr = "loading fleeting plugin: plugin not found"
	}
	switch {
	case res.found == "" && res.passedOver != "":
		p.Report(checks.Finding{
			Cause: fmt.Sprintf("%s: the fleeting plugin %s is on the runner's PATH, but its user (%s) may not execute it (blocked at %s), so exec.LookPath passes over it and the runner finds none: every job fails with `%s`.",
				r.Label(), res.passedOver, ra.Label(), facts.BlockerPaths(res.blocked), res.runnerEr),
			Evidence: appendBlockers(ev, res.blocked),
			Fix:      chmodFix(res.blocked),
		})
	case res.found == "":
		p.Report(checks.Finding{
			Cause: fmt.Sprintf("%s: the fleeting plugin %q is nowhere %s looks for it (%s): every job fails with `%s`.",
				r.Label(), a.Plugin, ra.Label(), searched(ra, a.Plugin, res), res.runnerEr),
			Evidence: ev,
			Fix:      installFix(a.Plugin, r.File.Path, e, ra, res),
		})
	case len(res.blocked) > 0:
		p.Report(checks.Finding{
			Cause: fmt.Sprintf("%s: the fleeting plugin %s is there (%s), but the runner's user (%s) may not execute it (blocked at %s): the runner cannot start it, and every job waits for an instance that never comes.",
				r.Label(), res.found, res.how, ra.Label(), facts.BlockerPaths(res.blocked)),
			Evidence: appendBlockers(ev, res.blocked),
			Fix:      chmodFix(res.blocked),
		})
	}
	if !ra.UIDKnown {
		return fmt.Errorf("cannot tell whether %s may execute %s: %s", ra.Label(), res.found, ra.UIDProblem())
	}
	return nil
}

// searched names the places in the runner's order: the value as a path,
// the $PATH entries, the install directory.
func searched(ra *facts.RunAs, name string, res *resolution) string {
	parts := []string{"not " + res.probes[0].path + " (the value as a path from " + ra.Cwd + ")"}
	if len(res.pathDirs) > 0 {
		parts = append(parts, "not in any $PATH entry ("+strings.Join(res.pathDirs, ", ")+")")
	} else if strings.HasPrefix(name, pathPrefix) && !strings.ContainsAny(name, "/:") {
		parts = append(parts, "no $PATH to search")
	}
	if res.pluginDir != "" {
		parts = append(parts, "not under "+res.pluginDir+" (where `gitlab-runner fleeting install` puts it for this user)")
	}
	return strings.Join(parts, ", ")
}

// installFix puts the plugin where this runner looks: a fleeting-plugin-
// binary into the first absolute directory of its PATH, an OCI reference
// through `gitlab-runner fleeting install` as its own user.
func installFix(name, config string, e *facts.Environ, ra *facts.RunAs, res *resolution) checks.Steps {
	if !res.installed || strings.HasPrefix(name, pathPrefix) && !strings.ContainsAny(name, "/:") {
		pathVar, _ := e.Lookup("PATH")
		dir := ""
		for _, d := range splitList(pathVar) {
			if path.IsAbs(d) {
				dir = d
				if d == "/usr/local/bin" {
					break
				}
			}
		}
		if dir == "" {
			return checks.Text(fmt.Sprintf("Give the runner a PATH (its environment has none that is absolute) and install %s there with mode 0755.", name))
		}
		fix := fmt.Sprintf("sudo install -m 0755 ./%s %s", checks.Quote(name), checks.Quote(dir+"/"+name))
		if e.FromUnit || ra.Unit != nil && ra.Unit.Found() {
			fix += "\nsudo systemctl restart " + checks.Quote(ra.Unit.Name)
		}
		return checks.Steps{
			checks.Say(fmt.Sprintf("Install the %s binary (here ./%s; the Deckhouse runner image carries fleeting-plugin-dvp in /usr/local/bin: run that image, or copy the binary from it) into the runner's PATH:", name, name)),
			checks.Sh(fix),
		}
	}
	// The plugin goes under the installing user's home: as the runner's
	// user, where this runner looks. fleeting's --config is the parent
	// command's flag (commands/fleeting/fleeting.go, gitlab-runner v19.3.0:
	// config.LoadConfig(context.Parent().String("config"))).
	who := checks.Quote(ra.User)
	if ra.User == "" {
		who = "'#" + strconv.Itoa(ra.UID) + "'"
	}
	return checks.Steps{
		checks.Say("Install the plugins config.toml names as the runner's user: they go into " + res.installDir + ", where this runner looks:"),
		checks.Sh("sudo -u " + who + " -H gitlab-runner fleeting --config " + checks.Quote(config) + " install"),
	}
}

func chmodFix(bs []facts.Blocker) checks.Steps {
	var fix []string
	for i, b := range bs {
		if i == 0 {
			fix = append(fix, "sudo chmod 0755 "+checks.Quote(b.Path))
			continue
		}
		fix = append(fix, "sudo chmod o+x "+checks.Quote(b.Path))
	}
	return checks.Steps{checks.Sh(strings.Join(fix, "\n"))}
}

func appendBlockers(ev []checks.Evidence, bs []facts.Blocker) []checks.Evidence {
	for _, b := range bs {
		ev = append(ev, b.Evidence())
	}
	return ev
}
