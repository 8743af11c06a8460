package kubeletreach

import (
	"fmt"
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/checks"
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
	"-rf", "--kubeconfig=/etc/shadow", "ünïcödé", "UPPER", "a/b", "..", "dot.ted",
}

// The read a finding gives: the kubectl facts give carries its kubeconfig
// and context as data words; the pod's namespace and name are checked
// names, or the block is a sentence that says which is none.
func TestReadByteHoldsHostileValues(t *testing.T) {
	kubectl := func(v string) fixcode.Cmd {
		return fixcode.Command("kubectl", "--context", v).Env("KUBECONFIG", fixcode.Data("/etc/gitlab-runner/"+v))
	}
	benign := readByte(kubectl("plain"), "kube-system", "node-dns-a")
	const wantText = "KUBECONFIG=/etc/gitlab-runner/plain kubectl --context plain logs -n kube-system node-dns-a --limit-bytes=1"
	if benign.Kind != checks.KindShell || benign.Text != wantText {
		t.Fatalf("%+v, want %s", benign, wantText)
	}
	want := mustShape(t, benign.Text)
	for _, v := range hostile {
		got := readByte(kubectl(v), "kube-system", "node-dns-a")
		s := mustShape(t, got.Text)
		if len(s.Stmts) != 1 || len(s.Words) != len(want.Words) {
			t.Errorf("%q changed the command:\n%s\n%s", v, got.Text, s)
			continue
		}
		for i, w := range want.Words {
			if e := strings.ReplaceAll(w, "plain", v); s.Words[i] != e {
				t.Errorf("%q: word %d is %q, want %q", v, i, s.Words[i], e)
			}
		}
		for _, tc := range []struct {
			ns, pod, which string
			err            error
		}{
			{v, "node-dns-a", "namespace", fixcode.NamespaceName(v)},
			{"kube-system", v, "name", fixcode.ObjectName(v)},
		} {
			st := readByte(kubectl("plain"), tc.ns, tc.pod)
			if tc.err != nil {
				if st.Kind != checks.KindText || !strings.HasPrefix(st.Text, "doctor prints no command here: the pod's "+tc.which+" is not a valid") {
					t.Errorf("%q as the pod's %s: %+v", v, tc.which, st)
				}
				continue
			}
			if s := mustShape(t, st.Text); len(s.Stmts) != 1 || !strings.Contains(s.Stmts[0], fmt.Sprintf("%q", v)) {
				t.Errorf("%q as the pod's %s: %s", v, tc.which, s)
			}
		}
	}
}

func mustShape(t *testing.T, text string) *shellshape.Shape {
	t.Helper()
	s, err := shellshape.Parse(text)
	if err != nil {
		t.Fatalf("does not parse: %v\n%s", err, text)
	}
	return s
}
