// Package kubeconfigfile examines the files KUBECONFIG names.
package kubeconfigfile

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts/configfacts"
	"github.com/socialwebcomputer/doctor/checks/facts/hostfacts"
	"github.com/socialwebcomputer/doctor/checks/facts/kubefacts"
	"github.com/socialwebcomputer/doctor/internal/fixcode"
	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/internal/redact"
)

var Check = &checks.Check{
	ID:       "kubeconfig-file",
	Title:    "The kubeconfig exists, parses, and only the runner can read it",
	Severity: checks.Error,
	Doc: checks.Doc{
		Cause: "KUBECONFIG names files that are all missing (client-go skips a missing file silently), or one that is " +
			"unreadable by the runner's user, not a kubeconfig, or without a current-context; or client-go refuses what " +
			"the context carries when it builds the runner's client: insecure-skip-tls-verify beside a CA, a key that is " +
			"not the certificate's, a certificate or key of the wrong PEM type, a CA that does not load; or the file is " +
			"readable by others although its key is cluster-admin in the tenant cluster; or its server is not the https " +
			"kcp mount URL getKubeconfig returns.",
		Symptom: "getting Kubernetes config: invalid configuration: no configuration has been provided, try setting KUBERNETES_MASTER environment variable; or error loading config file \"/etc/gitlab-runner/tenant-ci/kubeconfig.yaml\": open …: permission denied",
		Fix: checks.Target(
			checks.Say(kubefacts.GetKubeconfig+" Install it where the runner loads it, readable by the runner's user alone (CLUSTER.kubeconfig.yaml is the file getKubeconfig returned):"),
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
			// executors/kubernetes/kubernetes.go Prepare, v19.3.0: fmt.Errorf("creating Kubernetes
			// client: %w", err), kubernetes.NewForConfig's refusal of the TLS material
			// (client-go v0.37.2 transport/transport.go TLSConfigFor).
			"creating Kubernetes client: ",
		},
		Signs: []checks.Sign{
			// client-go refuses its own TLS material, at the handshake when the certificate and key
			// are files (crypto/tls's X509KeyPair: "tls: private key does not match public key",
			// "PEM inputs may have been switched"; transport.go: "unable to load root
			// certificates", "specifying a root certificates file with the insecure flag is not
			// allowed"), behind the executor's first API call.
			{Endpoints: []string{checks.EndpointAPIServer, checks.EndpointNone}, Causes: []string{checks.CauseTLSMaterial}},
		},
	},
	Requires:  []checks.Node{kubefacts.KubeconfigFact, kubefacts.EffectiveClustersFact, hostfacts.RunAsFact, configfacts.ConfigFact, kubefacts.FixScopeFact, hostfacts.AudienceFact},
	Executors: []string{checks.Kubernetes},
	Run:       run,
}

