package runnerrbac

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts"
	"github.com/socialwebcomputer/doctor/internal/testing/fixproof"
	"github.com/socialwebcomputer/doctor/internal/testing/shellshape"
)

var missing = []facts.Access{
	{Verb: "create", Resource: "pods/exec", Namespace: "ci"},
	{Verb: "create", Resource: "secrets", Namespace: "ci"},
	{Verb: "get", Resource: "pods/exec", Namespace: "ci"},
	{Verb: "create", Group: "policy", Resource: "poddisruptionbudgets", Namespace: "ci"},
}

// The grant is exactly what is missing, for the identity the apiserver
// named, behind a guard that refuses another cluster; bash -n and
// shellcheck accept it (the live test dry-runs its manifest).
func TestGrantFix(t *testing.T) {
	for user, want := range map[string][]string{
		"system:serviceaccount:gitlab:gitlab-runner": {"subjects:\n- kind: ServiceAccount\n  name: gitlab-runner\n  namespace: gitlab\n"},
		"did:plc:ewvi7nxzyoun6zhxrhs64oiz":           {"subjects:\n- apiGroup: rbac.authorization.k8s.io\n  kind: User\n  name: did:plc:ewvi7nxzyoun6zhxrhs64oiz\n"},
	} {
		fix := grantFix(user, "https://127.0.0.1:6443", "ci", missing)
		blocks := fix.Blocks()
		if len(blocks) != 1 || blocks[0].Kind != checks.KindShell {
			t.Fatalf("%s: want one shell block, got %#v", user, fix)
		}
		b := blocks[0].Text
		for _, s := range append(want,
			`: "${ADMIN_CONTEXT:?set ADMIN_CONTEXT to a context with admin rights on the cluster of the runner}"`+"\n",
			`test "$(kubectl config view --minify --context "$ADMIN_CONTEXT" -o 'jsonpath={.clusters[0].cluster.server}')" = https://127.0.0.1:6443 && kubectl --context "$ADMIN_CONTEXT" apply -f - <<'EOF'`+"\n",
			"kind: Role\nmetadata:\n  name: gitlab-runner-executor\n  namespace: ci\n",
			"rules:\n- apiGroups:\n  - \"\"\n  resources:\n  - pods/exec\n  verbs:\n  - create\n  - get\n",
			"- apiGroups:\n  - policy\n  resources:\n  - poddisruptionbudgets\n  verbs:\n  - create\n",
			"roleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: Role\n  name: gitlab-runner-executor\n") {
			if !strings.Contains(b, s) {
				t.Errorf("%s: the block lacks %q:\n%s", user, s, b)
			}
		}
		if err := (fixproof.Checker{}).Step(blocks[0]); err != nil {
			t.Errorf("%s: %v\n%s", user, err, b)
		}
	}
	if fix := grantFix("", "https://127.0.0.1:6443", "ci", missing); len(fix.Blocks()) != 0 {
		t.Errorf("an unknown identity gets a grant: %v", fix)
	}
}

// The guard's first line is constant: bash expands the word of
// ${ADMIN_CONTEXT:?word} when the variable is unset, so the server is
// never in it; it is one word of the comparison, without its userinfo.
func TestGuardHoldsNoServer(t *testing.T) {
	const server = "https://admin:s3cret@kcp.example.invalid:6443/#$(touch /tmp/pwned)"
	fix := grantFix("ci-runner", server, "ci", missing)
	blocks := fix.Blocks()
	if len(blocks) != 1 {
		t.Fatalf("want one block, got %v", fix)
	}
	first, _, _ := strings.Cut(blocks[0].Text, "\n")
	if first != adminGuard {
		t.Errorf("the guard is %q, want %q", first, adminGuard)
	}
	shape := mustShape(t, blocks[0].Text)
	if !contains(shape.Words, "https://kcp.example.invalid:6443/#$(touch /tmp/pwned)") {
		t.Errorf("the server is not one word of the block, userinfo stripped:\n%s\n%s", blocks[0].Text, shape)
	}
	if strings.Contains(fix.String(), "s3cret") || strings.Contains(fix.String(), "admin:") {
		t.Errorf("the server's userinfo is printed: %s", fix)
	}
}

// hostile are values an attacker puts where the grant takes a host value:
// every character that ends a word, a line, a quote, a heredoc or a
// document, and the ones a terminal hides.
var hostile = []string{
	"plain", "", "two words", "new\nline", "x\n$(touch /tmp/pwned)", "`touch /tmp/pwned`",
	"a;b", "a&&b", "a|b", "#comment", "it's", `say "hi"`, `back\slash`, "'", `"`,
	"$HOME", "${HOME}", "$(id)", "EOF", "x\nEOF\ntouch /tmp/pwned", "EOF_1",
	"---", "x\n---\napiVersion: v1\nkind: Namespace", "{a,b}", "*", "~root", "!", "!!", "-rf",
	"tab\there", "esc\x1b[31mred", "bidi\u202ereversed", "zero\u200bwidth", "non-utf8\xff", "ünïcödé",
	"%i", "name: x\nsubjects: []", "a\x00b",
}

