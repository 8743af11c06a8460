package kubefacts

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"net/http"
	"path"
	"strings"
	"sync/atomic"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	certutil "k8s.io/client-go/util/cert"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/client/kube"
	"github.com/socialwebcomputer/doctor/checks/client/kube/keep"
	"github.com/socialwebcomputer/doctor/checks/facts/configfacts"
	"github.com/socialwebcomputer/doctor/checks/facts/hostfacts"
	"github.com/socialwebcomputer/doctor/internal/fixcode"
	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/internal/redact"
	"github.com/socialwebcomputer/doctor/runnerconfig"
)

// APIClient is the one client every API check of a target uses. A target is a
// server and a credential: runners that share both share the client, its
// connection and the lists made with it.
type APIClient struct {
	Config *rest.Config
	Client kube.Interface
	Server string // the URL, for evidence
	// Key identifies the target: the server and a hash of the credential.
	Key string
	// TapeKey identifies it too, in a form a bundle's redaction keeps (the
	// certificate's subject and serial, a token's stand-in): for the keys
	// of what a check records on the tape itself (hostio.Elapsed).
	TapeKey string
	// Requests counts what this run sent, for the benchmark and the
	// read-only promise.
	Requests *atomic.Int64
	// Source says which credential the runner's own client-go would use:
	// "in-cluster service account", "kubeconfig context X" or
	// "[runners.kubernetes] host".
	Source string
	// Cluster is the runner's effective cluster with its provenance, which
	// every finding of a check that requires this fact cites.
	Cluster *EffectiveCluster
}

// Kubectl is the kubectl command aimed at this runner's cluster
// (EffectiveCluster.Kubectl).
func (a *APIClient) Kubectl() fixcode.Cmd {
	if a == nil {
		return fixcode.Command("kubectl")
	}
	return a.Cluster.Kubectl()
}

// AfterAPIAuth gates a read of the cluster on api-auth (checks.Gate): the
// read leaves with the self-review, in the same round trip, and counts only
// once api-auth has passed, so a refused credential is diagnosed once and
// what needs the read folds under it. api-auth is named by its ID, as a fact
// never imports a check; Validate proves the catalog holds it.
var AfterAPIAuth = checks.Gate(checks.Ref("api-auth"))

// APIClientFact builds a runner's client as the executor's getKubeClientConfig
// chooses it (executors/kubernetes/util.go, gitlab-runner v19.2.1): host set
// takes the out-of-cluster branch with cert_file, key_file, ca_file and
// bearer_token; with host empty, in-cluster config first, then the
// kubeconfig's context. It is a network fact: --offline skips every check
// that needs it.
var APIClientFact = &checks.Fact[*APIClient]{
	ID:       "api-client",
	Doc:      "a client-go client for a runner's cluster, chosen as the executor chooses: host, in-cluster config, then the kubeconfig and context",
	Requires: []checks.Node{EffectiveClusterFact, configfacts.RunnerEntryFact, hostfacts.RunnerFact, hostfacts.EnvironFact, hostfacts.RunAsFact},
	Network:  true,
	// The engine adds it to every finding of every check that reads this
	// runner's cluster: which cluster, and which rule, file and context
	// chose it.
	Cites: func(api *APIClient) []checks.Evidence {
		if api == nil || api.Cluster == nil {
			return nil
		}
		return []checks.Evidence{api.Cluster.Evidence()}
	},
	Compute: func(p *checks.Pass) (*APIClient, error) {
		cfg, source, err := restConfig(p)
		if err != nil {
			return nil, err
		}
		key := TargetKey(cfg)
		api, err := checks.Shared(p, "api "+key, func() (*APIClient, error) {
			// An exec plugin runs only when the operator asks, on a live
			// host, as the runner (execplugin.go); else it is refused.
			cred, err := pluginCredentialFor(p, cfg)
			if err != nil {
				return nil, checks.CouldNotCheck(err)
			}
			return keyedAPI(p.Env, cfg, cred, source, key)
		})
		if api != nil {
			// The target's client, shared with every runner of the same
			// server and credential (and EarlyIdentityFact): the same
			// connection, this runner's source and provenance.
			own := *api
			own.Source, own.Cluster = source, EffectiveClusterFact.Get(p)
			api = &own
		}
		return api, err
	},
}