func run(p *checks.Pass) error {
	k := kubefacts.KubeconfigFact.Get(p)
	if len(k.Files) == 0 {
		if k.EnvUnknown {
			return fmt.Errorf("no kubeconfig to examine: %s", k.None)
		}
		return checks.Skip("no kubeconfig to examine: %s", k.None)
	}
	// The runners the kubeconfig is for: those whose cluster it chose, as
	// effective-cluster decides (getKubeClientConfig, executors/kubernetes/
	// util.go, gitlab-runner v19.3.0): a runner with host set, or whose
	// in-cluster config succeeds, never reads it, and the file is not
	// judged for it. Without a config.toml that decodes, the kubeconfig's
	// current-context is judged.
	c := configfacts.ConfigFact.Get(p)
	readers := kubeconfigReaders(kubefacts.EffectiveClustersFact.Get(p))
	if (c.Decoded() || p.Env.KubeconfigPath != "") && len(readers) == 0 {
		return checks.Skip("no runner reads the kubeconfig (%s): each Kubernetes runner's cluster is chosen by its host or by in-cluster config", k.Source)
	}
	proc := hostfacts.RunAsFact.Get(p)
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
	scope := kubefacts.FixScopeFact.Get(p)
	// client-go skips a missing file of the list without a word
	// (ClientConfigLoadingRules.Load, tools/clientcmd/loader.go, v0.37.2:
	// "if os.IsNotExist(err) { // skip missing files"), so a missing file
	// is no fault while another loads; with every file missing there is
	// nothing to load at all.
	var missing []*kubefacts.KubeFile
	for _, f := range k.Files {
		if errors.Is(f.Err, os.ErrNotExist) {
			missing = append(missing, f)
		}
	}
	if len(missing) == len(k.Files) {
		reportAllMissing(p, missing, proc, scope, src)
		return done()
	}
	for _, f := range k.Files {
		if errors.Is(f.Err, os.ErrNotExist) {
			continue
		}
		if err := hostfacts.DoctorCannotRead(p.Env, f.Path, f.Err, proc); err != nil {
			cannot = err
			continue
		}
		examineFile(p, f, proc, scope, src)
	}
	if k.MergeErr != nil || k.Merged == nil {
		return done() // reported per file above
	}
	src = loadedEvidence(k)
	if len(readers) == 0 {
		examineContext(p, kubefacts.ResolveContext(k, p.Env.ContextOverride), nil, scope, src)
		return done()
	}
	for _, r := range readers {
		examineContext(p, r.kube, r.ref, scope, src)
	}
	return done()
}

// reader is one runner whose cluster the kubeconfig chose, and the context
// it takes.
type reader struct {
	ref  *checks.RunnerRef
	kube *kubefacts.KubeContext
}

func kubeconfigReaders(rcs []*kubefacts.RunnerCluster) []reader {
	var out []reader
	for _, rc := range rcs {
		if k := rc.Cluster.Kube(); k != nil {
			out = append(out, reader{ref: rc.Ref, kube: k})
		}
	}
	return out
}

// loadedEvidence names the files client-go loaded, and those of the list
// it skipped: a context, a cluster or a user may be in any loaded file, and
// a skipped one may be where the operator meant it to be.
func loadedEvidence(k *kubefacts.Kubeconfig) checks.Evidence {
	var loaded, skipped []string
	for _, f := range k.Files {
		if errors.Is(f.Err, os.ErrNotExist) {
			skipped = append(skipped, f.Path)
			continue
		}
		loaded = append(loaded, f.Path)
	}
	d := "path list from " + k.Source + "; client-go loads " + strings.Join(loaded, ", ")
	if len(skipped) > 0 {
		d += "; it skips " + strings.Join(skipped, ", ") + ", which does not exist"
	}
	return checks.Evidence{Source: "kubeconfig", Detail: d}
}

// reportAllMissing is the list whose every file is missing: client-go
// loads nothing, and every job fails.
func reportAllMissing(p *checks.Pass, missing []*kubefacts.KubeFile, proc *hostfacts.RunAs, scope *kubefacts.FixScope, src checks.Evidence) {
	f := missing[0]
	cause := fmt.Sprintf("The kubeconfig %s does not exist: client-go skips a missing file without a word, and with "+
		"nothing else to load every job fails with `invalid configuration: no configuration has been provided`.", f.Path)
	ev := []checks.Evidence{src}
	if len(missing) > 1 {
		var paths []string
		for _, m := range missing {
			paths = append(paths, m.Path)
		}
		cause = fmt.Sprintf("None of the kubeconfig files the runner's list names exists (%s): client-go skips each missing file "+
			"without a word, and with nothing to load every job fails with `invalid configuration: no configuration has been provided`.", strings.Join(paths, ", "))
	}
	for _, m := range missing {
		ev = append(ev, checks.Evidence{Source: m.Path, Detail: errText(m.Err)})
	}
	p.Report(checks.Finding{Cause: cause, Evidence: ev, Fix: installFix(p, f, proc, scope)})
}

