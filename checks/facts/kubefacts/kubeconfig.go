package kubefacts

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"strings"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts/configfacts"
	"github.com/socialwebcomputer/doctor/checks/facts/hostfacts"
	"github.com/socialwebcomputer/doctor/internal/fixcode"
	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/internal/redact"
)

// KubeFile is one file of the kubeconfig path list.
type KubeFile struct {
	Path     string      // host path
	Stat     fs.FileInfo // nil when missing or unreadable by doctor
	Owner    int         // uid, -1 when unknown
	Group    int
	DirMode  fs.FileMode // the parent directory's permission bits
	DirStat  fs.FileInfo
	Err      error // missing, not a file, too large, unreadable
	ParseErr error // read, but not a kubeconfig
	// RunnerDenied is set when the runner may not read the file: doctor
	// did not read it either (RunnerReader).
	RunnerDenied *hostfacts.RunnerDeniedError
	Parsed       *clientcmdapi.Config // nil unless it parsed
}

// Kubeconfig is what client-go's default loading rules give the runner
// process: KUBECONFIG from its environment as a path list, else
// ~/.kube/config of its $HOME, merged first-wins. Each runner then picks its
// context (KubeContext).
type Kubeconfig struct {
	Source string // how the path list was found, for evidence
	// None says why there is nothing to examine (no KUBECONFIG and no
	// ~/.kube/config); Files is then empty. EnvUnknown says it is because
	// the runner's environment could not be known.
	None       string
	EnvUnknown bool
	Files      []*KubeFile
	// Merged is the merge client-go makes; MergeErr is the error the runner's
	// own load would return (an unparseable file fails it whole).
	Merged   *clientcmdapi.Config
	MergeErr error
	// Reader reads the kubeconfig and the files it names as the runner's
	// client-go reads them; as doctor when the operator named it
	// (--kubeconfig).
	Reader hostfacts.RunnerReader
}

// KubeconfigFact loads the kubeconfig as the runner process would; it is
// the process's, shared by all its runners.
var KubeconfigFact = &checks.Fact[*Kubeconfig]{
	ID:       "kubeconfig",
	Doc:      "the kubeconfig files the runner's client-go would load, each parsed, and their merge",
	Requires: []checks.Node{hostfacts.RunAsFact, hostfacts.EnvironFact},
	Compute: func(p *checks.Pass) (*Kubeconfig, error) {
		k := &Kubeconfig{Reader: hostfacts.RunnerReader{Env: p.Env, RA: hostfacts.RunAsFact.Get(p)}}
		if p.Env.KubeconfigPath != "" {
			k.Reader.RA = nil // the operator's file, read as doctor
		}
		paths := kubeconfigPaths(p.Env, hostfacts.RunAsFact.Get(p), hostfacts.EnvironFact.Get(p), k)
		if len(paths) == 0 {
			return k, nil
		}
		var loadable []string
		for _, hp := range paths {
			f := statKubeFile(p.Env, hp)
			k.Files = append(k.Files, f)
			if errors.Is(f.Err, os.ErrNotExist) {
				continue // client-go skips missing files silently
			}
			if f.Err == nil {
				f.Parsed, f.Err, f.ParseErr = LoadKubeconfig(k.Reader, hp)
			}
			var denied *hostfacts.RunnerDeniedError
			if errors.As(f.Err, &denied) {
				// Not read: the runner may not. kubeconfig-file says so from
				// the file's mode, as for any file; the runner's load fails
				// as client-go reports it ("error loading config file
				// \"%s\": %v", ClientConfigLoadingRules.Load,
				// tools/clientcmd/loader.go, v0.37.2).
				f.Err, f.RunnerDenied = nil, denied
				k.MergeErr = fmt.Errorf("error loading config file %q: %w", hp, denied)
				continue
			}
			switch {
			case f.Err != nil:
				k.MergeErr = f.Err
			case f.ParseErr != nil:
				k.MergeErr = &hostio.FileError{Path: hp, Err: f.ParseErr}
			default:
				loadable = append(loadable, hp)
			}
		}
		if k.MergeErr != nil {
			return k, nil
		}
		merged, err := mergeKubeconfigs(p.Env, loadable)
		if err != nil {
			k.MergeErr = redact.QuotesDescribed(err)
			return k, nil
		}
		k.Merged = merged
		return k, nil
	},
}