func keyedAPI(env *hostio.Env, cfg *rest.Config, cred *pluginCredential, source, key string) (*APIClient, error) {
	api, err := newAPI(env, cfg, cred)
	if api != nil {
		api.Source, api.Key = source, key
	}
	return api, err
}

// EarlyIdentityFact sends the self-review of the kubeconfig's current context
// (or --context's) as soon as the kubeconfig is read, before config.toml is
// decoded and its runners are known: the connection (TCP, TLS) is made
// while the rest of the host is read. A runner whose client is that one
// (the same server and credential, kubefacts.TargetKey) then finds the client
// built and its identity answered or on its way; a runner that uses another
// context, a [runners.kubernetes] host or the in-cluster account makes its
// own, and the early review cost one request. Never for a credential that
// takes a plugin: a plugin runs only for a runner that needs it.
var EarlyIdentityFact = &checks.Fact[struct{}]{
	ID:       "early-identity",
	Doc:      "the self-review of the kubeconfig's current context, sent as soon as the kubeconfig is read",
	Requires: []checks.Node{KubeconfigFact},
	Network:  true,
	Compute: func(p *checks.Pass) (struct{}, error) {
		if t := p.Env.Tape; t != nil && t.Replay {
			return struct{}{}, nil
		}
		k := ResolveContext(KubeconfigFact.Get(p), p.Env.ContextOverride)
		cfg, source, err := contextConfig(p.Env, k)
		// A plugin's credential is the runner's api-client's to ask for
		// (pluginCredentialFor): the client made here, memoized under the
		// same key, would have none.
		if err != nil || cfg.ExecProvider != nil || cfg.AuthProvider != nil {
			return struct{}{}, nil // the runner's api-client says why
		}
		key := TargetKey(cfg)
		api, err := checks.Shared(p, "api "+key, func() (*APIClient, error) { return keyedAPI(p.Env, cfg, nil, source, key) })
		if err != nil || api == nil {
			return struct{}{}, nil
		}
		// The review outlives this fact, whose context ends when it
		// returns; whoami bounds it by one API call's timeout.
		ctx := context.WithoutCancel(p.Context)
		go checks.Shared(p, "whoami "+key, func() (*Identity, error) { return whoami(ctx, p.Env, api) })
		return struct{}{}, nil
	},
}

// restConfig is the rest.Config of the running pass's runner, built for
// the cluster EffectiveClusterFact chose (one decision: the evidence every
// API check cites is the branch the client was built from), and which
// branch gave it, for trace.
func restConfig(p *checks.Pass) (*rest.Config, string, error) {
	switch ec := EffectiveClusterFact.Get(p); ec.Rule {
	case RuleHost:
		e := configfacts.RunnerEntryFact.Get(p)
		cfg, err := outOfCluster(e.File.Files, e.Kube())
		return cfg, "[runners.kubernetes] host", err
	case RuleInCluster:
		// InClusterFact's config is the process's, shared by its runners.
		cfg := rest.CopyConfig(ec.inCluster.Config)
		if ec.inCluster.CANote != "" {
			return cfg, "in-cluster service account (" + ec.inCluster.CANote + ")", nil
		}
		return cfg, "in-cluster service account", nil
	default:
		return contextConfig(p.Env, ec.kube)
	}
}

// contextConfig is the rest.Config of a kubeconfig context, as client-go
// builds it, with the files it names read under the root.
func contextConfig(env *hostio.Env, k *KubeContext) (*rest.Config, string, error) {
	kc := k.Kubeconfig
	if kc.Merged == nil || k.Context == nil {
		if kc.None != "" {
			return nil, "", fmt.Errorf("no kubeconfig: %s", kc.None)
		}
		if kc.Merged != nil && k.ContextName != "" {
			return nil, "", fmt.Errorf("the kubeconfig has no context %q (see kubeconfig-file)", k.ContextName)
		}
		return nil, "", fmt.Errorf("the kubeconfig does not load (see kubeconfig-file)")
	}
	merged, err := InlineKubeconfigFiles(kc.Reader, kc.Merged, k.ContextName)
	if err != nil {
		return nil, "", err
	}
	cc := clientcmd.NewNonInteractiveClientConfig(*merged, k.ContextName, &clientcmd.ConfigOverrides{}, nil)
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, "", fmt.Errorf("client config: %w", err)
	}
	if err := inlineFiles(kc.Reader, cfg); err != nil {
		return nil, "", err
	}
	return cfg, "kubeconfig context " + k.ContextName, nil
}

