package kubefacts

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts/hostfacts"
	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/testkit/testpki"
)

// oracleEnv marks the child TestKubeconfigAgreesWithClientGo starts: it
// runs the runner's own choice of client config and prints it.
const oracleEnv = "DOCTOR_FACTS_KUBE_ORACLE"

// choice is what a client config comes to, compared field by field: the
// server, and the bytes of each credential file (never their paths, which
// differ between the two trees), or the failure.
type choice struct {
	Failed bool
	Host   string
	CA     string
	Cert   string
	Key    string
	Token  string
	// The files the merge took the context, its cluster and its user
	// from (LocationOfOrigin), as the host names them: what a finding
	// names as "the kubeconfig".
	ContextFrom, ClusterFrom, UserFrom string
}

// TestKubeClientOracle is the child's body, not a test: the runner's
// guessClientConfig and loadDefaultKubectlConfig, verbatim
// (executors/kubernetes/util.go, gitlab-runner v19.3.0), against client-go's
// own loader and rest.InClusterConfig on the real filesystem, with this
// process's environment and working directory as the runner's.
func TestKubeClientOracle(t *testing.T) {
	if os.Getenv(oracleEnv) == "" {
		return
	}
	ctxName := os.Getenv(oracleEnv + "_CONTEXT")
	var origins choice
	cfg, err := rest.InClusterConfig() // "Try in cluster config first"
	if err != nil {
		cmdConfig, lerr := clientcmd.NewDefaultClientConfigLoadingRules().Load()
		if lerr != nil {
			cfg, err = nil, lerr
		} else if ctxName != "" {
			cfg, err = clientcmd.NewNonInteractiveClientConfig(*cmdConfig, ctxName, &clientcmd.ConfigOverrides{}, clientcmd.NewDefaultClientConfigLoadingRules()).ClientConfig()
		} else {
			cfg, err = clientcmd.NewDefaultClientConfig(*cmdConfig, &clientcmd.ConfigOverrides{}).ClientConfig()
		}
		if lerr == nil {
			origins = originsOf(cmdConfig, ctxName, os.Getenv(oracleEnv+"_ROOT"))
		}
	}
	out := choice{Failed: err != nil}
	if err == nil {
		out = configChoice(t, cfg, func(p string) []byte {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatalf("the oracle's config names %s, unreadable: %v", p, err)
			}
			return b
		})
	}
	out.ContextFrom, out.ClusterFrom, out.UserFrom = origins.ContextFrom, origins.ClusterFrom, origins.UserFrom
	json.NewEncoder(os.Stdout).Encode(out)
	os.Exit(0)
}

// originsOf is the files client-go's merge took the context's parts from,
// with root (the oracle's tree) removed: client-go's own LocationOfOrigin,
// a relative one (~/.kube/config of a runner without HOME is .kube/config)
// joined to the working directory it is relative to.
func originsOf(cfg *clientcmdapi.Config, ctxName, root string) choice {
	var c choice
	cwd, _ := os.Getwd()
	from := func(loc string) string {
		if !filepath.IsAbs(loc) {
			loc = filepath.Join(cwd, loc)
		}
		return strings.TrimPrefix(loc, root)
	}
	if ctxName == "" {
		ctxName = cfg.CurrentContext
	}
	ctx := cfg.Contexts[ctxName]
	if ctx == nil {
		return c
	}
	c.ContextFrom = from(ctx.LocationOfOrigin)
	if cl := cfg.Clusters[ctx.Cluster]; cl != nil {
		c.ClusterFrom = from(cl.LocationOfOrigin)
	}
	if u := cfg.AuthInfos[ctx.AuthInfo]; u != nil {
		c.UserFrom = from(u.LocationOfOrigin)
	}
	return c
}

