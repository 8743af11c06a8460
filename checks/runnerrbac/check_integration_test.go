//go:build integration

package runnerrbac

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/checks/checktest/apigatetest"

	authzv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/checktest"
	"github.com/socialwebcomputer/doctor/checks/facts/kubefacts"
	"github.com/socialwebcomputer/doctor/runnerconfig"
	"github.com/socialwebcomputer/doctor/testkit/testenv"
	"github.com/socialwebcomputer/doctor/testkit/testpki"
	"github.com/socialwebcomputer/doctor/testkit/testroot"
)

// runnerUser is the runner identity of TestFollowsFeatureFlags: a
// certificate the apiserver trusts, bound only by its Role in gitlab-runner.
const runnerUser = "ci-flags-runner"

// withFlags is the guide's config with environment entries in [[runners]]
// and a [runners.feature_flags] table when given.
func withFlags(env []string, flags ...string) string {
	c := testroot.GuideConfig
	if len(env) > 0 {
		c = strings.Replace(c, "  executor = \"kubernetes\"\n", "  executor = \"kubernetes\"\n  environment = [\""+strings.Join(env, `", "`)+"\"]\n", 1)
	}
	if len(flags) > 0 {
		c += "\n  [runners.feature_flags]\n"
		for _, f := range flags {
			c += "    " + f + " = true\n"
		}
	}
	return c
}

// neededOf is kubefacts.NeededFor of config's only runner, decoded as doctor
// decodes it.
func neededOf(t *testing.T, config string) []kubefacts.Access {
	t.Helper()
	cfg, _, err := runnerconfig.Decode([]byte(config))
	if err != nil || len(cfg.Runners) != 1 {
		t.Fatalf("config: %v, %d runners\n%s", err, len(cfg.Runners), config)
	}
	return kubefacts.NeededFor(cfg.Runners[0])
}

// rulesFor is a Role's rules granting exactly want but the resources in
// drop: one rule per (group, resource).
func rulesFor(want []kubefacts.Access, drop string) []rbacv1.PolicyRule {
	type gr struct{ group, resource string }
	var order []gr
	verbs := map[gr][]string{}
	for _, a := range want {
		k := gr{a.Group, a.Resource}
		if a.Resource == drop {
			continue
		}
		if _, ok := verbs[k]; !ok {
			order = append(order, k)
		}
		if !slices.Contains(verbs[k], a.Verb) {
			verbs[k] = append(verbs[k], a.Verb)
		}
	}
	var rules []rbacv1.PolicyRule
	for _, k := range order {
		rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{k.group}, Resources: []string{k.resource}, Verbs: verbs[k]})
	}
	return rules
}

func permits(rules []rbacv1.PolicyRule, a kubefacts.Access) bool {
	for _, r := range rules {
		if slices.Contains(r.APIGroups, a.Group) && slices.Contains(r.Resources, a.Resource) && slices.Contains(r.Verbs, a.Verb) {
			return true
		}
	}
	return false
}

// bindRole grants user rules in namespace ns and waits until the
// authorizer, whose cache lags, allows the first of them.
func bindRole(t *testing.T, live *checktest.Live, ns, user string, rules []rbacv1.PolicyRule) {
	t.Helper()
	rbac := live.Clientset().RbacV1()
	if _, err := rbac.Roles(ns).Create(t.Context(), &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: user}, Rules: rules}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := rbac.RoleBindings(ns).Create(t.Context(), &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: user},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	first := rules[0]
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		r, err := live.Clientset().AuthorizationV1().SubjectAccessReviews().Create(t.Context(), &authzv1.SubjectAccessReview{Spec: authzv1.SubjectAccessReviewSpec{
			User: user, Groups: []string{"system:authenticated"},
			ResourceAttributes: &authzv1.ResourceAttributes{Namespace: ns, Verb: first.Verbs[0], Group: first.APIGroups[0], Resource: first.Resources[0]}}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if r.Status.Allowed {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still may not %s %s in %s after 10s", user, first.Verbs[0], first.Resources[0], ns)
		}
	}
}