// inlineFiles reads the files a kubeconfig names (client-certificate,
// client-key, certificate-authority, tokenFile) through the Env, so they
// are under --root, size-bounded and regular files only, and hands
// client-go their bytes: left to itself it reads whole files by host path,
// and a /dev/zero there is unbounded memory.
func inlineFiles(r hostfacts.RunnerReader, cfg *rest.Config) error {
	for _, f := range []struct {
		path *string
		data *[]byte
		what string
	}{
		{&cfg.TLSClientConfig.CertFile, &cfg.TLSClientConfig.CertData, "client-certificate"},
		{&cfg.TLSClientConfig.KeyFile, &cfg.TLSClientConfig.KeyData, "client-key"},
		{&cfg.TLSClientConfig.CAFile, &cfg.TLSClientConfig.CAData, "certificate-authority"},
	} {
		if *f.path == "" {
			continue
		}
		b, err := r.Read(hostPath(r.Env, *f.path), hostio.KindPEM)
		if err != nil {
			return fmt.Errorf("the kubeconfig's %s: %w", f.what, err)
		}
		*f.data, *f.path = b, ""
	}
	if cfg.BearerTokenFile != "" {
		b, err := r.Read(hostPath(r.Env, cfg.BearerTokenFile), hostio.KindToken)
		if err != nil {
			return fmt.Errorf("the kubeconfig's tokenFile: %w", err)
		}
		cfg.BearerToken, cfg.BearerTokenFile = strings.TrimSpace(string(b)), ""
	}
	return nil
}

// outOfCluster mirrors getOutClusterClientConfig: host, and cert_file,
// key_file and ca_file, read under the root so a fixture is the same input
// as a live host.
func outOfCluster(r hostfacts.RunnerReader, k *runnerconfig.Kubernetes) (*rest.Config, error) {
	cfg := &rest.Config{Host: k.Host, BearerToken: k.BearerToken}
	for _, f := range []struct {
		path string
		into *[]byte
	}{{k.CertFile, &cfg.TLSClientConfig.CertData}, {k.KeyFile, &cfg.TLSClientConfig.KeyData}, {k.CAFile, &cfg.TLSClientConfig.CAData}} {
		if f.path == "" {
			continue
		}
		b, err := r.Read(f.path, hostio.KindPEM)
		if err != nil {
			return nil, err
		}
		*f.into = b
	}
	return cfg, nil
}

// TargetKey names a target without its secrets: the server without URL
// userinfo, and a hash of everything that makes the credential, the
// userinfo included. It is a memo key, a tape key and kubelet-reach's cache
// key (a file doctor writes), so a password in the server URL stays out.
func TargetKey(cfg *rest.Config) string {
	h := sha256.New()
	for _, b := range [][]byte{[]byte(cfg.Host), cfg.CertData, cfg.KeyData, cfg.CAData, []byte(cfg.CertFile), []byte(cfg.KeyFile),
		[]byte(cfg.CAFile), []byte(cfg.BearerToken), []byte(cfg.BearerTokenFile), []byte(cfg.Username), []byte(cfg.Password),
		[]byte(cfg.TLSClientConfig.ServerName), []byte(fmt.Sprint(cfg.Insecure, cfg.ExecProvider != nil, cfg.AuthProvider != nil))} {
		h.Write(b)
		h.Write([]byte{0})
	}
	if cfg.ExecProvider != nil {
		fmt.Fprint(h, cfg.ExecProvider.Command, standIns(cfg.ExecProvider.Args))
	}
	return redact.StripUserinfo(cfg.Host) + "#" + hex.EncodeToString(h.Sum(nil))[:12]
}

