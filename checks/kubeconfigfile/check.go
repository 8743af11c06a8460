// Package kubeconfigfile examines the files KUBECONFIG names.
package kubeconfigfile

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path"
	"sort"
	"strings"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts"
	"github.com/socialwebcomputer/doctor/internal/fixcode"
	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/internal/redact"
)

var Check = &checks.Check{
	ID:       "kubeconfig-file",
	Title:    "The kubeconfig exists, parses, and only the runner can read it",
	Severity: checks.Error,
	Doc: checks.Doc{
		Cause: "KUBECONFIG names a file that is missing (client-go skips it silently), unreadable by the runner's " +
			"user, not a kubeconfig, or without a current-context; or the file is readable by others although its " +
			"key is cluster-admin in the tenant cluster; or its server is not the https kcp mount URL getKubeconfig returns.",
		Symptom: "getting Kubernetes config: invalid configuration: no configuration has been provided, try setting KUBERNETES_MASTER environment variable; or error loading config file \"/etc/gitlab-runner/tenant-ci/kubeconfig.yaml\": open …: permission denied",
		Fix: checks.Target(
			checks.Say(facts.GetKubeconfig+" Install it where the runner loads it, readable by the runner's user alone (CLUSTER.kubeconfig.yaml is the file getKubeconfig returned):"),
			checks.Sh(`sudo install -d -m 0700 -o "$RUNNER_USER" "$(dirname "$RUNNER_KUBECONFIG")"
sudo install -m 0600 -o "$RUNNER_USER" ./CLUSTER.kubeconfig.yaml "$RUNNER_KUBECONFIG"`)),
		Verify: checks.Target(checks.Say("The server of the runner's context, and the file's mode and owner:"),
			checks.Sh(checks.CatalogKubectl+` config view --minify -o jsonpath='{.clusters[0].cluster.server}'
sudo stat -c '%a %U' "$RUNNER_KUBECONFIG"`)),
		Patterns: []string{
			// executors/kubernetes/kubernetes.go, v19.3.0 ("getting Kubernetes config: %w") around
			// client-go tools/clientcmd/validation.go, v0.36.3: "invalid configuration: %v".
			"getting Kubernetes config: invalid configuration: ",
			// client-go tools/clientcmd/loader.go, v0.36.3: fmt.Errorf("error loading config file \"%s\": %v", filename, err).
			"error loading config file \"*\": ",
		},
	},
	Requires:  []checks.Node{facts.KubeconfigFact, facts.RunAsFact, facts.ConfigFact, facts.FixScopeFact, facts.AudienceFact},
	Executors: []string{checks.Kubernetes},
	Run:       run,
}

func run(p *checks.Pass) error {
	k := facts.KubeconfigFact.Get(p)
	if len(k.Files) == 0 {
		if k.EnvUnknown {
			return fmt.Errorf("no kubeconfig to examine: %s", k.None)
		}
		return checks.Skip("no kubeconfig to examine: %s", k.None)
	}
	proc := facts.RunAsFact.Get(p)
	if p.Env.KubeconfigPath != "" || (!proc.Running() && (proc.Unit == nil || !proc.Unit.Found())) {
		proc = nil // --kubeconfig is examined as a file; whose it is, is not known
	}
	// The files are judged against the runner's uid; an unknown uid leaves
	// that judgement, and so the check, unknown. So does a file doctor
	// itself may not read: that says nothing of the runner.
	var cannot error
	done := func() error {
		if cannot != nil {
			return cannot
		}
		if proc != nil && !proc.UIDKnown {
			return fmt.Errorf("cannot tell whether %s can read the kubeconfig: %s", proc.Label(), proc.UIDProblem())
		}
		return nil
	}
	src := checks.Evidence{Source: "kubeconfig", Detail: "path list from " + k.Source}
	missing := 0
	for _, f := range k.Files {
		if err := facts.DoctorCannotRead(p.Env, f.Path, f.Err, proc); err != nil {
			cannot = err
			continue
		}
		if examineFile(p, f, proc, facts.FixScopeFact.Get(p), src) {
			missing++
		}
	}
	if missing == len(k.Files) {
		return done() // each missing file is reported; no merged config to look at
	}
	if k.MergeErr != nil || k.Merged == nil {
		return done() // reported per file above
	}
	// The files are the process's; the context is each runner's own.
	c := facts.ConfigFact.Get(p)
	if !c.Decoded() {
		examineContext(p, facts.ResolveContext(k, p.Env.ContextOverride), nil, facts.FixScopeFact.Get(p), src)
		return done()
	}
	for _, i := range facts.KubeconfigRunners(c.Config) {
		r := c.Config.Runners[i]
		examineContext(p, facts.ResolveContext(k, facts.ContextFor(p.Env, r)), facts.RefOf(i, r), facts.FixScopeFact.Get(p), src)
	}
	return done()
}

