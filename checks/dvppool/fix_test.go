package dvppool

import (
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts/configfacts"
	"github.com/socialwebcomputer/doctor/internal/fixcode"
	"github.com/socialwebcomputer/doctor/testkit/hostile"
	"github.com/socialwebcomputer/doctor/testkit/hostilefix"
)

// withheld checks that st is the sentence that stands for a block, and
// that it does not carry v.
func withheld(t *testing.T, st checks.Step, v, why string) {
	t.Helper()
	if !hostilefix.WithheldStep(st) || !strings.Contains(st.Text, why) {
		t.Errorf("%q: want a sentence saying %q, got %+v", v, why, st)
	}
	if v != "" && strings.Contains(st.Text, v) && !strings.Contains(rules, v) && fixcode.ObjectName(v) != nil {
		t.Errorf("%q is in the sentence: %s", v, st.Text)
	}
}

// rules are what a sentence says of a name, whatever it holds: the rules
// it breaks. A value that is part of them (a quote, "..") is no echo.
var rules = fixcode.NamespaceName("UPPER").Error() + fixcode.ObjectName("UPPER").Error() + fixcode.ObjectName("..").Error()

// Every fix of the pool, with each value a host or the cluster gives:
// a path (kubeconfig_path, key_path) is one word whatever it holds; a
// namespace, the pool's or a VM's name is a checked name, or the block is
// a sentence saying it is none.
func TestPoolFixesHoldHostileValues(t *testing.T) {
	pc := configfacts.PluginConfig{Namespace: "code-runner-dvp", Name: "code-runner", KubeconfigPath: "/etc/gitlab-runner/plain"}
	steps := func(pc configfacts.PluginConfig, key, vm string) map[string]checks.Step {
		k := newD8k(pc)
		return map[string]checks.Step{
			"patch":    k.poolCmd("patch", "--type", "merge", "-p", explicitPatch),
			"scale":    k.poolCmd("scale", "--replicas", "0"),
			"describe": k.vmCmd("describe", vm),
			"apply":    k.apply(),
			"reapply":  k.reapply(),
			"key":      publicHalfStep(key, "/home/gitlab-runner"),
		}
	}
	benign := steps(pc, "/etc/gitlab-runner/ssh/plain", "code-runner-x7k2q")
	wantText := map[string]string{
		"patch":    `d8 k --kubeconfig /etc/gitlab-runner/plain -n code-runner-dvp patch virtualmachinepool code-runner --type merge -p '{"spec":{"scaleDownPolicy":"Explicit"}}'`,
		"scale":    "d8 k --kubeconfig /etc/gitlab-runner/plain -n code-runner-dvp scale virtualmachinepool code-runner --replicas 0",
		"describe": "d8 k --kubeconfig /etc/gitlab-runner/plain -n code-runner-dvp describe vm code-runner-x7k2q",
		"apply":    "d8 k --kubeconfig /etc/gitlab-runner/plain apply -f code-runner-pool.yaml",
		"reapply": "d8 k --kubeconfig /etc/gitlab-runner/plain apply -f code-runner-pool.yaml\n" +
			"d8 k --kubeconfig /etc/gitlab-runner/plain -n code-runner-dvp delete vm -l vmpool.virtualization.deckhouse.io/pool=code-runner",
		"key": "sudo ssh-keygen -y -f /etc/gitlab-runner/ssh/plain",
	}
	for name, st := range benign {
		if st.Kind != checks.KindShell || st.Text != wantText[name] {
			t.Errorf("%s: %+v\nwant\n%s", name, st, wantText[name])
		}
	}
	// The paths are data: one word each, whatever they hold, printed
	// whenever an encoder prints them.
	for _, c := range []struct {
		dir   string
		build func(v string) checks.Steps
	}{
		{"/etc/gitlab-runner/", func(v string) checks.Steps {
			kpc := pc
			kpc.KubeconfigPath = "/etc/gitlab-runner/" + v
			s := steps(kpc, "/etc/gitlab-runner/ssh/plain", "code-runner-x7k2q")
			return checks.Steps{s["patch"], s["scale"], s["describe"], s["apply"], s["reapply"]}
		}},
		{"/etc/gitlab-runner/ssh/", func(v string) checks.Steps {
			return checks.Steps{steps(pc, "/etc/gitlab-runner/ssh/"+v, "code-runner-x7k2q")["key"]}
		}},
	} {
		printable := hostilefix.Printable(func(v string) []string { return []string{c.dir + v} })
		if n := hostilefix.HoldsValues(t, hostile.Values, c.build); n != len(printable) {
			t.Errorf("%s: %d of %d paths printed", c.dir, n, len(printable))
		}
	}
	for _, v := range hostile.Values {
		// The names are checked: a name that is none gets no command.
		npc := pc
		npc.Namespace = v
		for name, st := range steps(npc, "/etc/gitlab-runner/ssh/plain", "code-runner-x7k2q") {
			switch {
			case name == "apply" || name == "key":
				hostilefix.SameBlock(t, "plain", benign[name], st) // no namespace in it
			case fixcode.NamespaceName(v) != nil:
				withheld(t, st, v, "not a valid namespace name")
			}
		}
		npc = pc
		npc.Name = v
		for _, name := range []string{"patch", "scale", "reapply"} {
			if st := steps(npc, "/etc/gitlab-runner/ssh/plain", "code-runner-x7k2q")[name]; fixcode.ObjectName(v) != nil {
				withheld(t, st, v, "not a valid object name")
			} else if !strings.Contains(st.Text, v) {
				t.Errorf("%q: a valid pool name is not in %s", v, st.Text)
			}
		}
		if st := steps(pc, "/etc/gitlab-runner/ssh/plain", v)["describe"]; fixcode.ObjectName(v) != nil {
			withheld(t, st, v, "not a valid object name")
		}
	}
}