// examineFile reports what is wrong with one file of the list that exists.
func examineFile(p *checks.Pass, f *kubefacts.KubeFile, proc *hostfacts.RunAs, scope *kubefacts.FixScope, src checks.Evidence) {
	if f.Err != nil {
		cause := fmt.Sprintf("The kubeconfig %s cannot be loaded: %v; client-go's load fails, and so does every job.", f.Path, errText(f.Err))
		p.Report(checks.Finding{Cause: cause, Evidence: []checks.Evidence{src, {Source: f.Path, Detail: errText(f.Err)}},
			Fix: installFix(p, f, proc, scope)})
		return
	}
	if f.ParseErr != nil {
		p.Report(checks.Finding{
			Cause:    fmt.Sprintf("The kubeconfig %s does not parse: client-go's load fails, and so does every job.", f.Path),
			Evidence: []checks.Evidence{src, {Source: f.Path, Detail: f.ParseErr.Error()}},
			Fix:      kubefacts.InstallKubeconfig(scope, f.Path, proc),
		})
	}
	mode := f.Stat.Mode().Perm()
	if proc != nil && proc.UIDKnown {
		if blocked := hostfacts.Denied(p.Env, f.Path, f.Stat, proc, hostfacts.Read); len(blocked) > 0 {
			ev := []checks.Evidence{src}
			var changes []kubefacts.Change
			for _, b := range blocked {
				ev = append(ev, b.Evidence())
				want := "0700"
				if b.Path == f.Path {
					want = "0600"
				}
				changes = append(changes, kubefacts.Change{Path: b.Path, Mode: want, Chown: true})
			}
			// A directory the runner cannot enter hides a file it could read:
			// the fix names every component in the way, not only the file.
			p.Report(checks.Finding{
				Cause: fmt.Sprintf("The runner's user (%s) cannot read %s (blocked at %s): client-go fails "+
					"to load it and every job fails.", proc.Label(), f.Path, hostfacts.BlockerPaths(blocked)),
				Evidence: ev,
				Fix:      checks.Steps{checks.Say("Give the file to the runner's user, and every directory in the way:"), kubefacts.ChangeFix(scope, proc.Owner(), changes...)},
			})
		}
	}
	// Who else may read it (hostfacts.Audience): any local user, the group's
	// other members, the other processes of the runner's container; a
	// group nobody else is in lets nobody else in.
	if x := hostfacts.AudienceFact.Get(p).Let(f.Stat, proc, hostfacts.Read); x != nil {
		p.Report(checks.Finding{
			Severity: checks.Warning,
			Cause: fmt.Sprintf("%s has mode %04o: %s can read it, and its key is cluster-admin "+
				"in the tenant cluster.", f.Path, mode, x.Who),
			Evidence: []checks.Evidence{src, {Source: f.Path, Detail: fmt.Sprintf("mode %04o owner %d:%d", mode, f.Owner, f.Group)}},
			Fix:      checks.Steps{kubefacts.ChangeFix(scope, "", kubefacts.Change{Path: f.Path, Mode: "0600"})},
		})
	}
	if f.DirStat != nil && f.DirMode&0o077 != 0 {
		dir := path.Dir(f.Path)
		p.Report(checks.Finding{
			Severity: checks.Warning,
			Cause:    fmt.Sprintf("%s, the kubeconfig's directory, has mode %04o: wider than 0700, so others can list it and reach the cluster-admin key if the file's mode ever widens.", dir, f.DirMode),
			Evidence: []checks.Evidence{{Source: dir, Detail: fmt.Sprintf("mode %04o", f.DirMode)}},
			Fix:      checks.Steps{kubefacts.ChangeFix(scope, "", kubefacts.Change{Path: dir, Mode: "0700"})},
		})
	}
}