// denied is what the finding's evidence says is denied, sorted:
// "create pods/attach" of "can-i create pods/attach -n gitlab-runner".
func denied(t *testing.T, f checks.Finding) []string {
	t.Helper()
	var out []string
	for _, e := range f.Evidence {
		if kubefacts.CitesEffectiveCluster(e) {
			continue // the engine's, on every finding of a check that reads the cluster
		}
		s, ok := strings.CutPrefix(e.Source, "can-i ")
		if !ok {
			t.Errorf("evidence %q is not a can-i", e.Source)
			continue
		}
		s, _, _ = strings.Cut(s, " -n ")
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// The verbs the runner needs follow its feature flags (the RBAC table of
// the Kubernetes executor's docs): a Role with all of the defaults' but
// pods/attach fails the attach strategy and passes the legacy one, set in
// [runners.feature_flags] or in environment; honor-entrypoint asks pods/log.
func TestFollowsFeatureFlags(t *testing.T) {
	live := checktest.Cluster(t, "", apigatetest.With())
	live.EnsureNamespace("gitlab-runner")
	defaults := withFlags(nil)
	rules := rulesFor(neededOf(t, defaults), "pods/attach")
	bindRole(t, live, "gitlab-runner", runnerUser, rules)
	now := time.Now()
	cert, key := live.MintClient(runnerUser, nil, now.Add(-time.Hour), now.Add(12*time.Hour))
	kubeconfig := live.Kubeconfig(cert, key)

	legacy := runnerconfig.FFUseLegacyKubernetesExecutionStrategy
	for _, tc := range []struct {
		name   string
		config string
		// missing is what the check names as denied, sorted; nil: pass.
		missing []string
	}{
		{"default flags: the attach strategy", defaults, []string{"create pods/attach", "delete pods/attach", "get pods/attach", "patch pods/attach"}},
		{"legacy strategy in [runners.feature_flags]", withFlags(nil, legacy), nil},
		{"legacy strategy in environment", withFlags([]string{legacy + "=true"}), nil},
		{"legacy strategy, honor entrypoint: pods/log", withFlags(nil, legacy, runnerconfig.FFKubernetesHonorEntrypoint), []string{"get pods/log", "list pods/log"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The expectation and the Role agree: what NeededFor asks of
			// this config that the Role does not grant.
			var gap []string
			for _, a := range neededOf(t, tc.config) {
				if !permits(rules, a) {
					gap = append(gap, a.String())
				}
			}
			slices.Sort(gap)
			if !slices.Equal(gap, tc.missing) {
				t.Fatalf("NeededFor lacks %v from the Role, want %v", gap, tc.missing)
			}
			root := testroot.New(t)
			root.GuideRunner(tc.config, kubeconfig)
			rs := checktest.Check(t, Check, checktest.Root(root.Dir), apigatetest.With())
			if tc.missing == nil {
				checktest.WantResults(t, rs, checktest.ResultWant{Runner: 1, Status: checks.StatusPass})
				return
			}
			checktest.WantResults(t, rs, checktest.ResultWant{Runner: 1, Status: checks.StatusFail, Findings: []checktest.FindingWant{{Severity: checks.Error,
				Says: append([]string{runnerUser + " may not ", `in namespace "gitlab-runner": jobs fail at the step that needs it`}, tc.missing...)}}})
			if len(rs) == 1 && len(rs[0].Findings) == 1 {
				f := rs[0].Findings[0]
				if got := denied(t, f); !slices.Equal(got, tc.missing) {
					t.Errorf("evidence denies %v, want %v", got, tc.missing)
				}
				for _, granted := range []string{"pods/exec", "secrets", "create pods,", "events"} {
					if strings.Contains(f.Cause, granted) {
						t.Errorf("cause names %q, which the Role grants: %s", granted, f.Cause)
					}
				}
			}
		})
	}
}

// A runner's service account whose Role is in its own namespace, sending
// jobs to another: the finding asks whether that namespace is misspelt.
func TestServiceAccountInAnotherNamespace(t *testing.T) {
	live := checktest.Cluster(t, "", apigatetest.With())
	live.EnsureNamespace("gitlab-runner")
	live.EnsureNamespace("gitlab")
	const sa = "system:serviceaccount:gitlab:gitlab-runner"
	bindRole(t, live, "gitlab", sa, rulesFor(neededOf(t, testroot.GuideConfig), ""))
	now := time.Now()
	cert, key := live.MintClient(sa, nil, now.Add(-time.Hour), now.Add(12*time.Hour))
	root := testroot.New(t)
	root.GuideRunner(testroot.GuideConfig, live.Kubeconfig(cert, key))
	rs := checktest.Check(t, Check, checktest.Root(root.Dir), apigatetest.With())
	checktest.WantResults(t, rs, checktest.ResultWant{Runner: 1, Status: checks.StatusFail,
		Findings: []checktest.FindingWant{{Severity: checks.Error, Says: []string{sa + " may not create pods", `in namespace "gitlab-runner"`,
			`The runner's service account belongs to namespace "gitlab", where a runner Deployment's Role lives: is "gitlab-runner", the namespace config.toml sends jobs to, missing or misspelt?`}}}})
	if len(rs) != 1 || len(rs[0].Findings) != 1 {
		return
	}
	// The fix, pasted by an administrator: refused with a context of
	// another server, then applied with the cluster's own, after which the
	// check passes.
	blocks := rs[0].Findings[0].Fix.Blocks()
	if len(blocks) != 1 {
		t.Fatalf("want one block in the fix, got %v", rs[0].Findings[0].Fix)
	}
	adminCert, adminKey := live.AdminCertPEM()
	dir := t.TempDir()
	// adminContext "" leaves ADMIN_CONTEXT unset.
	paste := func(server, adminContext string) (string, error) {
		kc := filepath.Join(dir, "admin.kubeconfig")
		if err := os.WriteFile(kc, testpki.Kubeconfig("admin", server, live.CAPEM, adminCert, adminKey), 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("bash", "-c", blocks[0].Text)
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "ADMIN_CONTEXT=") {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		cmd.Env = append(cmd.Env, "KUBECONFIG="+kc, "PATH="+testenv.ToolsDir()+"/bin:"+os.Getenv("PATH"))
		if adminContext != "" {
			cmd.Env = append(cmd.Env, "ADMIN_CONTEXT="+adminContext)
		}
		b, err := cmd.CombinedOutput()
		return string(b), err
	}
	granted := func() bool {
		_, err := live.Clientset().RbacV1().RoleBindings("gitlab-runner").Get(t.Context(), grantName, metav1.GetOptions{})
		return err == nil
	}
	// Without ADMIN_CONTEXT the guard stops the block, saying what to set
	// (its word is constant: nothing of the server's is expanded).
	if out, err := paste(live.URL, ""); err == nil || !strings.Contains(out, "set ADMIN_CONTEXT to a context with admin rights") || granted() {
		t.Errorf("the grant ran without ADMIN_CONTEXT (%v):\n%s", err, out)
	}
	if out, err := paste("https://127.0.0.1:1", "admin"); err == nil || granted() {
		t.Errorf("the grant ran with a context of another server:\n%s", out)
	}
	if out, err := paste(live.URL, "admin"); err != nil || !granted() {
		t.Fatalf("the grant, pasted as an administrator of the runner's cluster: %v\n%s\n%s", err, out, blocks[0].Text)
	}
	checktest.WantResults(t, checktest.Check(t, Check, checktest.Root(root.Dir), apigatetest.With()), checktest.ResultWant{Runner: 1, Status: checks.StatusPass})
}
