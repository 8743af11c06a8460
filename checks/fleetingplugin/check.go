// Package fleetingplugin checks that the fleeting plugin a runner names is
// where the runner looks for it, and that the runner's user may execute it.
package fleetingplugin

import (
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts/configfacts"
	"github.com/socialwebcomputer/doctor/checks/facts/hostfacts"
	"github.com/socialwebcomputer/doctor/checks/facts/kubefacts"
	"github.com/socialwebcomputer/doctor/internal/fixcode"
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
	Requires: []checks.Node{configfacts.RunnerEntryFact, hostfacts.RunAsFact, hostfacts.EnvironFact, kubefacts.FixScopeFact},
	// The docker-autoscaler executor is the same autoscaler provider around
	// the Docker executor (executors/docker/autoscaler/autoscaler.go,
	// v19.3.0: autoscaler.New(dockerProvider, …)), so it starts the plugin
	// the same way.
	Executors: []string{checks.Instance, checks.DockerAutoscaler},
	Run:       run,
}

func run(p *checks.Pass) error {
	r := configfacts.RunnerEntryFact.Get(p)
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
	e, ra, scope := hostfacts.EnvironFact.Get(p), hostfacts.RunAsFact.Get(p), kubefacts.FixScopeFact.Get(p)
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
				r.Label(), res.passedOver, ra.Label(), hostfacts.BlockerPaths(res.blocked), res.runnerEr),
			Evidence: appendBlockers(ev, res.blocked),
			Fix:      chmodFix(scope, absIn(ra.Cwd, res.passedOver), res.blocked),
		})
	case res.found == "":
		p.Report(checks.Finding{
			Cause: fmt.Sprintf("%s: the fleeting plugin %q is nowhere %s looks for it (%s): every job fails with `%s`.",
				r.Label(), a.Plugin, ra.Label(), searched(ra, a.Plugin, res), res.runnerEr),
			Evidence: ev,
			Fix:      installFix(scope, a.Plugin, r.File.Path, e, ra, res),
		})
	case len(res.blocked) > 0:
		p.Report(checks.Finding{
			Cause: fmt.Sprintf("%s: the fleeting plugin %s is there (%s), but the runner's user (%s) may not execute it (blocked at %s): the runner cannot start it, and every job waits for an instance that never comes.",
				r.Label(), res.found, res.how, ra.Label(), hostfacts.BlockerPaths(res.blocked)),
			Evidence: appendBlockers(ev, res.blocked),
			Fix:      chmodFix(scope, absIn(ra.Cwd, res.found), res.blocked),
		})
	}
	if !ra.UIDKnown {
		return fmt.Errorf("cannot tell whether %s may execute %s: %s", ra.Label(), res.found, ra.UIDProblem())
	}
	return nil
}