// examineContext reports what is wrong with one runner's context (runner
// nil: the current-context, when config.toml names no runner). A finding
// names the file client-go took the part from (LocationOfOrigin of its
// merge, first file wins), not the list's first file.
func examineContext(p *checks.Pass, k *kubefacts.KubeContext, runner *checks.RunnerRef, scope *kubefacts.FixScope, src checks.Evidence) {
	report := func(f checks.Finding) {
		f.Runner = runner
		p.Report(f)
	}
	loaded := strings.Join(loadedFiles(k.Kubeconfig), ", ")
	origin := k.Origins(p.Env)
	if k.ContextName == "" {
		report(checks.Finding{
			Cause:    "The kubeconfig has no current-context and config.toml names no context: client-go has no cluster to talk to, and every job fails with `invalid configuration: no configuration has been provided`.",
			Evidence: []checks.Evidence{src, {Source: loaded, Detail: fmt.Sprintf("current-context empty; contexts: %s", contextNames(k.Kubeconfig))}},
			Fix:      useContext(k, scope),
		})
		return
	}
	if k.Context == nil {
		report(checks.Finding{
			Cause:    fmt.Sprintf("The context %q does not exist in the kubeconfig: client-go fails with `context was not found for specified context: %s`.", k.ContextName, k.ContextName),
			Evidence: []checks.Evidence{src, {Source: loaded, Detail: "contexts: " + contextNames(k.Kubeconfig)}},
			Fix:      checks.Text("Name an existing context in config.toml's context key or the kubeconfig's current-context."),
		})
		return
	}
	if k.Cluster == nil {
		report(checks.Finding{
			Cause:    fmt.Sprintf("The context %q names cluster %q, which the kubeconfig does not define. client-go took the context from %s.", k.ContextName, k.Context.Cluster, origin.Context),
			Evidence: []checks.Evidence{src, {Source: origin.Context, Detail: fmt.Sprintf("contexts.%s.cluster: %s; clusters: %s", k.ContextName, k.Context.Cluster, clusterNames(k.Kubeconfig))}},
			Fix:      checks.Text("Download the kubeconfig again from getKubeconfig."),
		})
		return
	}
	// Printed without its userinfo: a server URL can carry a password.
	server := redact.StripUserinfo(k.Cluster.Server)
	at := checks.Evidence{Source: origin.Cluster, Detail: "clusters." + k.Context.Cluster + ".server: " + server}
	u, err := url.Parse(k.Cluster.Server)
	badServer := err != nil || u.Host == ""
	switch {
	case badServer:
		report(checks.Finding{
			Cause:    fmt.Sprintf("The cluster %q has server %q, which is not a URL client-go can use.", k.Context.Cluster, server),
			Evidence: []checks.Evidence{src, at},
			Fix:      checks.Text("Download the kubeconfig again from getKubeconfig; its server is the kcp mount URL."),
		})
	case u.Scheme != "https":
		report(checks.Finding{
			Cause:    fmt.Sprintf("The cluster %q has server %s, which is not https: the client certificate cannot be presented and nothing verifies the server.", k.Context.Cluster, server),
			Evidence: []checks.Evidence{src, at},
			Fix:      checks.Text("Use the https kcp mount URL getKubeconfig returns."),
		})
	case !kubefacts.KcpMountPath.MatchString(u.Path):
		report(checks.Finding{
			Severity: checks.Info,
			Cause:    fmt.Sprintf("The server %s is not of the kcp mount form https://<kcp front>/clusters/root:<accountHash>:<cluster>:clusters: this kubeconfig did not come from getKubeconfig, or it was edited.", server),
			Evidence: []checks.Evidence{at},
			Fix:      checks.Text("None if this cluster is meant; otherwise use the kubeconfig getKubeconfig returned."),
		})
	}
	examineCredentials(p, k, origin, report, scope, src, badServer)
}