// examineFile reports what is wrong with one file; it returns true when the
// file is missing, which client-go would skip without a word.
func examineFile(p *checks.Pass, f *facts.KubeFile, proc *facts.RunAs, scope *facts.FixScope, src checks.Evidence) bool {
	if f.Err != nil {
		missing := errors.Is(f.Err, os.ErrNotExist)
		cause := fmt.Sprintf("The kubeconfig %s cannot be loaded: %v; client-go's load fails, and so does every job.", f.Path, errText(f.Err))
		if missing {
			cause = fmt.Sprintf("The kubeconfig %s does not exist: client-go skips a missing file without a word, and with "+
				"nothing else to load every job fails with `invalid configuration: no configuration has been provided`.", f.Path)
		}
		p.Report(checks.Finding{Cause: cause, Evidence: []checks.Evidence{src, {Source: f.Path, Detail: errText(f.Err)}},
			Fix: installFix(p, f, proc, scope)})
		return missing
	}
	if f.ParseErr != nil {
		p.Report(checks.Finding{
			Cause:    fmt.Sprintf("The kubeconfig %s does not parse: client-go's load fails, and so does every job.", f.Path),
			Evidence: []checks.Evidence{src, {Source: f.Path, Detail: f.ParseErr.Error()}},
			Fix:      facts.InstallKubeconfig(scope, f.Path, proc),
		})
	}
	mode := f.Stat.Mode().Perm()
	if proc != nil && proc.UIDKnown {
		if blocked := facts.Denied(p.Env, f.Path, f.Stat, proc, facts.Read); len(blocked) > 0 {
			ev := []checks.Evidence{src}
			var changes []facts.Change
			for _, b := range blocked {
				ev = append(ev, b.Evidence())
				want := "0700"
				if b.Path == f.Path {
					want = "0600"
				}
				changes = append(changes, facts.Change{Path: b.Path, Mode: want, Chown: true})
			}
			// A directory the runner cannot enter hides a file it could read:
			// the fix names every component in the way, not only the file.
			p.Report(checks.Finding{
				Cause: fmt.Sprintf("The runner's user (%s) cannot read %s (blocked at %s): client-go fails "+
					"to load it and every job fails.", proc.Label(), f.Path, facts.BlockerPaths(blocked)),
				Evidence: ev,
				Fix:      checks.Steps{checks.Say("Give the file to the runner's user, and every directory in the way:"), facts.ChangeFix(scope, proc.Owner(), changes...)},
			})
		}
	}
	// Who else may read it (facts.Audience): any local user, the group's
	// other members, the other processes of the runner's container; a
	// group nobody else is in lets nobody else in.
	if x := facts.AudienceFact.Get(p).Let(f.Stat, proc, facts.Read); x != nil {
		p.Report(checks.Finding{
			Severity: checks.Warning,
			Cause: fmt.Sprintf("%s has mode %04o: %s can read it, and its key is cluster-admin "+
				"in the tenant cluster.", f.Path, mode, x.Who),
			Evidence: []checks.Evidence{src, {Source: f.Path, Detail: fmt.Sprintf("mode %04o owner %d:%d", mode, f.Owner, f.Group)}},
			Fix:      checks.Steps{facts.ChangeFix(scope, "", facts.Change{Path: f.Path, Mode: "0600"})},
		})
	}
	if f.DirStat != nil && f.DirMode&0o077 != 0 {
		dir := path.Dir(f.Path)
		p.Report(checks.Finding{
			Severity: checks.Warning,
			Cause:    fmt.Sprintf("%s, the kubeconfig's directory, has mode %04o: wider than 0700, so others can list it and reach the cluster-admin key if the file's mode ever widens.", dir, f.DirMode),
			Evidence: []checks.Evidence{{Source: dir, Detail: fmt.Sprintf("mode %04o", f.DirMode)}},
			Fix:      checks.Steps{facts.ChangeFix(scope, "", facts.Change{Path: dir, Mode: "0700"})},
		})
	}
	return false
}