// searched names the places in the runner's order: the value as a path,
// the $PATH entries, the install directory.
func searched(ra *hostfacts.RunAs, name string, res *resolution) string {
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
// through `gitlab-runner fleeting install` as its own user. Installing a
// file as root needs a path of the runner's own (kubefacts.FixScope: a PATH
// directory such as /usr/local/bin is a system one, and a non-root
// process's PATH is its user's to write); running the installer as the
// runner's user needs a runner doctor can vouch for.
func installFix(scope *kubefacts.FixScope, name, config string, e *hostfacts.Environ, ra *hostfacts.RunAs, res *resolution) checks.Steps {
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
		target := path.Join(dir, name) // cleaned: the path scope.Path judges is the one installed
		say := fmt.Sprintf("Install the %s binary (here ./%s; the Deckhouse runner image carries fleeting-plugin-dvp in /usr/local/bin: run that image, or copy the binary from it) into the runner's PATH", name, name)
		if err := scope.Path(target); err != nil {
			return checks.Steps{checks.Say(say + ", as " + target + " with mode 0755."), checks.Withheld(err)}
		}
		steps := checks.Steps{checks.Say(say + ":")}
		cmds := []fixcode.Cmd{fixcode.Command("install", "-m", "0755", "./"+name, target).Sudo()}
		if ra.Unit != nil && ra.Unit.Found() {
			if err := unitArg(ra.Unit.Name); err != nil {
				return append(steps, checks.Commands(cmds...), checks.Withheld(err))
			}
			cmds = append(cmds, fixcode.Command("systemctl", "restart", ra.Unit.Name).Sudo())
		}
		return append(steps, checks.Commands(cmds...))
	}
	// The plugin goes under the installing user's home: as the runner's
	// user, where this runner looks. fleeting's --config is the parent
	// command's flag (commands/fleeting/fleeting.go, gitlab-runner v19.3.0:
	// config.LoadConfig(context.Parent().String("config"))).
	say := "Install the plugins config.toml names as the runner's user: they go into " + res.installDir + ", where this runner looks"
	if err := scope.ActsFor(); err != nil {
		return checks.Steps{checks.Say(say + "."), checks.Withheld(err)}
	}
	if !path.IsAbs(config) {
		return checks.Steps{checks.Say(say + "."), checks.Withheld(fmt.Errorf("%s is relative, and a fix runs in the operator's directory, not the runner's", config))}
	}
	who := ra.User
	if who == "" {
		who = "#" + strconv.Itoa(ra.UID) // sudo(8), -u: "To specify a uid instead of a user name, use #uid"
	}
	return checks.Steps{
		checks.Say(say + ":"),
		checks.Commands(fixcode.Command("sudo", "-u", who, "-H", "gitlab-runner", "fleeting", "--config", path.Clean(config), "install")),
	}
}

// chmodFix makes the plugin (the file plugin) executable (0755) when it
// is in the way, and each directory in the way searchable (o+x): commands
// for the runner's own paths only (kubefacts.FixScope), a sentence for each
// other one (/usr/local/bin is a system path: its plugin is the image's or
// the administrator's to fix).
func chmodFix(scope *kubefacts.FixScope, plugin string, bs []hostfacts.Blocker) checks.Steps {
	var changes []kubefacts.Change
	var what, dirs []string
	for _, b := range bs {
		if path.Clean(b.Path) == plugin {
			changes = append(changes, kubefacts.Change{Path: b.Path, Mode: "0755"})
			what = append(what, "make "+b.Path+" executable by the runner's user (mode 0755)")
			continue
		}
		changes = append(changes, kubefacts.Change{Path: b.Path, Mode: "o+x"})
		dirs = append(dirs, b.Path)
	}
	steps := kubefacts.ChangeSteps(scope, "", changes...)
	if steps.Blocks() == nil {
		// Only sentences: say what the commands would have done.
		if len(dirs) > 0 {
			what = append(what, "make "+strings.Join(dirs, ", ")+" searchable by it (o+x)")
		}
		sentence := strings.Join(what, ", and ") + "; in a pod, in the runner's image."
		return append(checks.Steps{checks.Say(strings.ToUpper(sentence[:1]) + sentence[1:])}, steps...)
	}
	return steps
}

// unitArg is nil when name may follow `systemctl restart`: a unit name
// systemd accepts (fixcode.UnitName) that systemctl cannot read as an
// option (systemd's unit names may begin with "-", as "-.mount" does).
func unitArg(name string) error {
	if err := fixcode.UnitName(name); err != nil {
		return err
	}
	if strings.HasPrefix(name, "-") {
		return fmt.Errorf("the unit name %q begins with -, which systemctl would read as an option", name)
	}
	return nil
}

// absIn is p resolved against the runner's working directory dir.
func absIn(dir, p string) string {
	if p == "" || path.IsAbs(p) {
		return path.Clean(p)
	}
	return path.Join(dir, p)
}

func appendBlockers(ev []checks.Evidence, bs []hostfacts.Blocker) []checks.Evidence {
	for _, b := range bs {
		ev = append(ev, b.Evidence())
	}
	return ev
}