// Whatever the server, the namespace or the identity hold, the grant is
// the same commands: the server arrives as one word of itself, a
// namespace or service account that is not a name is refused (no block),
// and a user's name is the subject's name in the manifest, whole, or the
// block is withheld.
func TestGrantHoldsHostileValues(t *testing.T) {
	benign := grantFix("did:plc:x", "plain", "ci", missing).Blocks()
	if len(benign) != 1 {
		t.Fatalf("no benign block")
	}
	want := mustShape(t, benign[0].Text)
	for _, v := range hostile {
		// The server.
		if b := grantFix("did:plc:x", v, "ci", missing).Blocks(); len(b) == 1 {
			got := mustShape(t, b[0].Text)
			if len(got.Stmts) != len(want.Stmts) || len(got.Words) != len(want.Words) || len(got.Heredocs) != 1 || got.Heredocs[0] != want.Heredocs[0] {
				t.Errorf("server %q changed the structure:\n%s\nparsed as\n%s\nnot like\n%s", v, b[0].Text, got, want)
			} else {
				for i, w := range want.Words {
					if g := got.Words[i]; g != strings.ReplaceAll(w, "plain", v) {
						t.Errorf("server %q: word %d is %q, want %q\n%s", v, i, g, strings.ReplaceAll(w, "plain", v), b[0].Text)
					}
				}
			}
		} else if v != "" && !withheld(grantFix("did:plc:x", v, "ci", missing)) {
			t.Errorf("server %q: neither one word nor withheld: %v", v, grantFix("did:plc:x", v, "ci", missing))
		}
		// The namespace config.toml gives, and a service account's.
		for what, fix := range map[string]checks.Steps{
			"namespace":                   grantFix("did:plc:x", "https://127.0.0.1:6443", v, missing),
			"service account's name":      grantFix("system:serviceaccount:gitlab:"+v, "https://127.0.0.1:6443", "ci", missing),
			"service account's namespace": grantFix("system:serviceaccount:"+v+":runner", "https://127.0.0.1:6443", "ci", missing),
		} {
			if v == "plain" {
				if len(fix.Blocks()) != 1 {
					t.Errorf("%s %q: no grant: %v", what, v, fix)
				}
				continue
			}
			if !withheld(fix) {
				t.Errorf("%s %q was printed: %v", what, v, fix)
			}
		}
		// A user's name: data of the RoleBinding's subject.
		fix := grantFix(v, "https://127.0.0.1:6443", "ci", missing)
		b := fix.Blocks()
		if len(b) == 0 {
			if v != "" && !withheld(fix) {
				t.Errorf("user %q: no block and no reason: %v", v, fix)
			}
			continue
		}
		got := mustShape(t, b[0].Text)
		if len(got.Stmts) != len(want.Stmts) || len(got.Heredocs) != 1 {
			t.Errorf("user %q changed the structure:\n%s", v, b[0].Text)
			continue
		}
		objs := decodeAll(t, got.Heredocs[0])
		if len(objs) != 2 || objs[0].GetKind() != "Role" || objs[1].GetKind() != "RoleBinding" || objs[1].GetNamespace() != "ci" {
			t.Errorf("user %q: the manifest is not the Role and the RoleBinding:\n%s", v, got.Heredocs[0])
			continue
		}
		subj, _, _ := unstructured.NestedSlice(objs[1].Object, "subjects")
		if len(subj) != 1 || subj[0].(map[string]any)["name"] != v || subj[0].(map[string]any)["kind"] != "User" {
			t.Errorf("user %q: subjects decoded as %v", v, subj)
		}
	}
}

func withheld(s checks.Steps) bool {
	return len(s.Blocks()) == 0 && strings.Contains(s.String(), "doctor prints no command here: ")
}

func contains(ws []string, w string) bool {
	for _, x := range ws {
		if x == w {
			return true
		}
	}
	return false
}

func mustShape(t *testing.T, text string) *shellshape.Shape {
	t.Helper()
	s, err := shellshape.Parse(text)
	if err != nil {
		t.Fatalf("does not parse: %v\n%s", err, text)
	}
	return s
}

func decodeAll(t *testing.T, text string) []*unstructured.Unstructured {
	t.Helper()
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(text), 4096)
	var out []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if err.Error() == "EOF" {
				return out
			}
			t.Fatalf("does not decode: %v\n%s", err, text)
		}
		if len(u.Object) > 0 {
			out = append(out, u)
		}
	}
}