func configChoice(t testing.TB, cfg *rest.Config, read func(string) []byte) choice {
	c := choice{Host: cfg.Host, Token: strings.TrimSpace(cfg.BearerToken)}
	for _, f := range []struct {
		file string
		data []byte
		into *string
	}{{cfg.CAFile, cfg.CAData, &c.CA}, {cfg.CertFile, cfg.CertData, &c.Cert}, {cfg.KeyFile, cfg.KeyData, &c.Key}} {
		b := f.data
		if len(b) == 0 && f.file != "" {
			b = read(f.file)
		}
		*f.into = string(b)
	}
	if c.Token == "" && cfg.BearerTokenFile != "" {
		c.Token = strings.TrimSpace(string(read(cfg.BearerTokenFile)))
	}
	return c
}

// kubeLayout is a runner's host: files (a name ending in / is a
// directory), where @ROOT@ in a file's text is the tree's root, the
// runner's environment and working directory, and its context key.
type kubeLayout struct {
	name    string
	files   map[string]string
	env     map[string]string // @ROOT@ in a value too
	cwd     string
	context string
}

const (
	kcA = `apiVersion: v1
kind: Config
clusters:
- name: a
  cluster: {server: "https://127.0.0.1:6443", certificate-authority: ../pki/ca.crt}
users:
- name: a
  user: {client-certificate: a.crt, client-key: a.key}
contexts:
- name: a
  context: {cluster: a, user: a}
- name: b
  context: {cluster: b, user: b}
current-context: a
`
	kcB = `apiVersion: v1
kind: Config
clusters:
- name: b
  cluster: {server: "https://127.0.0.2:6443", certificate-authority: "@ROOT@/etc/pki/ca.crt"}
- name: a
  cluster: {server: "https://127.0.0.9:6443"}
users:
- name: b
  user: {tokenFile: tok}
contexts:
- name: b
  context: {cluster: b, user: b}
current-context: b
`
	// kcC holds parts only: a cluster a of its own, a user a with a token,
	// and a context c; merged after kcA, none of them wins.
	kcC = `apiVersion: v1
kind: Config
clusters:
- name: a
  cluster: {server: "https://127.0.0.7:6443", insecure-skip-tls-verify: true}
- name: c
  cluster: {server: "https://127.0.0.8:6443", insecure-skip-tls-verify: true}
users:
- name: a
  user: {token: C-TOKEN}
contexts:
- name: c
  context: {cluster: c, user: a}
- name: b
  context: {cluster: a, user: a}
`
	kcKind = `apiVersion: v1
kind: Config
clusters:
- name: kind-kind
  cluster: {server: "https://127.0.0.1:41234", insecure-skip-tls-verify: true}
users:
- name: kind-kind
  user: {token: kindtoken}
contexts:
- name: kind-kind
  context: {cluster: kind-kind, user: kind-kind}
current-context: kind-kind
`
)

