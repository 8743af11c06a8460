package namespacequota

import (
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/checks"
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

// The leaked objects' delete is one command whatever the values: the
// kubeconfig's path and context are one word each (or the block is
// withheld), and a namespace or an object name the apiserver gave that is
// not one is never printed (-rf, --all and a/b included: a name is never
// an option or a path of kubectl's).
func TestDeleteLeakedHoldsHostileValues(t *testing.T) {
	leaked := []string{"runner-abc-project-5-concurrent-0-x", "runner-abc-project-5-concurrent-1-y"}
	benign := deleteLeaked(kubectl("plain"), "secrets", "gitlab-runner", leaked)
	want := "KUBECONFIG=plain kubectl --context plain delete secrets -n gitlab-runner runner-abc-project-5-concurrent-0-x runner-abc-project-5-concurrent-1-y"
	if benign.Kind != checks.KindShell || benign.Text != want {
		t.Fatalf("the block is %v, want\n%s", benign, want)
	}
	if err := (fixproof.Checker{}).Step(benign); err != nil {
		t.Error(err)
	}
	shape := mustShape(t, benign.Text)
	for _, v := range hostile {
		if got := deleteLeaked(kubectl(v), "secrets", "gitlab-runner", leaked); got.Kind == checks.KindShell {
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
		if got := deleteLeaked(kubectl("plain"), "secrets", v, leaked); !withheld(got) {
			t.Errorf("namespace %q was printed: %v", v, got)
		}
		for _, name := range []string{v, "runner-abc-project-" + v} {
			got := deleteLeaked(kubectl("plain"), "secrets", "gitlab-runner", append([]string{leaked[0]}, name))
			if fixcode.ObjectName(name) == nil {
				// A name ("runner-abc-project--rf"): the last word, whole.
				if s := mustShape(t, got.Text); got.Kind != checks.KindShell || s.Words[len(s.Words)-1] != name {
					t.Errorf("name %q is not the last word: %v", name, got)
				}
				continue
			}
			if !withheld(got) {
				t.Errorf("name %q was printed: %v", name, got)
			}
		}
	}
}
