package runnerrbac

import (
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts"
	"github.com/socialwebcomputer/doctor/internal/testing/fixproof"
)

// The grant is exactly what is missing, for the identity the apiserver
// named, behind a guard that refuses another cluster; bash -n and
// shellcheck accept it (the live test dry-runs its manifest).
func TestGrantFix(t *testing.T) {
	missing := []facts.Access{
		{Verb: "create", Resource: "pods/exec", Namespace: "ci"},
		{Verb: "create", Resource: "secrets", Namespace: "ci"},
		{Verb: "get", Resource: "pods/exec", Namespace: "ci"},
		{Verb: "create", Group: "policy", Resource: "poddisruptionbudgets", Namespace: "ci"},
	}
	for user, want := range map[string][]string{
		"system:serviceaccount:gitlab:gitlab-runner": {"- kind: ServiceAccount\n  name: gitlab-runner\n  namespace: gitlab\n"},
		"did:plc:ewvi7nxzyoun6zhxrhs64oiz":           {"- kind: User\n  apiGroup: rbac.authorization.k8s.io\n  name: \"did:plc:ewvi7nxzyoun6zhxrhs64oiz\"\n"},
	} {
		fix := grantFix(user, "https://127.0.0.1:6443", "ci", missing)
		blocks := fix.Blocks()
		if len(blocks) != 1 || blocks[0].Kind != checks.KindShell {
			t.Fatalf("%s: want one shell block, got %#v", user, fix)
		}
		b := blocks[0].Text
		for _, s := range append(want,
			`: "${ADMIN_CONTEXT:?set ADMIN_CONTEXT to a context of yours with admin rights on https://127.0.0.1:6443}"`,
			`-o jsonpath='{.clusters[0].cluster.server}')" = https://127.0.0.1:6443 &&`,
			"- apiGroups: [\"\"]\n  resources: [\"pods/exec\"]\n  verbs: [\"create\", \"get\"]\n",
			"- apiGroups: [\"policy\"]\n  resources: [\"poddisruptionbudgets\"]\n  verbs: [\"create\"]\n",
			"  namespace: ci\n") {
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