// examineCredentials asks client-go what it makes of the context's cluster
// and user (kubefacts.KubeconfigTransport): a file the context names that the
// runner cannot read as client-go reads it (missing, unreadable, too large,
// or not a regular file: a FIFO blocks client-go's open, /dev/zero its read
// of tokenFile without end), or client-go's refusal of what it read, in its
// words, at the stage it refuses.
// badServer: the server finding was reported, and ClientConfig's refusal
// of the same server ("no server found for cluster") would say it again.
func examineCredentials(p *checks.Pass, k *kubefacts.KubeContext, origin kubefacts.Origins, report func(checks.Finding), scope *kubefacts.FixScope, src checks.Evidence, badServer bool) {
	t := kubefacts.KubeconfigTransport(k.Kubeconfig.Reader, k.Kubeconfig.Merged, k.ContextName)
	if err := t.ReadErr; err != nil {
		report(checks.Finding{
			Cause: fmt.Sprintf("The context %q names a file client-go cannot use: %v. The runner's client-go reads it when it builds its client, "+
				"and fails, or blocks on a FIFO, or reads a device without end.", k.ContextName, err),
			Evidence: []checks.Evidence{src, {Source: "contexts." + k.ContextName, Detail: err.Error()}},
			Fix:      checks.Text("Point the key at a regular file the runner's user can read, or embed the file in the kubeconfig (the key's -data form): download the kubeconfig again from getKubeconfig."),
		})
		return
	}
	if t.Err == nil || badServer && t.Stage == kubefacts.StageClientConfig {
		return
	}
	cluster := aboutCluster(t)
	part, file := "user "+strconv.Quote(k.Context.AuthInfo), origin.User
	if cluster {
		part, file = "cluster "+strconv.Quote(k.Context.Cluster), origin.Cluster
	}
	material := describeMaterial(p, k, cluster)
	var cause string
	switch t.Stage {
	case kubefacts.StageClientConfig:
		cause = fmt.Sprintf("client-go refuses the context %q when it loads the runner's client config: %v. Every job fails with `%s`.", k.ContextName, t.Err, t.JobLogWords())
	case kubefacts.StageNewClient:
		cause = fmt.Sprintf("client-go refuses to build the runner's client from the context %q: %v. Every job fails with `%s`.", k.ContextName, t.Err, t.JobLogWords())
	default:
		cause = fmt.Sprintf("client-go builds the runner's client from the context %q, and then every TLS handshake with the apiserver fails: %v. "+
			"Every job fails at its first call to the API (`%s`).", k.ContextName, t.Err, t.JobLogWords())
	}
	report(checks.Finding{
		Cause:    cause,
		Evidence: []checks.Evidence{src, {Source: file, Detail: part + ": " + material}},
		Fix:      credentialFix(p, k, t, origin, scope),
	})
}

// aboutCluster says client-go's error is about the cluster's part (its CA
// and insecure-skip-tls-verify), not the user's (client certificate and
// key), as client-go words them (transport/transport.go, tools/clientcmd/
// validation.go, v0.37.2).
func aboutCluster(t *kubefacts.Transport) bool {
	msg := t.Err.Error()
	for _, w := range []string{"root certificates", "certificate-authority", "x509: certificate signed by unknown authority"} {
		if strings.Contains(msg, w) {
			return true
		}
	}
	return false
}

// describeMaterial says how the context's cluster (or user) carries its TLS
// material: which keys are set, files by path, inline data by its key;
// never a byte of it.
func describeMaterial(p *checks.Pass, k *kubefacts.KubeContext, cluster bool) string {
	var parts []string
	add := func(key, path string, data []byte) {
		switch {
		case path != "" && len(data) > 0:
			parts = append(parts, fmt.Sprintf("%s %s and %s-data", key, kubefacts.HostPath(p.Env, path), key))
		case path != "":
			parts = append(parts, key+" "+kubefacts.HostPath(p.Env, path))
		case len(data) > 0:
			parts = append(parts, key+"-data")
		}
	}
	c, u := k.Cluster, k.AuthInfo
	if cluster && c != nil {
		if c.InsecureSkipTLSVerify {
			parts = append(parts, "insecure-skip-tls-verify: true")
		}
		add("certificate-authority", c.CertificateAuthority, c.CertificateAuthorityData)
	}
	if !cluster && u != nil {
		add("client-certificate", u.ClientCertificate, u.ClientCertificateData)
		add("client-key", u.ClientKey, u.ClientKeyData)
	}
	if len(parts) == 0 {
		return "no TLS material"
	}
	return strings.Join(parts, ", ")
}

