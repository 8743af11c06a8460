package dvppool

import (
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts"
	"github.com/socialwebcomputer/doctor/internal/fixcode"
	"github.com/socialwebcomputer/doctor/internal/testing/shellshape"
)

// hostile are values an attacker puts where a fix takes a host value: what
// ends a word, a line, a quote, a heredoc or a document, what a terminal
// hides, and what a command would read as an option.
var hostile = []string{
	"plain", "two words", "new\nline", "x\n$(touch /tmp/pwned)", "`touch /tmp/pwned`", "a;b", "a|b", "a&&b",
	"it's", `say "hi"`, `back\slash`, "$(id)", "${HOME}", "EOF", "x\nEOF\ntouch /tmp/pwned", "---",
	"x\n---\napiVersion: v1\nkind: Namespace", "bidi\u202ereversed", "zero\u200bwidth", "tab\there", "!!", "a=b",
	"-rf", "--kubeconfig=/etc/shadow", "%i", "ünïcödé", "UPPER", "dot.ted", "a/b",
}

// blockShape is the parsed block of a step that is one.
func blockShape(t *testing.T, st checks.Step) *shellshape.Shape {
	t.Helper()
	if st.Kind != checks.KindShell {
		t.Fatalf("not a shell block: %+v", st)
	}
	s, err := shellshape.Parse(st.Text)
	if err != nil {
		t.Fatalf("does not parse: %v\n%s", err, st.Text)
	}
	return s
}

// sameShapeWith checks that got runs the commands of benign, "plain" in
// benign's words being v in got's: v arrived as data, whole.
func sameShapeWith(t *testing.T, benign, got checks.Step, v string) {
	t.Helper()
	want, have := blockShape(t, benign), blockShape(t, got)
	if len(have.Stmts) != len(want.Stmts) || len(have.Words) != len(want.Words) || len(have.Heredocs) != len(want.Heredocs) {
		t.Errorf("%q changed the commands:\n%s\nparsed as\n%s\nnot like\n%s", v, got.Text, have, want)
		return
	}
	for i, w := range want.Words {
		if g, e := have.Words[i], strings.ReplaceAll(w, "plain", v); g != e {
			t.Errorf("%q: word %d is %q, want %q\n%s", v, i, g, e, got.Text)
		}
	}
}

// withheld checks that st is the sentence that stands for a block, and
// that it does not carry v.
func withheld(t *testing.T, st checks.Step, v, why string) {
	t.Helper()
	if st.Kind != checks.KindText || !strings.HasPrefix(st.Text, "doctor prints no command here: ") || !strings.Contains(st.Text, why) {
		t.Errorf("%q: want a sentence saying %q, got %+v", v, why, st)
	}
	if v != "" && strings.Contains(st.Text, v) && fixcode.ObjectName(v) != nil {
		t.Errorf("%q is in the sentence: %s", v, st.Text)
	}
}

// Every fix of the pool, with each value a host or the cluster gives:
// a path (kubeconfig_path, key_path) is one word whatever it holds; a
// namespace, the pool's or a VM's name is a checked name, or the block is
// a sentence saying it is none.
func TestPoolFixesHoldHostileValues(t *testing.T) {
	pc := facts.PluginConfig{Namespace: "code-runner-dvp", Name: "code-runner", KubeconfigPath: "/etc/gitlab-runner/plain"}
	steps := func(pc facts.PluginConfig, key, vm string) map[string]checks.Step {
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
	for _, v := range hostile {
		// The paths are data: one word each, whatever they hold.
		kpc := pc
		kpc.KubeconfigPath = "/etc/gitlab-runner/" + v
		for name, st := range steps(kpc, "/etc/gitlab-runner/ssh/plain", "code-runner-x7k2q") {
			if name != "key" {
				sameShapeWith(t, benign[name], st, v)
			}
		}
		sameShapeWith(t, benign["key"], steps(pc, "/etc/gitlab-runner/ssh/"+v, "code-runner-x7k2q")["key"], v)

		// The names are checked: a name that is none gets no command.
		npc := pc
		npc.Namespace = v
		for name, st := range steps(npc, "/etc/gitlab-runner/ssh/plain", "code-runner-x7k2q") {
			switch {
			case name == "apply" || name == "key":
				sameShapeWith(t, benign[name], st, "plain") // no namespace in it
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
	k := newD8k(facts.PluginConfig{Namespace: "ns", Name: "pool", KubeconfigPath: "dvp.kubeconfig"})
	for _, st := range []checks.Step{k.apply(), k.reapply(), k.poolCmd("scale", "--replicas", "0"), k.vmCmd("describe", "vm-1")} {
		withheld(t, st, "", "kubeconfig_path is a relative path")
	}
	if st := newD8k(facts.PluginConfig{Namespace: "ns", Name: "pool"}).apply(); st.Text != "d8 k apply -f code-runner-pool.yaml" {
		t.Errorf("no kubeconfig_path: %+v", st)
	}
}

// plugin_config's namespace and name are the finding when they are no
// names a pool can have: quoted, never raw.
func TestPoolNameErr(t *testing.T) {
	if err := poolNameErr(facts.PluginConfig{Namespace: "code-runner-dvp", Name: "code-runner"}); err != nil {
		t.Fatal(err)
	}
	for _, v := range hostile {
		for _, pc := range []facts.PluginConfig{{Namespace: v, Name: "code-runner"}, {Namespace: "code-runner-dvp", Name: v}} {
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
