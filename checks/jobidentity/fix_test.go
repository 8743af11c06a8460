package jobidentity

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/checktest"
	"github.com/socialwebcomputer/doctor/checks/checktest/apigatetest"
	"github.com/socialwebcomputer/doctor/checks/client/kube/kubefake"
	"github.com/socialwebcomputer/doctor/checks/facts/kubefacts"
	"github.com/socialwebcomputer/doctor/internal/fixcode"
	"github.com/socialwebcomputer/doctor/testkit/fixproof"
	"github.com/socialwebcomputer/doctor/testkit/hostile"
	"github.com/socialwebcomputer/doctor/testkit/hostilefix"
	"github.com/socialwebcomputer/doctor/testkit/testroot"
)

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
		benign := fix(hostilefix.KubectlOf("plain", "plain"), "ci", "registry")
		if benign.Kind != checks.KindShell {
			t.Fatalf("%s: no block: %v", what, benign)
		}
		if err := (fixproof.Checker{}).Step(benign); err != nil {
			t.Errorf("%s: %v\n%s", what, err, benign.Text)
		}
		t.Run(what, func(t *testing.T) {
			hostilefix.HoldsValues(t, hostile.Values, func(v string) checks.Steps {
				return checks.Steps{fix(hostilefix.KubectlOf(v, v), "ci", "registry")}
			})
			hostilefix.HoldsNames(t, hostile.Values, fixcode.NamespaceName, func(v string) checks.Steps {
				return checks.Steps{fix(hostilefix.KubectlOf("ctx", "ctx"), v, "registry")}
			})
			if what == "label" {
				return
			}
			hostilefix.HoldsNames(t, hostile.Values, fixcode.ObjectName, func(v string) checks.Steps {
				return checks.Steps{fix(hostilefix.KubectlOf("ctx", "ctx"), "ci", v)}
			})
		})
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

// config.toml's service_account, whatever it holds, is a service
// account's name the fix creates (one word), or the finding itself, with
// no block and no request for it.
func TestServiceAccountNameHoldsHostileValues(t *testing.T) {
	for _, v := range hostile.Values {
		if v == "" || !utf8.ValidString(v) {
			continue // "" is no service account; TOML holds UTF-8 only
		}
		config := strings.Replace(testroot.GuideConfig, "    poll_timeout = 3600\n", "    poll_timeout = 3600\n    service_account = "+hostilefix.TOMLString(t, v)+"\n", 1)
		root := testroot.New(t)
		root.Write("/etc/gitlab-runner/config.toml", config, 0o600)
		cs := fake.NewClientset(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "gitlab-runner"}})
		r := checktest.One(t, Check, checktest.Root(root.Dir), apigatetest.With(),
			checktest.Fact(kubefacts.APIClientFact, &kubefacts.APIClient{Client: kubefake.Wrap(cs), Server: "https://127.0.0.1:6443"}),
			checktest.Fact(kubefacts.IdentityFact, &kubefacts.Identity{User: "owner", Server: "https://127.0.0.1:6443"}),
			checktest.Fact(kubefacts.ClientCertFact, &kubefacts.ClientCert{}))
		if len(r.Findings) != 1 {
			t.Errorf("%q: want one finding, got %s %+v", v, r.Status, r)
			continue
		}
		f := r.Findings[0]
		name := fixcode.ObjectName(v) == nil
		for _, a := range cs.Actions() {
			if a.GetResource().Resource == "serviceaccounts" && !name {
				t.Errorf("%q: asked the apiserver for it: %v", v, a)
			}
		}
		if !name {
			said := fmt.Sprintf("config.toml's service_account %q is not a valid object name", v)
			if len(v) >= 100 { // a longer one may be redacted as base64
				said = "is not a valid object name"
			}
			if len(f.Fix.Blocks()) != 0 || !strings.Contains(f.Cause, said) {
				t.Errorf("%q: not refused as the finding: %s\n%v", v, f.Cause, f.Fix)
			}
			continue
		}
		const want = "kubectl create serviceaccount -n gitlab-runner plain"
		if b := f.Fix.Blocks(); len(b) != 1 || b[0].Kind != checks.KindShell || v == "plain" && b[0].Text != want {
			t.Errorf("%q: the fix is %v", v, f.Fix)
		} else {
			hostilefix.SameShape(t, v, want, b[0].Text)
		}
	}
}
