package nodelocaldns

import (
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/client/dnsq"
	"github.com/socialwebcomputer/doctor/checks/facts/nodedns"
	"github.com/socialwebcomputer/doctor/internal/fixcode"
	"github.com/socialwebcomputer/doctor/internal/testing/shellshape"
)

// hostile are values an attacker puts where a fix takes a host value: what
// ends a word, a line, a quote, a heredoc or a document, what a terminal
// hides, and what a command would read as an option.
var hostile = []string{
	"plain", "two words", "new\nline", "x\n$(touch /tmp/pwned)", "`touch /tmp/pwned`", "a;b", "a|b",
	"it's", `say "hi"`, "$(id)", "${HOME}", "EOF", "x\nEOF\ntouch /tmp/pwned", "---",
	"x\n---\napiVersion: v1\nkind: Namespace", "bidi\u202ereversed", "zero\u200bwidth", "tab\there", "!!",
	"-rf", "--kubeconfig=/etc/shadow", "ünïcödé", "UPPER", "a/b", "..",
}

func shape(t *testing.T, st checks.Step) *shellshape.Shape {
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

// blocks are the shell blocks of fs' fixes, in order.
func blocks(fs []checks.Finding) []checks.Step {
	var out []checks.Step
	for _, f := range fs {
		out = append(out, f.Fix.Blocks()...)
	}
	return out
}

// kubectlOf is kubectl aimed at a cluster as facts.KubeContext.Kubectl
// builds it, with v in the kubeconfig's path and as the context.
func kubectlOf(v string) fixcode.Cmd {
	return fixcode.Command("kubectl", "--context", v).Env("KUBECONFIG", fixcode.Data("/etc/gitlab-runner/"+v))
}

// The cluster's fixes hold any kubectl facts give (its kubeconfig and
// context are data words), and a node name that is none is left out of
// the label command with a sentence that says so.
func TestClusterFixesHoldHostileValues(t *testing.T) {
	ds := daemonSet()
	cases := func(name string) ([]corev1.Node, *nodedns.AddonObjects) {
		nodes := []corev1.Node{node("rented-1", false, true), node(name, false, true), node("rented-3", true, true), node("rented-4", true, true)}
		v := &nodedns.AddonObjects{DaemonSets: []appsv1.DaemonSet{*ds}, Pods: []corev1.Pod{
			*dnsPod("node-dns-a", "rented-4", false),
		}}
		return nodes, v
	}
	nodes, v := cases("rented-2")
	benign, _ := judge(nodes, v, kubectlOf("plain"))
	want := blocks(benign)
	texts := []string{}
	for _, b := range want {
		texts = append(texts, b.Text)
	}
	wantText := "KUBECONFIG=/etc/gitlab-runner/plain kubectl --context plain label node rented-1 rented-2 socialweb.computer/node-local-dns=true\n" +
		"KUBECONFIG=/etc/gitlab-runner/plain kubectl --context plain -n kube-system describe daemonset node-dns\n" +
		"KUBECONFIG=/etc/gitlab-runner/plain kubectl --context plain describe node rented-3\n" +
		"KUBECONFIG=/etc/gitlab-runner/plain kubectl --context plain -n kube-system describe pod -l app.kubernetes.io/name=socialweb-node-dns\n" +
		"KUBECONFIG=/etc/gitlab-runner/plain kubectl --context plain -n kube-system logs -l app.kubernetes.io/name=socialweb-node-dns --prefix"
	if got := strings.Join(texts, "\n"); got != wantText {
		t.Fatalf("blocks\n%s\nwant\n%s", got, wantText)
	}
	for _, h := range hostile {
		// The kubectl facts give: one word each, whatever they hold.
		got, _ := judge(nodes, v, kubectlOf(h))
		gb := blocks(got)
		if len(gb) != len(want) {
			t.Fatalf("%q: %d blocks, want %d", h, len(gb), len(want))
		}
		for i := range want {
			ws, gs := shape(t, want[i]), shape(t, gb[i])
			if len(gs.Stmts) != len(ws.Stmts) || len(gs.Words) != len(ws.Words) {
				t.Errorf("%q changed the commands:\n%s\nnot like\n%s", h, gs, ws)
				continue
			}
			for j, w := range ws.Words {
				if e := strings.ReplaceAll(w, "plain", h); gs.Words[j] != e {
					t.Errorf("%q: word %d is %q, want %q\n%s", h, j, gs.Words[j], e, gb[i].Text)
				}
			}
		}

		// A node's name: a valid one is a word of the label command; one
		// that is none is left out, and a sentence names it, quoted.
		nodes, v := cases(h)
		got, _ = judge(nodes, v, kubectlOf("plain"))
		label := got[0].Fix
		cmd := shape(t, label.Blocks()[0])
		if fixcode.ObjectName(h) == nil {
			if want := fmt.Sprintf(`"label", "node", "rented-1", %q, "socialweb.computer/node-local-dns=true")`, h); len(cmd.Stmts) != 1 || !strings.HasSuffix(cmd.Stmts[0], want) {
				t.Errorf("%q: %s", h, cmd)
			}
			continue
		}
		if len(cmd.Stmts) != 1 || !strings.Contains(cmd.Stmts[0], `"label", "node", "rented-1", "socialweb.computer/node-local-dns=true")`) {
			t.Errorf("%q: the label command is %s", h, cmd)
		}
		said := label.String()
		if !strings.Contains(said, fmt.Sprintf("doctor leaves %q out of the command: it is no node's name (not a valid object name", h)) {
			t.Errorf("%q: the fix does not say it is left out:\n%s", h, said)
		}
		if strings.ContainsAny(said, "\u202e\u200b") || (strings.Contains(h, "\n") && strings.Contains(said, h)) {
			t.Errorf("%q is in the fix raw:\n%s", h, said)
		}
	}
}

// The only node's name is none: no label command, only the sentence; a
// DaemonSet name that is none withholds the describe block.
func TestNoValidNodeName(t *testing.T) {
	steps := labelNodes(fixcode.Command("kubectl"), []string{"x\n$(id)"})
	if len(steps.Blocks()) != 0 || len(steps) != 1 || !strings.Contains(steps[0].Text, `doctor leaves "x\n$(id)" out of the command`) {
		t.Errorf("%+v", steps)
	}
	st := describeDaemonSet(fixcode.Command("kubectl"), "node-dns;id", []string{"rented-1"})
	if st.Kind != checks.KindText || !strings.Contains(st.Text, "the DaemonSet's name is not a valid object name") {
		t.Errorf("%+v", st)
	}
}

// The probe's fixes carry the kubectl as data too.
func TestProbeFixesHoldHostileKubectl(t *testing.T) {
	pr := &nodedns.Probe{Server: "169.254.20.10:53", Why: "test", Answers: []dnsq.Answer{{Net: "udp", Name: "gitlab.example.invalid.", Outcome: dnsq.Timeout}}}
	want := shape(t, findings(pr, "", kubectlOf("plain"))[0].Fix.Blocks()[0])
	for _, h := range hostile {
		got := shape(t, findings(pr, "", kubectlOf(h))[0].Fix.Blocks()[0])
		if len(got.Stmts) != 2 || len(got.Words) != len(want.Words) {
			t.Errorf("%q changed the commands: %s", h, got)
		}
	}
}
