// Package fleetingstate checks that a restarted runner can take its
// instances over: [runners.autoscaler.state_storage] on, in a directory that
// outlives the runner, keeping the instances that had jobs.
package fleetingstate

import (
	"fmt"
	"path"
	"strings"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts/configfacts"
	"github.com/socialwebcomputer/doctor/checks/facts/hostfacts"
	"github.com/socialwebcomputer/doctor/checks/facts/kubefacts"
	"github.com/socialwebcomputer/doctor/internal/fixcode"
)

var Check = &checks.Check{
	ID:       "fleeting-state",
	Title:    "A restarted runner takes its instances over instead of replacing them",
	Severity: checks.Warning,
	Doc: checks.Doc{
		Cause: "Without [runners.autoscaler.state_storage] a restarted runner knows nothing of the instances it had and " +
			"deletes every one it finds (unless vm_isolation is on): a restarted runner replaces every VM. With it on, " +
			"the state lives in dir (default <config dir>/.taskscaler); on tmpfs, a container's overlay or an emptyDir " +
			"it is lost with the container, and the same happens. keep_instance_with_acquisitions = false also deletes " +
			"every VM that had a job running. Jobs do not fail; the restart costs VMs and their boot time.",
		// executors/internal/autoscaler/provider.go, v19.3.0 (instanceReadyUp).
		Symptom: "no data on pre-existing instance so removing for safety; or pre-existing instance has acquisition so removing for safety",
		Fix: checks.Steps{
			checks.Say("In the runner's [[runners]] entry, keep the autoscaler's state on a persistent volume mounted into the runner " +
				"(here /home/gitlab-runner/state: use the volume's path):"),
			checks.Toml("[runners.autoscaler.state_storage]\nenabled = true\ndir = \"/home/gitlab-runner/state\"\nkeep_instance_with_acquisitions = true"),
		},
		Verify: checks.Steps{checks.Sh("doctor run --only fleeting-state")},
		Patterns: []string{
			// executors/internal/autoscaler/provider.go, v19.3.0: instanceReadyUp's
			// two refusals, and init's error for a dir it cannot create.
			"no data on pre-existing instance so removing for safety",
			"pre-existing instance has acquisition so removing for safety",
			"initializing taskscaler: creating state storage: *",
		},
	},
	Requires: []checks.Node{configfacts.RunnerEntryFact, hostfacts.RunAsFact, hostfacts.MountsFact, kubefacts.FixScopeFact},
	// The same provider serves docker-autoscaler (executors/docker/autoscaler/
	// autoscaler.go, v19.3.0), with the same state storage.
	Executors: []string{checks.Instance, checks.DockerAutoscaler},
	Run:       run,
}

func run(p *checks.Pass) error {
	r := configfacts.RunnerEntryFact.Get(p)
	a := r.Runner.Autoscaler
	if a == nil {
		return checks.Skip("no [runners.autoscaler] (fleeting-plugin reports it)")
	}
	ss := a.StateStorage
	ra := hostfacts.RunAsFact.Get(p)
	if !ss.Enabled {
		if a.VMIsolation.Enabled {
			return checks.Skip("vm_isolation is on: pre-existing instances are kept without state storage")
		}
		src, line := r.At("autoscaler", "state_storage", "enabled")
		p.Report(checks.Finding{
			Cause: fmt.Sprintf("%s: [runners.autoscaler.state_storage] is off: a restarted runner replaces every VM, deleting each with "+
				"`no data on pre-existing instance so removing for safety` and booting new ones.", r.Label()),
			Evidence: []checks.Evidence{{Source: src, Detail: orText(strings.TrimSpace(line), "state_storage not set (enabled = false)")}},
			Fix:      enableFix(ra),
		})
		return nil
	}
	// provider.go, v19.3.0: dir defaults to filepath.Join(config.ConfigDir,
	// ".taskscaler"), ConfigDir being config.toml's directory
	// (commands/internal/configfile/configfile.go); the store is
	// <dir>/<ShortenToken(token)>, relative paths from the working directory.
	dir, how := ss.Dir, "dir"
	if dir == "" {
		dir, how = path.Join(path.Dir(r.File.Path), ".taskscaler"), "dir not set: <config dir>/.taskscaler"
	}
	if !path.IsAbs(dir) {
		dir = path.Join(ra.Cwd, dir)
	}
	src, line := r.At("autoscaler", "state_storage", "dir")
	cfg := checks.Evidence{Source: src, Detail: orText(strings.TrimSpace(line), how+" = "+dir)}
	var unknown error
	switch m := hostfacts.MountsFact.Get(p); {
	case m.Err != nil:
		unknown = fmt.Errorf("cannot tell whether %s outlives the runner: its mount table is unknown: %w", dir, m.Err)
	case m.At(dir) == nil:
		unknown = fmt.Errorf("cannot tell whether %s outlives the runner: %s lists no mount that holds it", dir, m.Source)
	default:
		mt := m.At(dir)
		if why := mt.Ephemeral(); why != "" {
			p.Report(checks.Finding{
				Cause: fmt.Sprintf("%s: state_storage.dir %s is on %s: the state goes with it, and a restarted runner replaces every VM as if state storage were off.",
					r.Label(), dir, why),
				Evidence: []checks.Evidence{cfg, {Source: fmt.Sprintf("%s:%d", m.Source, mt.Line), Detail: mt.Describe()}},
				Fix:      checks.Text(fmt.Sprintf("Mount a persistent volume (a PersistentVolumeClaim in a pod, a disk on a host) at %s, or set dir to a directory on one.", dir)),
			})
		}
	}
	if err := checkWritable(p, r, ra, dir, cfg); err != nil && unknown == nil {
		unknown = err
	}
	if !ss.KeepInstanceWithAcquisitions {
		src, line := r.At("autoscaler", "state_storage", "keep_instance_with_acquisitions")
		p.Report(checks.Finding{
			Cause: fmt.Sprintf("%s: keep_instance_with_acquisitions is false: a restarted runner deletes every VM that had a job running "+
				"(`pre-existing instance has acquisition so removing for safety`) instead of taking it back.", r.Label()),
			Evidence: []checks.Evidence{{Source: src, Detail: orText(strings.TrimSpace(line), "keep_instance_with_acquisitions not set (false)")}},
			Fix:      checks.Text("Set keep_instance_with_acquisitions = true in [runners.autoscaler.state_storage]."),
		})
	}
	return unknown
}

