// Package configfile examines config.toml as a file: the runner can read
// it, and no one else can read the tokens in it or put another file in
// its place.
package configfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts/configfacts"
	"github.com/socialwebcomputer/doctor/checks/facts/hostfacts"
	"github.com/socialwebcomputer/doctor/checks/facts/kubefacts"
	"github.com/socialwebcomputer/doctor/internal/hostio"
)

var Check = &checks.Check{
	ID:       "config-file",
	Title:    "config.toml is readable by the runner and by no one else",
	Severity: checks.Error,
	Doc: checks.Doc{
		Cause: "config.toml holds each runner's authentication token: whoever reads it can take the runner's jobs, " +
			"and with them their CI/CD variables. The runner writes the file 0600 in a 0700 directory, but only when " +
			"it creates them (common/config.go, v19.3.0: os.MkdirAll(filepath.Dir(filePath), 0700); " +
			"os.WriteFile(filePath, data, 0o600)): a file copied in, unpacked or templated keeps the mode it was given. " +
			"A file or directory others can write lets them put their own config.toml, and its commands, in its place. " +
			"A file the runner's user cannot read stops it at start-up.",
		Symptom: "Nothing in the runner's log while the file is exposed. When the runner's user cannot read it: " +
			"FATAL: Service run failed  error=decoding configuration file: open /etc/gitlab-runner/config.toml: permission denied",
		Fix: checks.Target(checks.Sh(`sudo chown "$RUNNER_USER" "$RUNNER_CONFIG"
sudo chmod 0600 "$RUNNER_CONFIG"
sudo chmod go-w "$(dirname "$RUNNER_CONFIG")"`)),
		Verify: checks.Target(checks.Sh(`sudo stat -c '%a %U:%G %n' "$RUNNER_CONFIG" "$(dirname "$RUNNER_CONFIG")"`)),
		Patterns: []string{
			// common/config.go, v19.3.0, LoadConfig: toml.DecodeFile's open error behind
			// fmt.Errorf("decoding configuration file: %w", err).
			"decoding configuration file: open *: permission denied",
			// common/config.go, v19.3.0, LoadConfig: os.Stat's error returned as it is, when a
			// directory above the file is not searchable.
			"Service run failed*stat *: permission denied",
		},
	},
	Requires: []checks.Node{configfacts.ConfigFact, hostfacts.RunAsFact, kubefacts.FixScopeFact, hostfacts.AudienceFact},
	// A runner that cannot read config.toml is what config-decode sees as a
	// FATAL at start-up; this check names the path component in the way.
	Explains: []string{"config-decode"},
	Run:      run,
}

func run(p *checks.Pass) error {
	c := configfacts.ConfigFact.Get(p)
	switch {
	case c.Path == "" && c.Unknown:
		return errors.New(c.Unlocated)
	case c.Path == "":
		return checks.Skip("%s", c.Unlocated)
	case errors.Is(c.ReadErr, os.ErrNotExist), errors.Is(c.ReadErr, hostio.ErrTooLarge):
		return checks.Skip("config-decode reports %s: %v", c.Path, c.ReadErr)
	}
	file := c.ReadPath()
	st, err := p.Env.Stat(file)
	if err != nil {
		return fmt.Errorf("cannot examine %s: %w", c.Path, err)
	}
	ra, scope := hostfacts.RunAsFact.Get(p), kubefacts.FixScopeFact.Get(p)
	if p.Env.ConfigPath != "" {
		ra = nil // --config names the operator's file; whose it is, is not known
	}
	if ra != nil && ra.UIDKnown {
		if blocked := hostfacts.Denied(p.Env, file, st, ra, hostfacts.Read); len(blocked) > 0 {
			unreadable(p, c, blocked, ra, scope)
			return nil
		}
	}
	aud := hostfacts.AudienceFact.Get(p)
	exposed(p, c, st, ra, scope, aud)
	replaceable(p, c, ra, scope, aud)
	if ra != nil && !ra.UIDKnown {
		return fmt.Errorf("cannot tell whether %s can read %s: %s", ra.Label(), c.Path, ra.UIDProblem())
	}
	return nil
}

// unreadable reports the path components that keep the runner's user
// from config.toml, with the commands that open each: the file given to
// the runner's user, each directory in the way made searchable (o+x). A
// path that is not the runner's own (a system directory such as /etc) gets
// a sentence instead of a command (kubefacts.FixScope).
func unreadable(p *checks.Pass, c *configfacts.ConfigFile, blocked []hostfacts.Blocker, ra *hostfacts.RunAs, scope *kubefacts.FixScope) {
	ev := make([]checks.Evidence, 0, len(blocked))
	var changes []kubefacts.Change
	for _, b := range blocked {
		ev = append(ev, b.Evidence())
		if b.Path == c.ReadPath() {
			changes = append(changes, kubefacts.Change{Path: c.Path, Mode: "0600", Chown: true})
		} else {
			changes = append(changes, kubefacts.Change{Path: b.Path, Mode: "o+x"})
		}
	}
	p.Report(checks.Finding{
		Cause: fmt.Sprintf("The runner's user (%s) cannot read %s (blocked at %s): the runner stops at start-up with "+
			"`decoding configuration file: open %s: permission denied`.", ra.Label(), c.Path, hostfacts.BlockerPaths(blocked), c.Path),
		Evidence: ev,
		Fix:      kubefacts.ChangeSteps(scope, ra.Owner(), changes...),
	})
}