// credentialFix is what ends the refusal: insecure-skip-tls-verify beside
// a CA is a setting to remove (client-go takes one or the other); the rest
// is material that is not the pair and CA getKubeconfig issued, which a new
// download replaces.
func credentialFix(p *checks.Pass, k *kubefacts.KubeContext, t *kubefacts.Transport, origin kubefacts.Origins, scope *kubefacts.FixScope) checks.Steps {
	if k.Cluster != nil && k.Cluster.InsecureSkipTLSVerify && strings.Contains(t.Err.Error(), "insecure flag") {
		say := fmt.Sprintf("Remove insecure-skip-tls-verify from the cluster %q in %s: the CA verifies the apiserver, and client-go refuses to be given both", k.Context.Cluster, origin.Cluster)
		if strings.Contains(k.Context.Cluster, ".") {
			// kubectl config unset splits its property path at dots.
			return checks.Text(say + ".")
		}
		if err := scope.Path(origin.Cluster); err != nil {
			return checks.Steps{checks.Say(say + "."), checks.Withheld(err)}
		}
		return checks.Steps{checks.Say(say + ":"), checks.Commands(fixcode.Command("kubectl", "--kubeconfig", origin.Cluster,
			"config", "unset", "clusters."+k.Context.Cluster+".insecure-skip-tls-verify").Sudo())}
	}
	return checks.Steps{checks.Say("The certificate, its key and the CA must be the ones getKubeconfig issued together, each of its PEM type " +
		"(CERTIFICATE; a PRIVATE KEY of the certificate's public key). " + kubefacts.GetKubeconfig +
		" Install it over " + origin.User + ", or point the keys at the files of that download.")}
}

// loadedFiles are the files of the list client-go loaded: all but the
// missing ones it skips.
func loadedFiles(k *kubefacts.Kubeconfig) []string {
	var out []string
	for _, f := range k.Files {
		if !errors.Is(f.Err, os.ErrNotExist) {
			out = append(out, f.Path)
		}
	}
	return out
}

func clusterNames(k *kubefacts.Kubeconfig) string {
	var names []string
	for n := range k.Merged.Clusters {
		names = append(names, n)
	}
	if len(names) == 0 {
		return "none"
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// installFix installs a kubeconfig where the runner looks, for its user:
// its directory made first when it does not exist (install -d re-owns one
// that does, so an existing directory is left as it is).
func installFix(p *checks.Pass, f *kubefacts.KubeFile, ra *hostfacts.RunAs, scope *kubefacts.FixScope) checks.Steps {
	say := checks.Say(kubefacts.GetKubeconfig + " Save it as new.kubeconfig.yaml and install it where the runner loads it, readable by the runner's user alone:")
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
func useContext(k *kubefacts.KubeContext, scope *kubefacts.FixScope) checks.Steps {
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
	// The first file client-go loads: its current-context wins the merge.
	file := loadedFiles(k.Kubeconfig)[0]
	if err := scope.Path(file); err != nil {
		return checks.Steps{checks.Say(say + ", or download the kubeconfig again from getKubeconfig."), checks.Withheld(err)}
	}
	return checks.Steps{checks.Say(say + ", or download the kubeconfig again from getKubeconfig:"),
		checks.Commands(fixcode.Command("kubectl", "--kubeconfig", file, "config", "use-context", names[0]).Sudo())}
}

func contextNames(k *kubefacts.Kubeconfig) string {
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