// mergeKubeconfigs is client-go's own merge of the files (first wins), with
// their relative paths resolved against where each file is as the runner
// names it. client-go opens the files by name, so under --root it is given
// each file's path with its symlinks resolved inside the root
// (hostio.JoinInRoot), and the origin it records is then set back to the
// name the runner uses before client-go resolves the relative paths: a
// kubeconfig symlinked elsewhere still resolves ./client.key beside its
// link, as the runner's client-go does.
func mergeKubeconfigs(env *hostio.Env, hosts []string) (*clientcmdapi.Config, error) {
	rules := &clientcmd.ClientConfigLoadingRules{DoNotResolvePaths: true}
	origin := map[string]string{}
	for _, hp := range hosts {
		at, err := hostio.JoinInRoot(env.Root, hp)
		if err != nil {
			return nil, &hostio.FileError{Path: hp, Err: hostio.FileCause(err)}
		}
		rules.Precedence = append(rules.Precedence, at)
		origin[at] = env.Path(hp)
	}
	merged, err := rules.Load()
	if err != nil {
		return nil, err
	}
	for _, c := range merged.Clusters {
		c.LocationOfOrigin = origin[c.LocationOfOrigin]
	}
	for _, u := range merged.AuthInfos {
		u.LocationOfOrigin = origin[u.LocationOfOrigin]
	}
	for _, c := range merged.Contexts {
		c.LocationOfOrigin = origin[c.LocationOfOrigin]
	}
	if err := clientcmd.ResolveLocalPaths(merged); err != nil {
		return nil, err
	}
	return merged, nil
}

// LoadKubeconfig reads the kubeconfig at host path hp (as r's reader may)
// and decodes it as
// client-go does (clientcmd.Load), through hostio.Decode: a file that does
// not decode is described in a bundle, never copied. readErr is the read's
// error; parseErr the decoder's, its quoted values described (a decode
// error can quote a token: no kind "<the token>").
func LoadKubeconfig(r hostfacts.RunnerReader, hp string) (cfg *clientcmdapi.Config, readErr, parseErr error) {
	data, err := r.Read(hp, hostio.KindKubeconfig)
	if err != nil {
		return nil, err, nil
	}
	if f := hostio.Decode(r.Env, hp, func() *hostio.DecodeFailure {
		c, err := clientcmd.Load(data)
		if err != nil {
			return &hostio.DecodeFailure{Err: redact.QuotesDescribed(err)}
		}
		cfg = c
		return nil
	}); f != nil {
		return nil, nil, f.Err
	}
	return cfg, nil, nil
}

// KubeContext is the context one runner uses: [runners.kubernetes] context
// when set (the executor passes it to client-go as CurrentContext), else the
// merged kubeconfig's current-context.
type KubeContext struct {
	Kubeconfig  *Kubeconfig
	ContextName string
	// Overridden says the name came from config.toml's context key.
	Overridden bool
	Context    *clientcmdapi.Context
	Cluster    *clientcmdapi.Cluster
	AuthInfo   *clientcmdapi.AuthInfo
}

// ResolveContext picks a runner's context from the merged kubeconfig.
func ResolveContext(k *Kubeconfig, override string) *KubeContext {
	t := &KubeContext{Kubeconfig: k}
	if k.Merged == nil {
		return t
	}
	t.ContextName = k.Merged.CurrentContext
	if override != "" {
		t.ContextName, t.Overridden = override, true
	}
	if t.ContextName != "" {
		t.Context = k.Merged.Contexts[t.ContextName]
		if t.Context != nil {
			t.Cluster = k.Merged.Clusters[t.Context.Cluster]
			t.AuthInfo = k.Merged.AuthInfos[t.Context.AuthInfo]
		}
	}
	return t
}

