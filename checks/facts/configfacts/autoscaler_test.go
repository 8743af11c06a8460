package configfacts

import (
	"testing"

	"github.com/socialwebcomputer/doctor/runnerconfig"
)

func TestPluginConfigOf(t *testing.T) {
	decode := func(s string) *runnerconfig.Runner {
		t.Helper()
		c, _, err := runnerconfig.Decode([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return c.Runners[0]
	}
	// The guide's runner, plus a kubeconfig_path.
	pc, ok := PluginConfigOf(decode(`[[runners]]
executor = "instance"
[runners.autoscaler]
plugin = "fleeting-plugin-dvp"
max_instances = 5
[runners.autoscaler.plugin_config]
namespace = "code-runner-dvp"
name = "code-runner"
kubeconfig_path = "/etc/gitlab-runner/dvp.kubeconfig"
`))
	if !ok || !pc.IsDVP() || pc.Pool() != "code-runner-dvp/code-runner" || pc.KubeconfigPath != "/etc/gitlab-runner/dvp.kubeconfig" || pc.MaxInstances != 5 || len(pc.Problems) != 0 {
		t.Errorf("guide runner: %+v, %v", pc, ok)
	}
	pc, _ = PluginConfigOf(decode("[[runners]]\n[runners.autoscaler]\nplugin = \"/usr/local/bin/fleeting-plugin-dvp\"\n[runners.autoscaler.plugin_config]\nname = 3\n"))
	if !pc.IsDVP() || pc.Name != "" || len(pc.Problems) != 1 || pc.Problems[0] != "name is an integer (3), not a string" {
		t.Errorf("plugin by path, name of the wrong type: %+v", pc)
	}
	for _, plugin := range []string{"fleeting-plugin-aws", "my-fleeting-plugin-dvp", ""} {
		if (PluginConfig{Plugin: plugin}).IsDVP() {
			t.Errorf("%q taken for fleeting-plugin-dvp", plugin)
		}
	}
	if _, ok := PluginConfigOf(decode("[[runners]]\nexecutor = \"instance\"\n")); ok {
		t.Error("a runner without [runners.autoscaler] has a plugin config")
	}
}