// InCluster is rest.InClusterConfig's answer for the runner process: its
// KUBERNETES_SERVICE_HOST and _PORT, and the token and CA of its service
// account, read as the runner through /proc/<pid>/root when doctor runs
// beside the runner's container, else under the root (doctor in the
// runner's pod). client-go's call fails, and the runner falls back to the
// kubeconfig (guessClientConfig, executors/kubernetes/util.go, v19.3.0),
// exactly when either variable is empty or the token file cannot be read;
// an empty token file is no failure. Nor is the CA file, contrary to what
// one might expect: client-go only logs "Expected to load root CA config
// from %s, but got err: %v" and leaves CAFile empty, so the system roots
// verify the apiserver (rest/config.go, InClusterConfig, client-go v0.37.2,
// the same body since v0.21).
type InCluster struct {
	HostPort string // "" when a variable is empty: not in a pod
	// Config is nil when client-go's call fails; TokenErr then says why
	// when the variables are set.
	Config   *rest.Config
	TokenErr error
	// CANote says the CA does not load and the system roots are used.
	CANote string
}

// Vars says both variables are set: the runner is in a pod.
func (c *InCluster) Vars() bool { return c.HostPort != "" }

// InClusterFact is the in-cluster config of the runner process.
var InClusterFact = &checks.Fact[*InCluster]{
	ID:       "in-cluster",
	Doc:      "whether rest.InClusterConfig succeeds for the runner: both service variables and a readable service-account token",
	Requires: []checks.Node{hostfacts.RunnerFact, hostfacts.EnvironFact, hostfacts.RunAsFact},
	Compute: func(p *checks.Pass) (*InCluster, error) {
		return inCluster(hostfacts.RunnerReader{Env: p.Env, RA: hostfacts.RunAsFact.Get(p)}, hostfacts.RunnerFact.Get(p).Selected, hostfacts.EnvironFact.Get(p)), nil
	},
}

func inCluster(r hostfacts.RunnerReader, proc *hostfacts.Process, e *hostfacts.Environ) *InCluster {
	c := &InCluster{}
	if e.Err != nil {
		return c
	}
	hostPort, ok := e.InCluster()
	if !ok {
		return c
	}
	c.HostPort = hostPort
	dirs := []string{hostfacts.ServiceAccountDir}
	if proc != nil {
		dirs = append([]string{fmt.Sprintf("/proc/%d/root%s", proc.PID, hostfacts.ServiceAccountDir)}, dirs...)
	}
	for _, dir := range dirs {
		token, err := r.Read(dir+"/token", hostio.KindToken)
		if err != nil {
			if c.TokenErr == nil {
				c.TokenErr = err
			}
			continue
		}
		c.TokenErr = nil
		c.Config = &rest.Config{Host: "https://" + hostPort, BearerToken: strings.TrimSpace(string(token))}
		ca, err := r.Read(dir+"/ca.crt", hostio.KindPEM)
		if err == nil {
			// certutil.NewPool's own test: a file without a certificate
			// is refused as one that cannot be read.
			_, err = certutil.NewPoolFromBytes(ca)
		}
		if err != nil {
			c.CANote = fmt.Sprintf("%s/ca.crt does not load (%v): client-go verifies the apiserver with the system roots", hostfacts.ServiceAccountDir, err)
			return c
		}
		c.Config.TLSClientConfig.CAData = ca
		return c
	}
	return c
}

// NewAPI wraps a rest.Config the way doctor needs it: protobuf for the large
// lists, no client-side throttling (a run is a few dozen requests), every
// dial through the Env, and a counter of requests.
func NewAPI(env *hostio.Env, cfg *rest.Config) (*APIClient, error) { return newAPI(env, cfg, nil) }

