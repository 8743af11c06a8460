package kubefacts

import (
	"fmt"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts/configfacts"
	"github.com/socialwebcomputer/doctor/checks/facts/hostfacts"
)

// PluginAPIClient is the identity fleeting-plugin-dvp talks to the Deckhouse
// Virtualization Platform with: the kubeconfig at plugin_config
// kubeconfig_path, or, with none given, the service account of the pod the
// runner runs in (the guide: "with no kubeconfig_path, the plugin uses the
// service account of the pod"). It is not the Kubernetes executor's
// client: an instance runner has no [runners.kubernetes].
type PluginAPIClient struct {
	Config configfacts.PluginConfig
	// NotDVP says why there is nothing to check: no [runners.autoscaler],
	// or another plugin.
	NotDVP string
	// None says why the plugin has no identity at all (no kubeconfig_path
	// and no service account, or a kubeconfig that does not load): every
	// call the plugin makes fails, which is a diagnosis, not an error.
	None string
	// NoneSource is where None was seen, for evidence.
	NoneSource string
	API        *APIClient
	// Source names the credential: "plugin_config.kubeconfig_path /x
	// (context c)" or "the pod's service account".
	Source   string
	Identity *Identity
}

// PluginAPIClientFact builds the plugin's client for each runner. Runners whose
// plugins share a server and credential share the client and the reviews
// made with it, as the executor's clients do (checks.Shared by target).
var PluginAPIClientFact = &checks.Fact[*PluginAPIClient]{
	ID:       "plugin-api-client",
	Doc:      "the client fleeting-plugin-dvp of a runner uses: plugin_config kubeconfig_path, else the pod's service account",
	Requires: []checks.Node{configfacts.RunnerEntryFact, hostfacts.RunnerFact, hostfacts.EnvironFact},
	Network:  true,
	Compute: func(p *checks.Pass) (*PluginAPIClient, error) {
		r := configfacts.RunnerEntryFact.Get(p)
		pc, ok := configfacts.PluginConfigOf(r.Runner)
		out := &PluginAPIClient{Config: pc}
		switch {
		case !ok:
			out.NotDVP = "the runner has no [runners.autoscaler]"
			return out, nil
		case !pc.IsDVP():
			out.NotDVP = fmt.Sprintf("the runner's fleeting plugin is %q, not %s", pc.Plugin, configfacts.DVPPlugin)
			return out, nil
		}
		cfg, err := pluginRestConfig(p, pc, out)
		if err != nil || cfg == nil {
			return out, err
		}
		key := TargetKey(cfg)
		api, err := checks.Shared(p, "api "+key, func() (*APIClient, error) {
			api, err := NewAPI(p.Env, cfg)
			if api != nil {
				api.Source, api.Key = out.Source, key
			}
			return api, err
		})
		if err != nil {
			return nil, err
		}
		out.API = api
		out.Identity, err = checks.Shared(p, "whoami "+api.Key, func() (*Identity, error) { return whoami(p.Context, p.Env, api) })
		return out, err
	},
}

// pluginRestConfig is the rest.Config of the plugin's identity, or nil with
// out.None set when it has none.
func pluginRestConfig(p *checks.Pass, pc configfacts.PluginConfig, out *PluginAPIClient) (*rest.Config, error) {
	proc := hostfacts.RunnerFact.Get(p).Selected
	if kp := pc.KubeconfigPath; kp != "" {
		src, _ := configfacts.RunnerEntryFact.Get(p).At("autoscaler", "plugin_config", "kubeconfig_path")
		hp := configfacts.RunnerPath(p.Env, proc, kp)
		files := configfacts.RunnerEntryFact.Get(p).File.Files
		kc, err, perr := LoadKubeconfig(files, hp)
		if err != nil {
			out.None, out.NoneSource = fmt.Sprintf("plugin_config kubeconfig_path %s cannot be read: %v", kp, err), src
			return nil, nil
		}
		if err = perr; err != nil {
			out.None, out.NoneSource = fmt.Sprintf("plugin_config kubeconfig_path %s is not a kubeconfig: %v", kp, err), src
			return nil, nil
		}
		kc, err = InlineKubeconfigFiles(files, kc, kc.CurrentContext)
		if err != nil {
			out.None, out.NoneSource = fmt.Sprintf("plugin_config kubeconfig_path %s: %v", kp, err), src
			return nil, nil
		}
		cfg, err := clientcmd.NewNonInteractiveClientConfig(*kc, kc.CurrentContext, &clientcmd.ConfigOverrides{}, nil).ClientConfig()
		if err != nil {
			out.None, out.NoneSource = fmt.Sprintf("plugin_config kubeconfig_path %s gives no client: %v", kp, err), src
			return nil, nil
		}
		if err := inlineFiles(files, cfg); err != nil {
			return nil, err
		}
		out.Source = fmt.Sprintf("plugin_config kubeconfig_path %s (context %q)", kp, kc.CurrentContext)
		return cfg, nil
	}
	e := hostfacts.EnvironFact.Get(p)
	cfg := inCluster(configfacts.RunnerEntryFact.Get(p).File.Files, proc, e).Config
	if cfg == nil {
		out.None = "plugin_config has no kubeconfig_path and the runner has no service account (no KUBERNETES_SERVICE_HOST " +
			"in its environment, or no token under " + hostfacts.ServiceAccountDir + "), so the plugin fails with `" + errNotInCluster + "`"
		out.NoneSource = e.Source
		if e.Err != nil {
			return nil, fmt.Errorf("the runner's environment is unknown, so is the plugin's identity: %w", e.Err)
		}
		return nil, nil
	}
	out.Source = "the pod's service account"
	return cfg, nil
}

// errNotInCluster is what client-go's rest.InClusterConfig, which a plugin
// without a kubeconfig falls back to, returns outside a pod
// (rest/config.go ErrNotInCluster, client-go v0.37.2 in the module cache).
const errNotInCluster = "unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined"

// The API group fleeting-plugin-dvp works in, and its version, as the
// guide's pool manifest and Role name them.
const (
	DVPGroup   = "virtualization.deckhouse.io"
	DVPVersion = "v1alpha2"
)

// Dynamic is a dynamic client on the same configuration (and so the same
// dialer, bounds and request counter); it speaks JSON, as custom resources
// need.
func (a *APIClient) Dynamic() (dynamic.Interface, error) {
	return dynamic.NewForConfig(a.Config)
}
