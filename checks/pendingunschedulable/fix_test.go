package pendingunschedulable

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts/cluster"
	"github.com/socialwebcomputer/doctor/internal/fixcode"
	"github.com/socialwebcomputer/doctor/internal/testing/fixproof"
	"github.com/socialwebcomputer/doctor/internal/testing/shellshape"
)

// hostile are values an attacker puts where a fix takes a host value:
// every character that ends a word, a line, a quote or a heredoc, and the
// ones a terminal hides.
var hostile = []string{
	"plain", "", "two words", "new\nline", "x\n$(touch /tmp/pwned)", "`touch /tmp/pwned`",
	"a;b", "a&&b", "a|b", "#comment", "it's", `say "hi"`, `back\slash`, "'", `"`,
	"$HOME", "${HOME}", "$(id)", "EOF", "x\nEOF\ntouch /tmp/pwned", "---", "{a,b}", "*", "~root",
	"!", "!!", "-rf", "--all", "tab\there", "esc\x1b[31mred", "bidi\u202ereversed", "zero\u200bwidth",
	"non-utf8\xff", "ünïcödé", "UPPER", "a/b", "..", "%i", "a\x00b",
}

// kubectl is the runner's kubectl with v as its kubeconfig and context,
// as facts.KubeContext.Kubectl builds it.
func kubectl(v string) fixcode.Cmd {
	return fixcode.Command("kubectl", "--context", v).Env("KUBECONFIG", fixcode.Data(v))
}

func withheld(s checks.Step) bool {
	return s.Kind == checks.KindText && strings.HasPrefix(s.Text, "doctor prints no command here: ")
}

func mustShape(t *testing.T, text string) *shellshape.Shape {
	t.Helper()
	s, err := shellshape.Parse(text)
	if err != nil {
		t.Fatalf("does not parse: %v\n%s", err, text)
	}
	return s
}

func podNamed(ns, name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
}

// describe pod is one command whatever the values: the kubeconfig's path
// and context one word each (or the block withheld), and a pod's
// namespace or name that is not one never printed.
func TestDescribePodHoldsHostileValues(t *testing.T) {
	benign := describePod(kubectl("plain"), podNamed("gitlab-runner", jobName))
	if want := "KUBECONFIG=plain kubectl --context plain describe pod -n gitlab-runner " + jobName; benign.Kind != checks.KindShell || benign.Text != want {
		t.Fatalf("the block is %v, want\n%s", benign, want)
	}
	if err := (fixproof.Checker{}).Step(benign); err != nil {
		t.Error(err)
	}
	shape := mustShape(t, benign.Text)
	for _, v := range hostile {
		if got := describePod(kubectl(v), podNamed("gitlab-runner", jobName)); got.Kind == checks.KindShell {
			s := mustShape(t, got.Text)
			if len(s.Stmts) != 1 || len(s.Words) != len(shape.Words) {
				t.Errorf("kubectl %q changed the structure:\n%s\nparsed as\n%s", v, got.Text, s)
				continue
			}
			for i, w := range shape.Words {
				if g := s.Words[i]; g != strings.ReplaceAll(w, "plain", v) {
					t.Errorf("kubectl %q: word %d is %q, want %q\n%s", v, i, g, strings.ReplaceAll(w, "plain", v), got.Text)
				}
			}
		} else if !withheld(got) {
			t.Errorf("kubectl %q: neither a block nor withheld: %v", v, got)
		}
		if v == "plain" {
			continue
		}
		if got := describePod(kubectl("plain"), podNamed(v, jobName)); !withheld(got) {
			t.Errorf("namespace %q was printed: %v", v, got)
		}
		if got := describePod(kubectl("plain"), podNamed("gitlab-runner", v)); !withheld(got) {
			t.Errorf("name %q was printed: %v", v, got)
		}
	}
}

// Through the check: a Pending job pod whose name the apiserver gives as
// no pod's name is still the finding (its cause quotes the name as
// prose), and its fix withholds the command.
func TestHostilePodNameIsWithheld(t *testing.T) {
	p := pending(jobName, "1", "1Gi")
	p.Name = "runner-abc-project-5-$(touch /tmp/pwned)"
	rs := judge(t, &cluster.Lists{RunnerPods: []corev1.Pod{p}, Nodes: []corev1.Node{node("rented-1", "4", "16Gi")}})
	if len(rs) != 1 || len(rs[0].Findings) != 1 {
		t.Fatalf("want one finding: %+v", rs)
	}
	f := rs[0].Findings[0]
	if len(f.Fix.Blocks()) != 0 || !strings.Contains(f.Fix.String(), "doctor prints no command here: the pod's name is not a valid object name") {
		t.Errorf("the fix is %v", f.Fix)
	}
}