// newAPI is NewAPI with the credential an exec plugin gave (nil: none ran,
// and a plugin in cfg is refused).
func newAPI(env *hostio.Env, cfg *rest.Config, cred *pluginCredential) (*APIClient, error) {
	if cred == nil {
		if err := refuseCodeFromInput(cfg); err != nil {
			return nil, err
		}
	}
	cfg = rest.CopyConfig(cfg)
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	cfg.QPS, cfg.Burst = 1000, 1000
	cfg.Timeout = 15 * time.Second
	if env.RequestTimeout > 0 {
		cfg.Timeout = env.RequestTimeout // --request-timeout, for one API call
	}
	cfg.UserAgent = "gitlab-runner-doctor"
	cfg.Dial = env.Dial
	who := TapeIdentity(cfg) // of the plugin, not its answer: the same on replay
	if cred != nil {
		cred.apply(cfg)
	}
	if t := env.Tape; t != nil {
		// A bundle keeps the API answers as JSON, cut to what the checks
		// read (keep), which its reader can read; analyze answers from
		// them, so nothing dials, and no credential (nor an exec plugin)
		// is used.
		cfg.ContentType, cfg.AcceptContentTypes = "application/json", "application/json"
		if t.Replay {
			cfg.TLSClientConfig = rest.TLSClientConfig{}
			cfg.ExecProvider, cfg.AuthProvider, cfg.Dial = nil, nil, nil
			cfg.BearerToken, cfg.BearerTokenFile, cfg.Username, cfg.Password = "", "", "", ""
			cfg.Transport = env.RoundTripper(nil, who)
		}
	}
	n := &atomic.Int64{}
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		bounded := boundBodies(oneConnection(rt))
		if !WholeAnswersForTests.Load() {
			// Every answer, live or replayed, cut to what the checks read
			// and bounded in the work it makes before client-go decodes
			// it; the request's credential replaced wherever it is echoed.
			bounded = keep.Transport(bounded, nil)
		}
		if env.Tape != nil && !env.Tape.Replay {
			// Outside the bound and the cut: the tape records what the
			// checks are given, nothing else.
			bounded = env.RoundTripper(bounded, who)
		}
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			n.Add(1)
			t0 := time.Now()
			resp, err := bounded.RoundTrip(r)
			logRequest(env, r, resp, err, time.Since(t0))
			if err == nil {
				// clock-skew reads the server's clock from answers doctor
				// receives anyway: no request of its own.
				env.SawDate(ClockAPIServer, cfg.Host, resp.Header, t0)
			}
			return resp, err
		})
	})
	cs, err := kube.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &APIClient{Config: cfg, Client: cs, Server: redact.StripUserinfo(cfg.Host), Requests: n, TapeKey: redact.StripUserinfo(cfg.Host) + " " + who}, nil
}

// WholeAnswersForTests turns the cut of API answers (keep.Transport) off,
// for the test that proves the allow-list sufficient: the checks find with
// the cut what they find without it. Only a test sets it; no input can.
var WholeAnswersForTests atomic.Bool

// ErrRunsCode is why doctor builds no client for a kubeconfig user whose
// credential comes from a program: client-go would run it, and nothing in
// an input file is executed (a --root, a bundle, or a kubeconfig someone
// else wrote). The plugin is described instead, and the API checks are
// unknown with this reason.
var ErrRunsCode error = runsCode{}

// runsCode is ErrRunsCode: what needs the client is unknown, not skipped.
type runsCode struct{}

func (runsCode) Error() string        { return "doctor runs no code from its input" }
func (runsCode) Is(target error) bool { return target == checks.ErrCouldNotCheck }

func refuseCodeFromInput(cfg *rest.Config) error {
	switch {
	case cfg.ExecProvider != nil:
		e := cfg.ExecProvider
		return fmt.Errorf("the kubeconfig's user gets its credential from the exec plugin %q (%d arguments, apiVersion %s), which client-go would run; %w: "+
			"give doctor a kubeconfig with the credential itself (--kubeconfig), or run `kubectl auth whoami` as the runner's user",
			path.Base(e.Command), len(e.Args), e.APIVersion, ErrRunsCode)
	case cfg.AuthProvider != nil:
		return fmt.Errorf("the kubeconfig's user gets its credential from the auth-provider %q, which client-go would run; %w", cfg.AuthProvider.Name, ErrRunsCode)
	}
	return nil
}