// examineContext reports what is wrong with one runner's context (runner
// nil: the current-context, when config.toml names no runner).
func examineContext(p *checks.Pass, k *facts.KubeContext, runner *checks.RunnerRef, scope *facts.FixScope, src checks.Evidence) {
	report := func(f checks.Finding) {
		f.Runner = runner
		p.Report(f)
	}
	if k.ContextName == "" {
		report(checks.Finding{
			Cause:    "The kubeconfig has no current-context and config.toml names no context: client-go has no cluster to talk to, and every job fails with `invalid configuration: no configuration has been provided`.",
			Evidence: []checks.Evidence{src, {Source: k.Kubeconfig.Files[0].Path, Detail: fmt.Sprintf("current-context empty; contexts: %s", contextNames(k.Kubeconfig))}},
			Fix:      useContext(k, scope),
		})
		return
	}
	if k.Context == nil {
		report(checks.Finding{
			Cause:    fmt.Sprintf("The context %q does not exist in the kubeconfig: client-go fails with `context was not found for specified context: %s`.", k.ContextName, k.ContextName),
			Evidence: []checks.Evidence{src, {Source: k.Kubeconfig.Files[0].Path, Detail: "contexts: " + contextNames(k.Kubeconfig)}},
			Fix:      checks.Text("Name an existing context in config.toml's context key or the kubeconfig's current-context."),
		})
		return
	}
	if k.Cluster == nil {
		report(checks.Finding{
			Cause:    fmt.Sprintf("The context %q names cluster %q, which the kubeconfig does not define.", k.ContextName, k.Context.Cluster),
			Evidence: []checks.Evidence{src},
			Fix:      checks.Text("Download the kubeconfig again from getKubeconfig."),
		})
		return
	}
	// Printed without its userinfo: a server URL can carry a password.
	server := redact.StripUserinfo(k.Cluster.Server)
	u, err := url.Parse(k.Cluster.Server)
	switch {
	case err != nil || u.Host == "":
		report(checks.Finding{
			Cause:    fmt.Sprintf("The cluster %q has server %q, which is not a URL client-go can use.", k.Context.Cluster, server),
			Evidence: []checks.Evidence{src, {Source: "clusters." + k.Context.Cluster + ".server", Detail: server}},
			Fix:      checks.Text("Download the kubeconfig again from getKubeconfig; its server is the kcp mount URL."),
		})
	case u.Scheme != "https":
		report(checks.Finding{
			Cause:    fmt.Sprintf("The cluster %q has server %s, which is not https: the client certificate cannot be presented and nothing verifies the server.", k.Context.Cluster, server),
			Evidence: []checks.Evidence{src, {Source: "clusters." + k.Context.Cluster + ".server", Detail: server}},
			Fix:      checks.Text("Use the https kcp mount URL getKubeconfig returns."),
		})
	case !facts.KcpMountPath.MatchString(u.Path):
		report(checks.Finding{
			Severity: checks.Info,
			Cause:    fmt.Sprintf("The server %s is not of the kcp mount form https://<kcp front>/clusters/root:<accountHash>:<cluster>:clusters: this kubeconfig did not come from getKubeconfig, or it was edited.", server),
			Evidence: []checks.Evidence{{Source: "clusters." + k.Context.Cluster + ".server", Detail: server}},
			Fix:      checks.Text("None if this cluster is meant; otherwise use the kubeconfig getKubeconfig returned."),
		})
	}
	examineNamedFiles(p, k, report, src)
}