func kubeAgreementLayouts(t *testing.T) []kubeLayout {
	ca, err := testpki.NewCA("kubernetes", time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	saCA := string(ca.CertPEM)
	pki := map[string]string{
		"/etc/pki/ca.crt":                    "CA",
		"/etc/gitlab-runner/kube/a.crt":      "CERT-A",
		"/etc/gitlab-runner/kube/a.key":      "KEY-A",
		"/etc/gitlab-runner/kube/tok":        "TOKEN-B\n",
		"/etc/gitlab-runner/kube/a.yaml":     kcA,
		"/etc/gitlab-runner/kube/b.yaml":     kcB,
		"/etc/gitlab-runner/kube/c.yaml":     kcC,
		"/etc/gitlab-runner/kube/empty.yaml": "",
		"/home/gitlab-runner/.kube/config":   kcKind,
	}
	with := func(extra map[string]string, drop ...string) map[string]string {
		m := map[string]string{}
		for k, v := range pki {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		for _, d := range drop {
			delete(m, d)
		}
		return m
	}
	sa := map[string]string{
		"/var/run/secrets/kubernetes.io/serviceaccount/token":  "SA-TOKEN",
		"/var/run/secrets/kubernetes.io/serviceaccount/ca.crt": saCA,
	}
	inPod := map[string]string{"KUBERNETES_SERVICE_HOST": "127.0.0.3", "KUBERNETES_SERVICE_PORT": "443"}
	home := "@ROOT@/home/gitlab-runner"
	kube := "@ROOT@/etc/gitlab-runner/kube/"
	return append([]kubeLayout{
		{name: "home file", files: pki, env: map[string]string{"HOME": home}},
		{name: "no kubeconfig at all", files: with(nil, "/home/gitlab-runner/.kube/config"), env: map[string]string{"HOME": home}},
		{name: "list, first file missing", files: pki, env: map[string]string{"HOME": home, "KUBECONFIG": kube + "gone.yaml:" + kube + "a.yaml"}},
		{name: "list, all missing: home not consulted", files: pki, env: map[string]string{"HOME": home, "KUBECONFIG": kube + "gone.yaml"}},
		{name: "list, a directory", files: pki, env: map[string]string{"HOME": home, "KUBECONFIG": kube + ":" + kube + "a.yaml"}},
		{name: "list merged, first wins", files: pki, env: map[string]string{"HOME": home, "KUBECONFIG": kube + "b.yaml:" + kube + "a.yaml"}},
		{name: "list merged, other order", files: pki, env: map[string]string{"HOME": home, "KUBECONFIG": kube + "a.yaml:" + kube + "b.yaml"}},
		{name: "list repeated", files: pki, env: map[string]string{"HOME": home, "KUBECONFIG": kube + "a.yaml:" + kube + "a.yaml"}},
		{name: "KUBECONFIG=:", files: pki, env: map[string]string{"HOME": home, "KUBECONFIG": ":"}},
		{name: "KUBECONFIG empty: home file", files: pki, env: map[string]string{"HOME": home, "KUBECONFIG": ""}},
		{name: "relative cert paths, missing key file", files: with(nil, "/etc/gitlab-runner/kube/a.key"), env: map[string]string{"KUBECONFIG": kube + "a.yaml"}},
		{name: "missing token file", files: with(nil, "/etc/gitlab-runner/kube/tok"), env: map[string]string{"KUBECONFIG": kube + "b.yaml"}},
		{name: "missing CA file", files: with(nil, "/etc/pki/ca.crt"), env: map[string]string{"KUBECONFIG": kube + "a.yaml"}},
		{name: "context key picks another context", files: pki, env: map[string]string{"KUBECONFIG": kube + "a.yaml:" + kube + "b.yaml"}, context: "b"},
		{name: "context key names no context", files: pki, env: map[string]string{"KUBECONFIG": kube + "a.yaml"}, context: "nope"},
		{name: "context whose cluster is in no file", files: pki, env: map[string]string{"KUBECONFIG": kube + "a.yaml"}, context: "b"},
		{name: "HOME unset: .kube/config of the cwd", files: with(map[string]string{"/srv/runner/.kube/config": kcA, "/srv/runner/.kube/a.crt": "CERT-CWD", "/srv/runner/.kube/a.key": "KEY-CWD", "/srv/pki/ca.crt": "CA-CWD"}), env: map[string]string{}, cwd: "/srv/runner"},
		{name: "in-cluster with token: KUBECONFIG ignored", files: with(sa), env: merge(inPod, map[string]string{"KUBECONFIG": kube + "a.yaml"})},
		{name: "in-cluster without CA: still in-cluster", files: with(map[string]string{"/var/run/secrets/kubernetes.io/serviceaccount/token": "SA-TOKEN"}), env: merge(inPod, map[string]string{"KUBECONFIG": kube + "a.yaml"})},
		{name: "in-cluster, CA not a certificate: system roots", files: with(map[string]string{"/var/run/secrets/kubernetes.io/serviceaccount/token": "SA-TOKEN", "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt": "not PEM"}), env: inPod},
		{name: "in-cluster, empty token: still in-cluster", files: with(map[string]string{"/var/run/secrets/kubernetes.io/serviceaccount/token": ""}), env: inPod},
		{name: "in-cluster without token: the kubeconfig", files: with(map[string]string{"/var/run/secrets/kubernetes.io/serviceaccount/ca.crt": "SA-CA"}), env: merge(inPod, map[string]string{"KUBECONFIG": kube + "a.yaml"})},
		{name: "in-cluster without token, no kubeconfig", files: with(map[string]string{"/var/run/secrets/kubernetes.io/serviceaccount/ca.crt": "SA-CA"}, "/home/gitlab-runner/.kube/config"), env: merge(inPod, map[string]string{"HOME": home})},
		{name: "only the host variable: the kubeconfig", files: with(sa), env: map[string]string{"KUBERNETES_SERVICE_HOST": "127.0.0.3", "KUBECONFIG": kube + "b.yaml"}},
	}, generatedLists(pki, home, kube)...)
}

// generatedLists are the KUBECONFIG lists of one to three files drawn,
// in every order and without repeats, from a missing file, three
// kubeconfigs that share names (a.yaml: contexts a and b, cluster a, user
// a; b.yaml: cluster b and another cluster a, user b, context b; c.yaml:
// another cluster a and user a, contexts c and b) and an empty file; each
// with the current-context, and the two-file lists with context b, whose
// cluster and user come from different files in different orders.
func generatedLists(pki map[string]string, home, kube string) []kubeLayout {
	names := []string{"gone.yaml", "a.yaml", "b.yaml", "c.yaml", "empty.yaml"}
	var lists [][]string
	var grow func(prefix []string)
	grow = func(prefix []string) {
		if len(prefix) > 0 {
			lists = append(lists, slices.Clone(prefix))
		}
		if len(prefix) == 3 {
			return
		}
		for _, n := range names {
			if !slices.Contains(prefix, n) {
				grow(append(prefix, n))
			}
		}
	}
	grow(nil)
	var out []kubeLayout
	for _, l := range lists {
		paths := make([]string, len(l))
		for i, n := range l {
			paths[i] = kube + n
		}
		env := map[string]string{"HOME": home, "KUBECONFIG": strings.Join(paths, ":")}
		out = append(out, kubeLayout{name: "list " + strings.Join(l, ":"), files: pki, env: env})
		if len(l) == 2 {
			out = append(out, kubeLayout{name: "list " + strings.Join(l, ":") + ", context b", files: pki, env: env, context: "b"})
		}
	}
	return out
}

func merge(a, b map[string]string) map[string]string {
	m := map[string]string{}
	for _, x := range []map[string]string{a, b} {
		for k, v := range x {
			m[k] = v
		}
	}
	return m
}

// writeLayout makes the layout's tree under root, @ROOT@ replaced by
// rootText.
func writeLayout(t *testing.T, root, rootText string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(strings.ReplaceAll(text, "@ROOT@", rootText)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestKubeconfigAgreesWithClientGo compares doctor's choice of a runner's
// client config (in-cluster, else the kubeconfig and its context, read
// under --root through the door) with the runner's own code run on the same
// layout: client-go's loader and rest.InClusterConfig in a child process
// with the runner's environment and working directory, the layout's
// /var/run/secrets bind-mounted over the real one in a private mount
// namespace (rest.InClusterConfig has fixed paths). They must agree on
// every row: the same server and credential bytes, or both a failure.
func TestKubeconfigAgreesWithClientGo(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the oracle runs in a Linux mount namespace")
	}
	// The oracle is a real part of this test: without it the test proves
	// nothing, so it fails rather than skips (util-linux's unshare, and user
	// namespaces, are on every machine the tests run on).
	if err := exec.Command("unshare", "-rm", "true").Run(); err != nil {
		t.Fatalf("no unprivileged mount namespace for the oracle (unshare -rm): %v", err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range kubeAgreementLayouts(t) {
		t.Run(l.name, func(t *testing.T) {
			oracleRoot, doctorRoot := t.TempDir(), t.TempDir()
			writeLayout(t, oracleRoot, oracleRoot, l.files)
			writeLayout(t, doctorRoot, "", l.files)
			want := runOracle(t, self, oracleRoot, l)
			got := doctorChoice(t, doctorRoot, l)
			if got != want {
				t.Errorf("doctor chose %+v\nclient-go chose %+v", got, want)
			}
		})
	}
}

func runOracle(t *testing.T, self, root string, l kubeLayout) choice {
	t.Helper()
	secrets := filepath.Join(root, "var/run/secrets")
	if err := os.MkdirAll(secrets, 0o755); err != nil {
		t.Fatal(err)
	}
	// A tmpfs over /run (/var/run is a link to it) in the child's own
	// mount namespace, and the layout's secrets bound into it: the host's
	// /run is neither seen nor written.
	script := `run=$(readlink -f /var/run) && mount -t tmpfs tmpfs "$run" && mkdir "$run/secrets" && mount --bind "$1" "$run/secrets" && shift && cd "$1" && shift && exec "$@"`
	cwd := root + l.cwd
	if l.cwd == "" {
		cwd = root
	}
	cmd := exec.Command("unshare", "-rm", "sh", "-c", script, "sh", secrets, cwd, self, "-test.run=^TestKubeClientOracle$")
	cmd.Env = []string{oracleEnv + "=1", oracleEnv + "_CONTEXT=" + l.context, oracleEnv + "_ROOT=" + root, "PATH=" + os.Getenv("PATH")}
	for k, v := range l.env {
		cmd.Env = append(cmd.Env, k+"="+strings.ReplaceAll(v, "@ROOT@", root))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	run := exec.CommandContext(ctx, cmd.Path, cmd.Args[1:]...)
	run.Env = cmd.Env
	out, err := run.Output()
	if err != nil {
		t.Fatalf("oracle: %v\n%s", err, out)
	}
	var c choice
	line := out
	if i := strings.IndexByte(string(out), '{'); i >= 0 {
		line = out[i:]
	}
	if err := json.NewDecoder(strings.NewReader(string(line))).Decode(&c); err != nil {
		t.Fatalf("oracle said %q: %v", out, err)
	}
	return c
}

// doctorChoice is doctor's decision on the same layout under --root, with
// the runner's environment and working directory given as the facts.
func doctorChoice(t *testing.T, root string, l kubeLayout) choice {
	t.Helper()
	e := &hostfacts.Environ{Source: "/proc/1/environ", Vars: map[string]string{}, Origin: map[string]string{}}
	for k, v := range l.env {
		e.Vars[k] = strings.ReplaceAll(v, "@ROOT@", "")
	}
	ra := &hostfacts.RunAs{Cwd: "/"}
	if l.cwd != "" {
		ra.Cwd = l.cwd
	}
	ra.Home, ra.HomeSet = e.Lookup("HOME")
	var got choice
	probe := &checks.Check{
		ID:       "probe",
		Title:    "doctor's choice of the runner's client config",
		Doc:      checks.Doc{Cause: "-", Symptom: "-", Fix: checks.Text("-"), Verify: checks.Text("-")},
		Severity: checks.Info,
		Requires: []checks.Node{KubeconfigFact, hostfacts.EnvironFact, hostfacts.RunAsFact},
		Run: func(p *checks.Pass) error {
			k := KubeconfigFact.Get(p)
			cfg := inCluster(k.Reader, nil, hostfacts.EnvironFact.Get(p)).Config
			var err error
			var o Origins
			if cfg == nil {
				kc := ResolveContext(k, l.context)
				o = kc.Origins(p.Env)
				cfg, _, err = contextConfig(p.Env, kc)
			}
			defer func() { got.ContextFrom, got.ClusterFrom, got.UserFrom = o.Context, o.Cluster, o.User }()
			if err != nil {
				got = choice{Failed: true}
				return nil
			}
			got = configChoice(t, cfg, func(string) []byte {
				t.Fatal("doctor left a file for client-go to read")
				return nil
			})
			return nil
		},
	}
	env := &hostio.Env{Root: root}
	_, err := checks.Run(context.Background(), env, []*checks.Check{probe}, checks.Options{
		Timeout: time.Minute,
		Given:   []checks.Given{checks.Give(hostfacts.EnvironFact, e), checks.Give(hostfacts.RunAsFact, ra)},
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}