// TapeIdentity names cfg's credential for a bundle's request keys, in a
// form that survives the bundle's redaction: a client certificate by its
// subject and serial (the stand-in certificate keeps both), a token or
// password by its stand-in, an exec plugin by its command.
func TapeIdentity(cfg *rest.Config) string {
	var parts []string
	if blk, _ := pem.Decode(cfg.CertData); blk != nil {
		if c, err := x509.ParseCertificate(blk.Bytes); err == nil {
			parts = append(parts, "cert "+c.Subject.String()+" "+c.SerialNumber.String())
		}
	}
	if cfg.BearerToken != "" {
		parts = append(parts, "token "+redact.StandIn(cfg.BearerToken))
	}
	if cfg.Username != "" {
		parts = append(parts, "basic "+redact.StandIn(cfg.Username)+" "+redact.StandIn(cfg.Password))
	}
	if cfg.ExecProvider != nil {
		parts = append(parts, "exec "+redact.StandIn(cfg.ExecProvider.Command+" "+strings.Join(standIns(cfg.ExecProvider.Args), " ")))
	}
	if len(parts) == 0 {
		return "anonymous"
	}
	return strings.Join(parts, "; ")
}

// standIns are the bundle's stand-ins of an exec plugin's arguments, which
// a bundle keeps only as stand-ins: keys built of them are the same on
// replay (redact.StandIn of a stand-in is itself).
func standIns(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = redact.StandIn(a)
	}
	return out
}

// ClockAPIServer is the kind under which the apiserver's Date headers are
// recorded (hostio.Env.SawDate), keyed by API.Server.
const ClockAPIServer = "apiserver"

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// Identity is who the API server says the client is.
type Identity struct {
	User   string
	Groups []string
	// Err is the failure of the authenticated call itself (401, TLS,
	// refused, timeout): api-auth's diagnosis, so it is data, not an error.
	Err    error
	Server string
}

// IdentityFact makes one authenticated call per target: a SelfSubjectReview.
var IdentityFact = &checks.Fact[*Identity]{
	ID:       "identity",
	Doc:      "the user and groups the API server authenticates a runner's credential as",
	Requires: []checks.Node{APIClientFact, checks.Optional(EarlyIdentityFact)},
	Network:  true,
	Compute: func(p *checks.Pass) (*Identity, error) {
		api := APIClientFact.Get(p)
		return checks.Shared(p, "whoami "+api.Key, func() (*Identity, error) { return whoami(p.Context, p.Env, api) })
	},
}

func whoami(ctx context.Context, env *hostio.Env, api *APIClient) (*Identity, error) {
	id := &Identity{Server: api.Server}
	ctx, cancel := context.WithTimeout(ctx, env.APITimeout())
	defer cancel()
	r, err := api.Client.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authnv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if apierrors.IsNotFound(err) {
		// A server without SelfSubjectReview (before 1.28): an access
		// review authenticates just the same, without naming the user.
		_, err = api.Client.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authzv1.SelfSubjectAccessReview{
			Spec: authzv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authzv1.ResourceAttributes{Verb: "list", Resource: "namespaces"}},
		}, metav1.CreateOptions{})
		id.Err = err
		return id, nil
	}
	if err != nil {
		id.Err = err
		return id, nil
	}
	id.User, id.Groups = r.Status.UserInfo.Username, r.Status.UserInfo.Groups
	return id, nil
}

// logRequest is -v: at 6 each request's method, URL (no user info), status
// and latency; at 8 its headers too, redacted, Authorization left out.
func logRequest(env *hostio.Env, r *http.Request, resp *http.Response, err error, took time.Duration) {
	if env.Log == nil {
		return
	}
	status := "error: " + fmt.Sprint(err)
	if err == nil {
		status = resp.Status
	}
	env.Logf(6, "%s %s -> %s in %s", r.Method, r.URL.Redacted(), redact.Text(status), took.Round(time.Millisecond))
	for k, vs := range r.Header {
		if strings.EqualFold(k, "Authorization") {
			env.Logf(8, "  %s: <%d bytes, not shown>", k, len(strings.Join(vs, ",")))
			continue
		}
		env.Logf(8, "  %s: %s", k, redact.Text(strings.Join(vs, ", ")))
	}
}
