package kubeletserving

import (
	"fmt"
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/internal/fixcode"
	"github.com/socialwebcomputer/doctor/internal/testing/shellshape"
	"github.com/socialwebcomputer/doctor/runnerconfig"
)

// hostile are values an attacker puts where a fix takes a host value: what
// ends a word, a line, a quote, a heredoc or a document, what a terminal
// hides, and what a command would read as an option.
var hostile = []string{
	"plain", "two words", "new\nline", "x\n$(touch /tmp/pwned)", "`touch /tmp/pwned`", "a;b", "a|b",
	"it's", `say "hi"`, "$(id)", "${HOME}", "EOF", "x\nEOF\ntouch /tmp/pwned", "---",
	"x\n---\napiVersion: v1\nkind: Namespace", "bidi\u202ereversed", "zero\u200bwidth", "tab\there", "!!",
	"-rf", "--kubeconfig=/etc/shadow", "ünïcödé", "CSR-Upper", "a/b", "..", "node-csr.x",
}

// The approval a finding gives: the kubectl facts give carries its
// kubeconfig and context as data words; a CSR's name is an object name,
// one word, or the block is a sentence that says it is none.
func TestApproveHoldsHostileValues(t *testing.T) {
	kubectl := func(v string) fixcode.Cmd {
		return fixcode.Command("kubectl", "--context", v).Env("KUBECONFIG", fixcode.Data("/etc/gitlab-runner/"+v))
	}
	benign := approveStep(kubectl("plain"), "csr-a")
	const wantText = "KUBECONFIG=/etc/gitlab-runner/plain kubectl --context plain certificate approve csr-a"
	if benign.Kind != checks.KindShell || benign.Text != wantText {
		t.Fatalf("%+v, want %s", benign, wantText)
	}
	want := mustShape(t, benign.Text)
	for _, v := range hostile {
		got := mustShape(t, approveStep(kubectl(v), "csr-a").Text)
		if len(got.Stmts) != 1 || len(got.Words) != len(want.Words) {
			t.Errorf("%q changed the command: %s", v, got)
			continue
		}
		for i, w := range want.Words {
			if e := strings.ReplaceAll(w, "plain", v); got.Words[i] != e {
				t.Errorf("%q: word %d is %q, want %q", v, i, got.Words[i], e)
			}
		}
		st := approveStep(kubectl("plain"), v)
		if fixcode.ObjectName(v) != nil {
			if st.Kind != checks.KindText || !strings.HasPrefix(st.Text, "doctor prints no command here: the CSR's name is not a valid object name") {
				t.Errorf("%q as a CSR's name: %+v", v, st)
			}
			continue
		}
		if s := mustShape(t, st.Text); len(s.Stmts) != 1 || !strings.HasSuffix(s.Stmts[0], fmt.Sprintf(`"certificate", "approve", %q)`, v)) {
			t.Errorf("%q as a CSR's name: %s", v, s)
		}
	}
}

// The flag's TOML is the runner's table and key, as the encoder writes them.
func TestFlagFix(t *testing.T) {
	steps := flagFix(runnerconfig.Waiting{})
	if len(steps) != 2 || steps[1].Kind != checks.KindTOML || steps[1].Text != "[runners.feature_flags]\nFF_WAIT_FOR_POD_TO_BE_REACHABLE = true" {
		t.Errorf("%+v", steps)
	}
	if flagFix(runnerconfig.Waiting{On: true}) != nil {
		t.Error("a fix for a flag that is set")
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
