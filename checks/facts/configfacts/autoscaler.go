package configfacts

import (
	"fmt"
	"strconv"

	"github.com/socialwebcomputer/doctor/runnerconfig"
)

// DVPPlugin is the name of the Deckhouse fleeting plugin as
// [runners.autoscaler] plugin spells it in the Deckhouse Code runner guide
// (spec/deckhouse-code-runners.txt): the runner image carries it in
// /usr/local/bin.
const DVPPlugin = "fleeting-plugin-dvp"

// PluginConfig is what a runner's [runners.autoscaler] hands its fleeting
// plugin, with the keys fleeting-plugin-dvp reads: plugin_config
// {namespace, name, kubeconfig_path} (the guide: "plugin_config.namespace
// and plugin_config.name: the namespace and the name of the
// VirtualMachinePool; with no kubeconfig_path, the plugin uses the service
// account of the pod"), and max_instances, the runner's ceiling on the
// pool's replicas.
type PluginConfig struct {
	Plugin         string // [runners.autoscaler] plugin, "" when unset
	Namespace      string
	Name           string
	KubeconfigPath string
	MaxInstances   int
	// Problems lists plugin_config keys of the wrong type ("name is an
	// integer, not a string"): the plugin's JSON decode rejects them.
	Problems []string
}

// PluginConfigOf reads the runner's autoscaler table; ok is false when the
// runner has no [runners.autoscaler].
func PluginConfigOf(r *runnerconfig.Runner) (pc PluginConfig, ok bool) {
	if r == nil || r.Autoscaler == nil {
		return pc, false
	}
	a := r.Autoscaler
	pc.Plugin, pc.MaxInstances = a.Plugin, a.MaxInstances
	for _, k := range []struct {
		key  string
		into *string
	}{{"namespace", &pc.Namespace}, {"name", &pc.Name}, {"kubeconfig_path", &pc.KubeconfigPath}} {
		v, set := a.PluginConfig[k.key]
		if !set {
			continue
		}
		s, isString := v.(string)
		if !isString {
			pc.Problems = append(pc.Problems, fmt.Sprintf("%s is %s, not a string", k.key, typeName(v)))
			continue
		}
		*k.into = s
	}
	return pc, true
}

// IsDVP says the runner's plugin is fleeting-plugin-dvp, by name or by a
// path ending in it (plugin may be a path).
func (pc PluginConfig) IsDVP() bool {
	p := pc.Plugin
	return p == DVPPlugin || len(p) > len(DVPPlugin) && p[len(p)-len(DVPPlugin)-1:] == "/"+DVPPlugin
}

// Pool names the pool for findings: "code-runner-dvp/code-runner".
func (pc PluginConfig) Pool() string { return pc.Namespace + "/" + pc.Name }

func typeName(v any) string {
	switch x := v.(type) {
	case int64, int:
		return "an integer (" + fmt.Sprint(x) + ")"
	case float64:
		return "a number (" + strconv.FormatFloat(x, 'g', -1, 64) + ")"
	case bool:
		return "a boolean"
	case map[string]any:
		return "a table"
	case []any:
		return "an array"
	}
	return fmt.Sprintf("%T", v)
}
