package runnerrbac

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts/kubefacts"
	"github.com/socialwebcomputer/doctor/internal/fixcode"
	"github.com/socialwebcomputer/doctor/testkit/docshape"
	"github.com/socialwebcomputer/doctor/testkit/fixproof"
	"github.com/socialwebcomputer/doctor/testkit/hostile"
	"github.com/socialwebcomputer/doctor/testkit/hostilefix"
)

var missing = []kubefacts.Access{
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
	shape := hostilefix.MustShape(t, blocks[0].Text)
	if !contains(shape.Words, "https://kcp.example.invalid:6443/#$(touch /tmp/pwned)") {
		t.Errorf("the server is not one word of the block, userinfo stripped:\n%s\n%s", blocks[0].Text, shape)
	}
	if strings.Contains(fix.String(), "s3cret") || strings.Contains(fix.String(), "admin:") {
		t.Errorf("the server's userinfo is printed: %s", fix)
	}
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
	want := hostilefix.MustShape(t, benign[0].Text)
	if len(want.Heredocs) != 1 || strings.Contains(want.Heredocs[0], "plain") {
		t.Fatalf("the grant is not one manifest without the server:\n%s", benign[0].Text)
	}
	// The server: one word of itself, the manifest the same, or withheld
	// ("" is none: the fix is a sentence to bind the identity, no grant).
	var servers []string
	for _, v := range hostile.Values {
		if v != "" {
			servers = append(servers, v)
		}
	}
	hostilefix.HoldsValues(t, servers, func(v string) checks.Steps {
		return grantFix("did:plc:x", v, "ci", missing)
	})
	// The namespace config.toml gives, and a service account's: a name,
	// or no grant.
	for what, c := range map[string]struct {
		valid func(string) error
		build func(v string) checks.Steps
	}{
		"namespace": {fixcode.NamespaceName, func(v string) checks.Steps {
			return grantFix("did:plc:x", "https://127.0.0.1:6443", v, missing)
		}},
		"service account's name": {fixcode.ObjectName, func(v string) checks.Steps {
			return grantFix("system:serviceaccount:gitlab:"+v, "https://127.0.0.1:6443", "ci", missing)
		}},
		"service account's namespace": {fixcode.NamespaceName, func(v string) checks.Steps {
			return grantFix("system:serviceaccount:"+v+":runner", "https://127.0.0.1:6443", "ci", missing)
		}},
	} {
		t.Run(what, func(t *testing.T) { hostilefix.HoldsNames(t, hostile.Values, c.valid, c.build) })
	}
	for _, v := range hostile.Values {
		// A user's name: data of the RoleBinding's subject.
		fix := grantFix(v, "https://127.0.0.1:6443", "ci", missing)
		b := fix.Blocks()
		if len(b) == 0 {
			if v != "" && !hostilefix.Withheld(fix) {
				t.Errorf("user %q: no block and no reason: %v", v, fix)
			}
			continue
		}
		got := hostilefix.MustShape(t, b[0].Text)
		if len(got.Stmts) != len(want.Stmts) || len(got.Heredocs) != 1 {
			t.Errorf("user %q changed the structure:\n%s", v, b[0].Text)
			continue
		}
		objs, err := docshape.Objects(got.Heredocs[0])
		if err != nil {
			t.Fatalf("does not decode: %v\n%s", err, got.Heredocs[0])
		}
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

func contains(ws []string, w string) bool {
	for _, x := range ws {
		if x == w {
			return true
		}
	}
	return false
}