// A relative path in a command would name a file of the operator's
// directory: key_path is the runner's working directory's, as the runner
// reads it; a relative kubeconfig_path, which the plugin opens, gets no
// command.
func TestRelativePaths(t *testing.T) {
	if st := publicHalfStep("ssh/id_ed25519", "/home/gitlab-runner"); st.Text != "sudo ssh-keygen -y -f /home/gitlab-runner/ssh/id_ed25519" {
		t.Errorf("relative key_path: %+v", st)
	}
	withheld(t, publicHalfStep("ssh/id_ed25519", ""), "", "working directory is unknown")
	if st := publicHalfStep("", ""); st.Text != "sudo ssh-keygen -y -f /etc/gitlab-runner/ssh/id_ed25519" {
		t.Errorf("key_path unset: %+v", st)
	}
	k := newD8k(configfacts.PluginConfig{Namespace: "ns", Name: "pool", KubeconfigPath: "dvp.kubeconfig"})
	for _, st := range []checks.Step{k.apply(), k.reapply(), k.poolCmd("scale", "--replicas", "0"), k.vmCmd("describe", "vm-1")} {
		withheld(t, st, "", "kubeconfig_path is a relative path")
	}
	if st := newD8k(configfacts.PluginConfig{Namespace: "ns", Name: "pool"}).apply(); st.Text != "d8 k apply -f code-runner-pool.yaml" {
		t.Errorf("no kubeconfig_path: %+v", st)
	}
}

// plugin_config's namespace and name are the finding when they are no
// names a pool can have: quoted, never raw.
func TestPoolNameErr(t *testing.T) {
	if err := poolNameErr(configfacts.PluginConfig{Namespace: "code-runner-dvp", Name: "code-runner"}); err != nil {
		t.Fatal(err)
	}
	for _, v := range hostile.Values {
		for _, pc := range []configfacts.PluginConfig{{Namespace: v, Name: "code-runner"}, {Namespace: "code-runner-dvp", Name: v}} {
			err := poolNameErr(pc)
			valid := fixcode.NamespaceName(pc.Namespace) == nil && fixcode.ObjectName(pc.Name) == nil
			if valid != (err == nil) {
				t.Errorf("%+v: %v", pc, err)
			}
			if err != nil && strings.ContainsAny(err.Error(), "\n\u202e\u200b") {
				t.Errorf("%+v: the error carries the value raw: %q", pc, err)
			}
		}
	}
}