// exposed reports a file whose tokens others can read, or which others
// can write. Who "others" are is the Audience's answer: any local user for
// the other class on a host, the group's members besides the runner's
// user for the group class, and in a container the container's other
// processes; a mode that lets nobody else in is no finding (the runner as
// its document deploys it in a pod, config.toml copied 0644 and owned by
// its uid, is one process in its own container).
func exposed(p *checks.Pass, c *configfacts.ConfigFile, st fs.FileInfo, ra *hostfacts.RunAs, scope *kubefacts.FixScope, aud *hostfacts.Audience) {
	mode := st.Mode().Perm()
	uid, gid := hostfacts.Ownership(st)
	modeEv := checks.Evidence{Source: c.Path, Detail: fmt.Sprintf("mode %04o owner %d:%d", mode, uid, gid)}
	change, owner := kubefacts.Change{Path: c.Path, Mode: "0600"}, ""
	if ra != nil && ra.UIDKnown && ra.UID != 0 && uid != ra.UID {
		// 0600 on a file the runner's user does not own would lock it out.
		change.Chown, owner = true, ra.Owner()
	}
	fix := kubefacts.ChangeSteps(scope, owner, change)
	holders := tokenHolders(c)
	// The group class is judged only for the runner's own file: a file
	// --config names may be a copy given to its reader through its group
	// (doctor's CronJob mounts the runner's config.toml 0440 for its
	// fsGroup), and whose group that is, is not known.
	let := func(want fs.FileMode) *hostfacts.Exposure {
		x := aud.Let(st, ra, want)
		if x != nil && x.Class == "group" && ra == nil {
			return nil
		}
		return x
	}
	if x := let(hostfacts.Write); x != nil {
		p.Report(checks.Finding{
			Severity: severityOf(x),
			Cause: fmt.Sprintf("%s has mode %04o: %s can write it, and so give the runner their own "+
				"[[runners]], tokens and commands.", c.Path, mode, x.Who),
			Evidence: append([]checks.Evidence{modeEv}, containerEvidence(aud)...),
			Fix:      fix,
		})
	}
	if len(holders) == 0 {
		return
	}
	if x := let(hostfacts.Read); x != nil {
		p.Report(checks.Finding{
			Severity: severityOf(x),
			Cause: fmt.Sprintf("%s has mode %04o and holds %s: %s can read the token and take "+
				"the runner's jobs, with their CI/CD variables.", c.Path, mode, tokensText(len(holders)), x.Who),
			Evidence: append(append([]checks.Evidence{modeEv}, holders...), containerEvidence(aud)...),
			Fix:      fix,
		})
	}
}

// severityOf is a finding's severity by the class that lets them in: the
// check's own for the other class, a warning when it is the group's
// members alone.
func severityOf(x *hostfacts.Exposure) checks.Severity {
	if x.Class == "group" {
		return checks.Warning
	}
	return checks.Default
}

// containerEvidence is what shows the runner runs in a container, when it
// does: a finding about who else is in it rests on it.
func containerEvidence(aud *hostfacts.Audience) []checks.Evidence {
	if aud.Container == nil {
		return nil
	}
	return aud.Container.Evidence
}

// replaceable reports a directory of config.toml that others can write
// without the sticky bit: they can rename another file over it.
func replaceable(p *checks.Pass, c *configfacts.ConfigFile, ra *hostfacts.RunAs, scope *kubefacts.FixScope, aud *hostfacts.Audience) {
	dir := path.Dir(c.ReadPath())
	st, err := p.Env.Stat(dir)
	if err != nil || st.Mode()&fs.ModeSticky != 0 {
		return
	}
	x := aud.Let(st, ra, hostfacts.Write)
	if x == nil {
		return
	}
	mode := st.Mode().Perm()
	uid, gid := hostfacts.Ownership(st)
	ev := append([]checks.Evidence{{Source: path.Dir(c.Path), Detail: fmt.Sprintf("mode %04o owner %d:%d", mode, uid, gid)}}, containerEvidence(aud)...)
	fix := kubefacts.ChangeSteps(scope, "", kubefacts.Change{Path: path.Dir(c.Path), Mode: "go-w"})
	p.Report(checks.Finding{
		Severity: severityOf(x),
		Cause: fmt.Sprintf("%s, config.toml's directory, has mode %04o: %s can replace config.toml "+
			"with their own, and the runner loads it on its next reload.", path.Dir(c.Path), mode, x.Who),
		Evidence: ev,
		Fix:      fix,
	})
}

// tokenHolders are the runners whose token config.toml holds, as evidence
// that names them and never the token.
func tokenHolders(c *configfacts.ConfigFile) []checks.Evidence {
	if !c.Decoded() {
		return nil // config-decode reports it; which keys it holds is not known
	}
	var out []checks.Evidence
	for i, r := range c.Config.Runners {
		if r.Token != "" {
			out = append(out, checks.Evidence{Source: c.Path, Detail: fmt.Sprintf("%s has a token (%d characters)", configfacts.RefOf(i, r), len(r.Token))})
		}
	}
	return out
}

func tokensText(n int) string {
	if n == 1 {
		return "a runner token"
	}
	return fmt.Sprintf("%d runner tokens", n)
}