// checkWritable: init creates the store under dir as the runner's user; a
// dir it cannot write makes every job fail (provider.go, v19.3.0:
// "creating state storage: %w"). An unknown uid leaves it unknown.
func checkWritable(p *checks.Pass, r *configfacts.RunnerEntry, ra *hostfacts.RunAs, dir string, cfg checks.Evidence) error {
	st, err := p.Env.Stat(dir)
	if err != nil || !st.IsDir() {
		return nil
	}
	if !ra.UIDKnown {
		return fmt.Errorf("cannot tell whether %s can write %s: %s", ra.Label(), dir, ra.UIDProblem())
	}
	// A directory is written through: it needs w and x for the runner.
	blocked := hostfacts.Denied(p.Env, dir, st, ra, hostfacts.Write)
	if owner, group := hostfacts.Ownership(st); len(blocked) == 0 && !hostfacts.Permits(st.Mode(), owner, group, ra, hostfacts.Execute) {
		blocked = []hostfacts.Blocker{{Path: dir, Mode: st.Mode().Perm(), Owner: owner, Group: group}}
	}
	if len(blocked) == 0 {
		return nil
	}
	ev := []checks.Evidence{cfg}
	for _, b := range blocked {
		ev = append(ev, b.Evidence())
	}
	p.Report(checks.Finding{
		Severity: checks.Error,
		Cause: fmt.Sprintf("%s: the runner's user (%s) cannot write state_storage.dir %s (blocked at %s): the autoscaler does not start, and every job fails with `creating state storage`.",
			r.Label(), ra.Label(), dir, hostfacts.BlockerPaths(blocked)),
		Evidence: ev,
		Fix:      ownFix(kubefacts.FixScopeFact.Get(p), ra, dir),
	})
	return nil
}

// ownFix gives the state directory to the runner's user, as root: a path
// of the runner's own, for a runner doctor can vouch for (kubefacts.FixScope:
// the path, and acting for its user), else a sentence that says why.
func ownFix(scope *kubefacts.FixScope, ra *hostfacts.RunAs, dir string) checks.Steps {
	say := "Give the directory to the runner's user (in a pod: the volume's fsGroup gives the runner's group write access)"
	if path.IsAbs(dir) {
		dir = path.Clean(dir) // the path scope.Path judges, and the command names
	}
	step := kubefacts.ChangeFix(scope, fmt.Sprintf("%d:%d", ra.UID, ra.GID), kubefacts.Change{Path: dir, Mode: "0700", Chown: true})
	if step.Kind == checks.KindText {
		return checks.Steps{checks.Say(say + "."), step}
	}
	return checks.Steps{checks.Say(say + ":"), step}
}

// enableFix is the document's state_storage block with a directory of
// this runner's own: under its $HOME when it has one.
func enableFix(ra *hostfacts.RunAs) checks.Steps {
	dir := "/home/gitlab-runner/state"
	if ra.HomeSet && ra.Home != "" && ra.Home != "/" {
		dir = path.Join(ra.Home, "state")
	}
	return checks.Steps{
		checks.Say(fmt.Sprintf("In the runner's [[runners]] entry (replacing its [runners.autoscaler.state_storage] table if it has one), keep the state in %s:", dir)),
		checks.Document(fixcode.TOML(fixcode.TOMLTable("runners.autoscaler.state_storage",
			fixcode.KV{Key: "enabled", Value: true},
			fixcode.KV{Key: "dir", Value: dir},
			fixcode.KV{Key: "keep_instance_with_acquisitions", Value: true}))),
		checks.Say(fmt.Sprintf("And put %s on a persistent volume (in a pod: a PersistentVolumeClaim mounted there).", dir)),
	}
}

func orText(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
