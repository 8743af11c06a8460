package facts

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/runnerconfig"
)

// API is the one client every API check uses, made from the kubeconfig the
// runner would load, with the context config.toml names.
type API struct {
	Config *rest.Config
	Client kubernetes.Interface
	Server string // the URL, for evidence
	// Requests counts what this run sent, for the benchmark and the
	// read-only promise.
	Requests *atomic.Int64
	// Source says which credential the runner's own client-go would use:
	// "in-cluster service account" or "kubeconfig context X".
	Source string
}

// APIClient builds the client. It is a network fact: --offline skips every
// check that needs it.
var APIClient = &checks.Fact[*API]{
	ID:       "api-client",
	Doc:      "a client-go client for the runner's cluster, chosen as the runner chooses: in-cluster config first, then the kubeconfig and context",
	Requires: []checks.Node{KubeconfigFact, Runner, RunnerEnviron},
	Network:  true,
	Compute: func(p *checks.Pass) (*API, error) {
		k := KubeconfigFact.Get(p)
		// The executor tries InClusterConfig before the kubeconfig, and it
		// wins when it works: a runner in a pod uses its service account.
		// An operator's explicit --kubeconfig still takes precedence.
		if p.Env.KubeconfigPath == "" {
			if cfg, ok, err := inCluster(p.Env, Runner.Get(p).Selected, RunnerEnviron.Get(p)); ok {
				if err != nil {
					return nil, err
				}
				api, err := NewAPI(p.Env, cfg)
				if api != nil {
					api.Source = "in-cluster service account"
				}
				return api, err
			}
		}
		if k.Merged == nil || k.Context == nil {
			if k.None != "" {
				return nil, fmt.Errorf("no kubeconfig: %s", k.None)
			}
			return nil, fmt.Errorf("the kubeconfig does not load (see kubeconfig-file)")
		}
		cc := clientcmd.NewNonInteractiveClientConfig(*k.Merged, k.ContextName, &clientcmd.ConfigOverrides{}, nil)
		cfg, err := cc.ClientConfig()
		if err != nil {
			return nil, fmt.Errorf("client config: %w", err)
		}
		api, err := NewAPI(p.Env, cfg)
		if api != nil {
			api.Source = "kubeconfig context " + k.ContextName
		}
		return api, err
	},
}

// ServiceAccountDir is where a pod's service-account credentials are mounted.
const ServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// inCluster builds client-go's InClusterConfig for the runner: its
// KUBERNETES_SERVICE_HOST and _PORT, and the token and CA of its service
// account, read through /proc/<pid>/root when doctor runs beside the
// runner's container, else under the root (doctor in the runner's pod).
// ok is false when the runner's environment does not select in-cluster
// config, or no token is mounted, as client-go then falls back too.
func inCluster(env *checks.Env, proc *Process, e *Environ) (*rest.Config, bool, error) {
	if e.Err != nil {
		return nil, false, nil
	}
	hostPort, ok := e.InCluster()
	if !ok {
		return nil, false, nil
	}
	dirs := []string{ServiceAccountDir}
	if proc != nil {
		dirs = append([]string{fmt.Sprintf("/proc/%d/root%s", proc.PID, ServiceAccountDir)}, dirs...)
	}
	for _, dir := range dirs {
		token, err := env.ReadFile(dir + "/token")
		if err != nil {
			continue
		}
		ca, err := env.ReadFile(dir + "/ca.crt")
		if err != nil {
			return nil, true, fmt.Errorf("in-cluster config: %w", err)
		}
		return &rest.Config{
			Host:            "https://" + hostPort,
			BearerToken:     strings.TrimSpace(string(token)),
			TLSClientConfig: rest.TLSClientConfig{CAData: ca},
		}, true, nil
	}
	return nil, false, nil
}

// NewAPI wraps a rest.Config the way doctor needs it: protobuf for the large
// lists, no client-side throttling (a run is a few dozen requests), every
// dial through the Env, and a counter of requests.
func NewAPI(env *checks.Env, cfg *rest.Config) (*API, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	cfg.QPS, cfg.Burst = 1000, 1000
	cfg.Timeout = 15 * time.Second
	cfg.UserAgent = "gitlab-runner-doctor"
	cfg.Dial = env.Dial
	n := &atomic.Int64{}
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			n.Add(1)
			return rt.RoundTrip(r)
		})
	})
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &API{Config: cfg, Client: cs, Server: cfg.Host, Requests: n}, nil
}

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

// Whoami makes one authenticated call: a SelfSubjectReview.
var Whoami = &checks.Fact[*Identity]{
	ID:       "identity",
	Doc:      "the user and groups the API server authenticates the kubeconfig's credential as",
	Requires: []checks.Node{APIClient},
	Network:  true,
	Compute: func(p *checks.Pass) (*Identity, error) {
		api := APIClient.Get(p)
		id := &Identity{Server: api.Server}
		ctx, cancel := context.WithTimeout(p.Context, checks.APICallTimeout)
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
	},
}

// RunnerNamespace is [runners.kubernetes] namespace of the first Kubernetes
// runner, "default" when unset, as the executor defaults it.
func RunnerNamespace(c *ConfigFile) string {
	if r := FirstKubernetesRunner(c); r != nil && r.Kubernetes != nil && r.Kubernetes.Namespace != "" {
		return r.Kubernetes.Namespace
	}
	return "default"
}

// FirstKubernetesRunner is the [[runners]] element the cluster checks
// diagnose; nil when the file did not decode or has none.
func FirstKubernetesRunner(c *ConfigFile) *runnerconfig.Runner {
	if !c.Decoded() {
		return nil
	}
	for _, r := range c.Config.Runners {
		if r.Executor == "kubernetes" {
			return r
		}
	}
	return nil
}