// examineNamedFiles reports a file the context names (certificate-authority,
// client-certificate, client-key, tokenFile) that cannot be read as client-go
// reads it: missing, unreadable, too large, or not a regular file (a FIFO
// blocks client-go's open, /dev/zero its read of tokenFile without end).
func examineNamedFiles(p *checks.Pass, k *facts.KubeContext, report func(checks.Finding), src checks.Evidence) {
	_, err := facts.InlineKubeconfigFiles(k.Kubeconfig.Reader, k.Kubeconfig.Merged, k.ContextName)
	if err == nil {
		return
	}
	report(checks.Finding{
		Cause: fmt.Sprintf("The context %q names a file client-go cannot use: %v. The runner's client-go reads it when it builds its client, "+
			"and fails, or blocks on a FIFO, or reads a device without end.", k.ContextName, err),
		Evidence: []checks.Evidence{src, {Source: "contexts." + k.ContextName, Detail: err.Error()}},
		Fix:      checks.Text("Point the key at a regular file the runner's user can read, or embed the file in the kubeconfig (the key's -data form): download the kubeconfig again from getKubeconfig."),
	})
}

// installFix installs a kubeconfig where the runner looks, for its user:
// its directory made first when it does not exist (install -d re-owns one
// that does, so an existing directory is left as it is).
func installFix(p *checks.Pass, f *facts.KubeFile, ra *facts.RunAs, scope *facts.FixScope) checks.Steps {
	say := checks.Say(facts.GetKubeconfig + " Save it as new.kubeconfig.yaml and install it where the runner loads it, readable by the runner's user alone:")
	dir := path.Dir(f.Path)
	for _, q := range []string{f.Path, dir} {
		if err := scope.Path(q); err != nil {
			return checks.Steps{say, checks.Withheld(err)}
		}
	}
	owner := func(c fixcode.Cmd) fixcode.Cmd {
		if ra != nil && ra.UIDKnown {
			return c.Arg("-o", ra.Owner())
		}
		return c
	}
	var cmds []fixcode.Cmd
	if _, err := p.Env.Stat(dir); err != nil {
		cmds = append(cmds, owner(fixcode.Command("install", "-d", "-m", "0700")).Arg(dir).Sudo())
	}
	cmds = append(cmds, owner(fixcode.Command("install", "-m", "0600")).Arg("./new.kubeconfig.yaml", f.Path).Sudo())
	return checks.Steps{say, checks.Commands(cmds...)}
}

// useContext sets the current-context of the runner's kubeconfig file, as
// its owner (sudo: the file is the runner's, never the operator's own
// kubeconfig).
func useContext(k *facts.KubeContext, scope *facts.FixScope) checks.Steps {
	var names []string
	for n := range k.Kubeconfig.Merged.Contexts {
		names = append(names, n)
	}
	if len(names) == 0 {
		return checks.Text("The kubeconfig has no context at all: download the kubeconfig again from getKubeconfig.")
	}
	sort.Strings(names)
	say := "Set the current-context of the runner's kubeconfig to its context"
	if len(names) > 1 {
		say = "Set the current-context of the runner's kubeconfig to the context of this cluster (one of " + strings.Join(names, ", ") + "; the first here)"
	}
	file := k.Kubeconfig.Files[0].Path
	if err := scope.Path(file); err != nil {
		return checks.Steps{checks.Say(say + ", or download the kubeconfig again from getKubeconfig."), checks.Withheld(err)}
	}
	return checks.Steps{checks.Say(say + ", or download the kubeconfig again from getKubeconfig:"),
		checks.Commands(fixcode.Command("kubectl", "--kubeconfig", file, "config", "use-context", names[0]).Sudo())}
}

func contextNames(k *facts.Kubeconfig) string {
	var names []string
	for n := range k.Merged.Contexts {
		names = append(names, n)
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// errText is an error without the path FileError already put in evidence.
func errText(err error) string {
	var fe *hostio.FileError
	if errors.As(err, &fe) {
		return fe.Err.Error()
	}
	return err.Error()
}