// KubeContextFact is each Kubernetes runner's context in the process's kubeconfig.
var KubeContextFact = &checks.Fact[*KubeContext]{
	ID:       "kube-context",
	Doc:      "the kubeconfig context, cluster and user one runner uses",
	Requires: []checks.Node{KubeconfigFact, configfacts.RunnerEntryFact},
	Compute: func(p *checks.Pass) (*KubeContext, error) {
		return ResolveContext(KubeconfigFact.Get(p), ContextFor(p.Env, configfacts.RunnerEntryFact.Get(p).Runner)), nil
	},
}

func kubeconfigPaths(env *hostio.Env, ra *hostfacts.RunAs, e *hostfacts.Environ, k *Kubeconfig) []string {
	if env.KubeconfigPath != "" {
		k.Source = "--kubeconfig given to doctor"
		return splitKubeconfig(env.KubeconfigPath)
	}
	if e.Err != nil {
		k.EnvUnknown = true
		k.None = "the runner's environment is unknown (" + e.Err.Error() + ")" + e.AccessHint() + "; give --kubeconfig"
		return nil
	}
	if v, ok := e.Lookup("KUBECONFIG"); ok && v != "" {
		k.Source = "KUBECONFIG in " + e.Where("KUBECONFIG")
		// client-go opens a relative entry from the runner's working
		// directory (it changes to --working-directory at start), never
		// from the operator's: the fact holds it resolved there.
		paths := splitKubeconfig(v)
		for i, p := range paths {
			paths[i] = hostfacts.AbsIn(ra.Cwd, p)
		}
		return paths
	}
	file, how := ra.KubeHome()
	if _, err := env.Stat(file); err != nil {
		k.None = fmt.Sprintf("KUBECONFIG is not in %s and %s does not exist (%s)", e.Source, file, how)
		return nil
	}
	k.Source = how + " (KUBECONFIG is not set)"
	return []string{file}
}

// splitKubeconfig splits a path list as client-go does: empty entries and
// repeats dropped.
func splitKubeconfig(v string) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range filepath.SplitList(v) {
		if p == "" || seen[p] {
			continue
		}
		seen[p] = true
		out = append(out, p)
	}
	return out
}

func statKubeFile(env *hostio.Env, hp string) *KubeFile {
	f := &KubeFile{Path: hp, Owner: -1, Group: -1}
	st, err := env.Stat(hp)
	if err != nil {
		f.Err = err
		return f
	}
	f.Stat = st
	f.Owner, f.Group = hostfacts.Ownership(st)
	if st.IsDir() {
		f.Err = &hostio.FileError{Path: hp, Err: fmt.Errorf("is a directory")}
	}
	if dst, err := env.Stat(path.Dir(hp)); err == nil {
		f.DirStat, f.DirMode = dst, dst.Mode().Perm()
	}
	return f
}

// Kubectl is the kubectl command aimed at the cluster this runner uses:
// the kubeconfig files its client-go loads (KUBECONFIG=, a path list, as
// the runner's environment gives it, or --kubeconfig given to doctor) and
// its context (config.toml's context, --context, else the files'
// current-context, named). Pasted in a shell whose own kubeconfig or
// current context is another cluster's, it still acts on the runner's.
// Without kubeconfig files (an in-cluster runner, an unknown environment)
// it is kubectl with the context alone, if any.
func (t *KubeContext) Kubectl() fixcode.Cmd {
	cmd := fixcode.Command("kubectl")
	if t.Kubeconfig != nil && len(t.Kubeconfig.Files) > 0 {
		paths := make([]string, len(t.Kubeconfig.Files))
		for i, f := range t.Kubeconfig.Files {
			paths[i] = f.Path
		}
		cmd = cmd.Env("KUBECONFIG", fixcode.Data(strings.Join(paths, ":")))
	}
	if t.ContextName != "" {
		cmd = cmd.Arg("--context", t.ContextName)
	}
	if runsPlugin(t.AuthInfo) {
		// kubectl would run the plugin the runner's kubeconfig names, as
		// whoever pastes the fix: a file the runner's user can write
		// would run its code as the operator.
		cmd = cmd.Refuse(&fixcode.Refusal{Why: "the runner's kubeconfig authenticates with a credential plugin (exec or auth-provider), " +
			"which kubectl would run as whoever pastes this; run the command with a kubeconfig of your own"})
	}
	return cmd
}

