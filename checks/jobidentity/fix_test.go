package jobidentity

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/BurntSushi/toml"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/checktest"
	"github.com/socialwebcomputer/doctor/checks/checktest/apigatetest"
	"github.com/socialwebcomputer/doctor/checks/client/kube/kubefake"
	"github.com/socialwebcomputer/doctor/checks/facts"
	"github.com/socialwebcomputer/doctor/internal/fixcode"
	"github.com/socialwebcomputer/doctor/internal/testing/fixproof"
	"github.com/socialwebcomputer/doctor/internal/testing/shellshape"
	"github.com/socialwebcomputer/doctor/internal/testing/testroot"
)

// hostile are values an attacker puts where a fix takes a host value:
// every character that ends a word, a line, a quote, a heredoc or a
// document, and the ones a terminal hides.
var hostile = []string{
	"plain", "", "two words", "new\nline", "x\n$(touch /tmp/pwned)", "`touch /tmp/pwned`",
	"a;b", "a&&b", "a|b", "#comment", "it's", `say "hi"`, `back\slash`, "'", `"`,
	"$HOME", "${HOME}", "$(id)", "EOF", "x\nEOF\ntouch /tmp/pwned", "EOF_1",
	"---", "x\n---\napiVersion: v1\nkind: Namespace", "{a,b}", "*", "~root", "!", "!!", "-rf", "--all",
	"tab\there", "esc\x1b[31mred", "bidi\u202ereversed", "zero\u200bwidth", "non-utf8\xff", "ünïcödé",
	"UPPER", "a/b", "..", "%i", "a\x00b",
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

// The fixes' commands are the same whatever the values: the kubeconfig's
// path and context arrive as one word each (or the block is withheld), and
// a namespace or an object name that is not one is never printed.
func TestFixesHoldHostileValues(t *testing.T) {
	fixes := map[string]func(k fixcode.Cmd, ns, name string) checks.Step{
		"create serviceaccount": createServiceAccount,
		"create secret":         createPullSecret,
		"label":                 func(k fixcode.Cmd, ns, _ string) checks.Step { return labelBaseline(k, ns) },
	}
	for what, fix := range fixes {
		benign := fix(kubectl("plain"), "ci", "registry")
		if benign.Kind != checks.KindShell {
			t.Fatalf("%s: no block: %v", what, benign)
		}
		if err := (fixproof.Checker{}).Step(benign); err != nil {
			t.Errorf("%s: %v\n%s", what, err, benign.Text)
		}
		want := mustShape(t, benign.Text)
		for _, v := range hostile {
			if got := fix(kubectl(v), "ci", "registry"); got.Kind == checks.KindShell {
				shape := mustShape(t, got.Text)
				if len(shape.Stmts) != len(want.Stmts) || len(shape.Words) != len(want.Words) {
					t.Errorf("%s: kubectl %q changed the structure:\n%s\nparsed as\n%s\nnot like\n%s", what, v, got.Text, shape, want)
					continue
				}
				for i, w := range want.Words {
					if g := shape.Words[i]; g != strings.ReplaceAll(w, "plain", v) {
						t.Errorf("%s: kubectl %q: word %d is %q, want %q\n%s", what, v, i, g, strings.ReplaceAll(w, "plain", v), got.Text)
					}
				}
			} else if !withheld(got) {
				t.Errorf("%s: kubectl %q: neither a block nor withheld: %v", what, v, got)
			}
			if v == "plain" {
				continue
			}
			if got := fix(kubectl("plain"), v, "registry"); !withheld(got) {
				t.Errorf("%s: namespace %q was printed: %v", what, v, got)
			}
			if what == "label" {
				continue
			}
			if got := fix(kubectl("plain"), "ci", v); !withheld(got) {
				t.Errorf("%s: name %q was printed: %v", what, v, got)
			}
		}
	}
}

// The registry's token is read from the terminal into a variable: the
// block never holds it.
func TestPullSecretReadsTheToken(t *testing.T) {
	s := createPullSecret(fixcode.Command("kubectl"), "gitlab-runner", "registry")
	want := "REGISTRY=registry.example.com\nREGISTRY_USER=ci\nread -rs REGISTRY_TOKEN\n" +
		`kubectl create secret docker-registry -n gitlab-runner registry --docker-server="$REGISTRY" --docker-username="$REGISTRY_USER" --docker-password="$REGISTRY_TOKEN"`
	if s.Kind != checks.KindShell || s.Text != want {
		t.Errorf("the block is\n%s\nwant\n%s", s.Text, want)
	}
}

// tomlString is v as a TOML basic string, as BurntSushi/toml (the
// runner's TOML library) writes it.
func tomlString(t *testing.T, v string) string {
	t.Helper()
	var b strings.Builder
	if err := toml.NewEncoder(&b).Encode(map[string]string{"k": v}); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(strings.TrimPrefix(b.String(), "k = "))
}

// config.toml's service_account, whatever it holds, is a service
// account's name the fix creates (one word), or the finding itself, with
// no block and no request for it.
func TestServiceAccountNameHoldsHostileValues(t *testing.T) {
	for _, v := range hostile {
		if v == "" || !utf8.ValidString(v) {
			continue // "" is no service account; TOML holds UTF-8 only
		}
		config := strings.Replace(testroot.GuideConfig, "    poll_timeout = 3600\n", "    poll_timeout = 3600\n    service_account = "+tomlString(t, v)+"\n", 1)
		root := testroot.New(t)
		root.Write("/etc/gitlab-runner/config.toml", config, 0o600)
		cs := fake.NewClientset(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "gitlab-runner"}})
		r := checktest.One(t, Check, checktest.Root(root.Dir), apigatetest.With(),
			checktest.Fact(facts.APIClientFact, &facts.APIClient{Client: kubefake.Wrap(cs), Server: "https://127.0.0.1:6443"}),
			checktest.Fact(facts.IdentityFact, &facts.Identity{User: "owner", Server: "https://127.0.0.1:6443"}),
			checktest.Fact(facts.ClientCertFact, &facts.ClientCert{}))
		if len(r.Findings) != 1 {
			t.Errorf("%q: want one finding, got %s %+v", v, r.Status, r)
			continue
		}
		f := r.Findings[0]
		for _, a := range cs.Actions() {
			if a.GetResource().Resource == "serviceaccounts" && v != "plain" {
				t.Errorf("%q: asked the apiserver for it: %v", v, a)
			}
		}
		if v != "plain" {
			if len(f.Fix.Blocks()) != 0 || !strings.Contains(f.Cause, fmt.Sprintf("config.toml's service_account %q is not a valid object name", v)) {
				t.Errorf("%q: not refused as the finding: %s\n%v", v, f.Cause, f.Fix)
			}
			continue
		}
		if b := f.Fix.Blocks(); len(b) != 1 || b[0].Text != "kubectl create serviceaccount -n gitlab-runner plain" {
			t.Errorf("%q: the fix is %v", v, f.Fix)
		}
	}
}