// GetKubeconfig is where a new kubeconfig comes from (the guide,
// runner-gateway-cluster: "getKubeconfig returns one kubeconfig file";
// "Rotation is downloading a new kubeconfig and overwriting the file").
// The request's form is in the gateway's README, not in doctor's specs.
const GetKubeconfig = "The cluster's owner downloads a new kubeconfig with the gateway's getKubeconfig call " +
	"(https://k8s.socialweb.computer; the gateway's README, \"Use the hosted gateway\"), with the lifetime wanted " +
	"(at most 24 hours, or none for a long-lived runner)."

// InstallKubeconfig is the renewal's steps: download, then install over
// file, owned by the runner's user when it is known, mode 0600. A file
// that is not the runner's own (FixScope) gets no command.
func InstallKubeconfig(scope *FixScope, file string, ra *hostfacts.RunAs) checks.Steps {
	say := checks.Say(GetKubeconfig + " Save it as new.kubeconfig.yaml and install it over the file the runner loads; nothing else in the runner changes:")
	if err := scope.Path(file); err != nil {
		return checks.Steps{say, checks.Withheld(err)}
	}
	install := fixcode.Command("install", "-m", "0600")
	if ra != nil && ra.UIDKnown && ra.User != "" {
		install = install.Arg("-o", ra.User)
	}
	return checks.Steps{say, checks.Commands(install.Arg("./new.kubeconfig.yaml", file).Sudo())}
}

// runsPlugin says whether a kubeconfig user gets its credential from a
// program: an exec plugin or an auth-provider. The exec field is read by
// name: cmd/doctor/app/bundle keeps the values of the config.toml fields the
// checks select (x.Exec would be [runners.kubernetes]'s lifecycle exec,
// whose commands a bundle must not keep).
func runsPlugin(ai *clientcmdapi.AuthInfo) bool {
	if ai == nil {
		return false
	}
	return !reflect.ValueOf(ai).Elem().FieldByName("Exec").IsNil() || ai.AuthProvider != nil
}

// Origins are the files client-go took a context's parts from: its merge
// keeps, of each context, cluster and user, the first file of the list that
// defines it (LocationOfOrigin, tools/clientcmd/loader.go, v0.37.2), which
// need not be the list's first file nor the same file for each part. Each
// is a host path, "" for a part the kubeconfig does not define.
type Origins struct {
	Context, Cluster, User string
}

// Origins names the files of k's context, cluster and user.
func (k *KubeContext) Origins(env *hostio.Env) Origins {
	var o Origins
	if k.Context != nil && k.Context.LocationOfOrigin != "" {
		o.Context = hostPath(env, k.Context.LocationOfOrigin)
	}
	if k.Cluster != nil && k.Cluster.LocationOfOrigin != "" {
		o.Cluster = hostPath(env, k.Cluster.LocationOfOrigin)
	}
	if k.AuthInfo != nil && k.AuthInfo.LocationOfOrigin != "" {
		o.User = hostPath(env, k.AuthInfo.LocationOfOrigin)
	}
	return o
}

// HostPath is a path client-go resolved under --root, as the host names it.
func HostPath(env *hostio.Env, p string) string { return hostPath(env, p) }
