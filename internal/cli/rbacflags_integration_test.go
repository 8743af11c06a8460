//go:build integration

package cli

import (
	"slices"
	"strings"
	"testing"
	"time"

	authzv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/socialwebcomputer/doctor/checks/facts"
	"github.com/socialwebcomputer/doctor/internal/testing/testenv"
	"github.com/socialwebcomputer/doctor/internal/testing/testpki"
	"github.com/socialwebcomputer/doctor/internal/testing/testroot"
	"github.com/socialwebcomputer/doctor/report"
	"github.com/socialwebcomputer/doctor/runnerconfig"
)

// flagsUser is the runner identity of TestRunnerRBACFollowsFeatureFlags:
// a certificate the apiserver trusts, bound only by flagsRole in ns-alpha.
const (
	flagsUser = "ci-flags-runner"
	flagsRole = "ci-flags-runner"
)

// flagsConfig is the one-runner config.toml of twoRunnersConfig for
// ns-alpha, with environment entries in [[runners]] and a
// [runners.feature_flags] table when given.
func flagsConfig(env []string, flags map[string]bool) string {
	c := twoRunnersConfig(kubeRunner{name: "alpha", namespace: "ns-alpha"})
	if len(env) > 0 {
		var b strings.Builder
		b.WriteString("  environment = [")
		for i, e := range env {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(`"` + e + `"`)
		}
		b.WriteString("]\n")
		anchor := "  executor = \"kubernetes\"\n"
		if !strings.Contains(c, anchor) {
			panic("twoRunnersConfig has no executor line to put environment after")
		}
		c = strings.Replace(c, anchor, anchor+b.String(), 1)
	}
	if len(flags) > 0 {
		c += "\n  [runners.feature_flags]\n"
		names := make([]string, 0, len(flags))
		for n := range flags {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, n := range names {
			v := "false"
			if flags[n] {
				v = "true"
			}
			c += "    " + n + " = " + v + "\n"
		}
	}
	return c
}

// neededOf is facts.NeededFor of config's only runner, the config
// decoded as doctor decodes it.
func neededOf(t *testing.T, config string) []facts.Access {
	t.Helper()
	cfg, _, err := runnerconfig.Decode([]byte(config))
	if err != nil {
		t.Fatalf("config does not decode: %v\n%s", err, config)
	}
	if len(cfg.Runners) != 1 {
		t.Fatalf("config has %d runners, want 1", len(cfg.Runners))
	}
	return facts.NeededFor(cfg.Runners[0])
}

// rulesFor is a Role's rules granting exactly want, less the resources in
// drop: one rule per (group, resource), verbs in NeededFor's order.
func rulesFor(t *testing.T, want []facts.Access, namespace string, drop ...string) []rbacv1.PolicyRule {
	t.Helper()
	type gr struct{ group, resource string }
	var order []gr
	verbs := map[gr][]string{}
	for _, a := range want {
		if a.Namespace != namespace {
			t.Fatalf("NeededFor asks %s in namespace %q; a Role in %q cannot grant it", a, a.Namespace, namespace)
		}
		if slices.Contains(drop, a.Resource) {
			continue
		}
		k := gr{a.Group, a.Resource}
		if _, ok := verbs[k]; !ok {
			order = append(order, k)
		}
		if !slices.Contains(verbs[k], a.Verb) {
			verbs[k] = append(verbs[k], a.Verb)
		}
	}
	rules := make([]rbacv1.PolicyRule, 0, len(order))
	for _, k := range order {
		rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{k.group}, Resources: []string{k.resource}, Verbs: verbs[k]})
	}
	return rules
}

// waitAuthorizedIn is testenv's WaitAuthorized for one namespace (a Role's
// grant is not cluster-wide, which is all WaitAuthorized asks about):
// asked as the admin with a SubjectAccessReview, so the wait stays out of
// user's own audit trail.
func waitAuthorizedIn(t *testing.T, env *testenv.Env, user, namespace, verb, resource, subresource string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r, err := env.Clientset().AuthorizationV1().SubjectAccessReviews().Create(t.Context(), &authzv1.SubjectAccessReview{
			Spec: authzv1.SubjectAccessReviewSpec{
				User: user, Groups: []string{"system:authenticated"},
				ResourceAttributes: &authzv1.ResourceAttributes{Namespace: namespace, Verb: verb, Resource: resource, Subresource: subresource},
			},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if r.Status.Allowed {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still may not %s %s/%s in %s after 10s: %s", user, verb, resource, subresource, namespace, r.Status.Reason)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// runOne is runTwo for a one-runner config.
func runOne(t *testing.T, config string, kubeconfig []byte) *report.Report {
	t.Helper()
	root := testroot.New(t)
	root.GuideRunner(config, kubeconfig)
	began := time.Now()
	rep, _ := runReport(t, "run", "--root", root.Dir, "-o", "json", "--now", time.Now().UTC().Format(time.RFC3339),
		"--timeout", "60s", "--skip", "gitlab-reachability")
	t.Logf("doctor ran in %s", time.Since(began).Round(time.Millisecond))
	if len(rep.Runners) != 1 {
		t.Fatalf("report.runners = %+v, want the one [[runners]]", rep.Runners)
	}
	return rep
}

// missingOf is what runner-rbac's evidence for runner says is denied:
// "create pods/attach" for "can-i create pods/attach -n ns-alpha".
func missingOf(t *testing.T, f report.Finding) []string {
	t.Helper()
	var out []string
	for _, e := range f.Evidence {
		s, ok := strings.CutPrefix(e.Source, "can-i ")
		if !ok {
			t.Errorf("runner-rbac evidence %q is not a can-i", e.Source)
			continue
		}
		s, _, _ = strings.Cut(s, " -n ")
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

func TestRunnerRBACFollowsFeatureFlags(t *testing.T) {
	env := testenv.Start(t)
	env.EnsureNamespace("ns-alpha")

	defaults := flagsConfig(nil, nil)
	want := neededOf(t, defaults)
	var attach []string
	for _, a := range want {
		if a.Resource == "pods/attach" {
			attach = append(attach, a.String())
		}
		if a.Resource == "pods/log" {
			t.Fatalf("NeededFor wants %s with default flags; the RBAC table asks pods/log only with FF_KUBERNETES_HONOR_ENTRYPOINT, FF_WAIT_FOR_POD_TO_BE_REACHABLE or CI_DEBUG_SERVICES", a)
		}
	}
	slices.Sort(attach)
	if !slices.Equal(attach, []string{"create pods/attach", "delete pods/attach", "get pods/attach", "patch pods/attach"}) {
		t.Fatalf("NeededFor's pods/attach with default flags: %v, want create, delete, get, patch (the attach strategy's row)", attach)
	}

	// The Role: all of NeededFor for the defaults, but pods/attach (and so
	// also without pods/log, which the defaults do not need).
	rules := rulesFor(t, want, "ns-alpha", "pods/attach")
	ctx := t.Context()
	rbac := env.Clientset().RbacV1()
	if _, err := rbac.Roles("ns-alpha").Create(ctx, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns-alpha", Name: flagsRole},
		Rules:      rules,
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := rbac.RoleBindings("ns-alpha").Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns-alpha", Name: flagsRole},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: flagsRole},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: flagsUser}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// One Role, one binding: once one of its grants is in effect, all are.
	waitAuthorizedIn(t, env, flagsUser, "ns-alpha", "create", "pods", "exec")
	waitAuthorizedIn(t, env, flagsUser, "ns-alpha", "list", "events", "")

	now := time.Now()
	cert, key := env.MintClient(flagsUser, nil, now.Add(-time.Hour), now.Add(12*time.Hour))
	kc := testpki.Kubeconfig("tenant-ci", env.URL, env.CAPEM, cert, key)

	legacyOn := map[string]bool{runnerconfig.FFUseLegacyKubernetesExecutionStrategy: true}
	for _, tc := range []struct {
		name   string
		config string
		// missing is what runner-rbac names as denied, sorted; nil: pass.
		missing []string
	}{
		{
			name:    "default flags: the attach strategy",
			config:  defaults,
			missing: attach,
		},
		{
			name:   "legacy strategy in [runners.feature_flags]",
			config: flagsConfig(nil, legacyOn),
		},
		{
			name:   "legacy strategy in environment",
			config: flagsConfig([]string{runnerconfig.FFUseLegacyKubernetesExecutionStrategy + "=true"}, nil),
		},
		{
			name: "legacy strategy, honor entrypoint: pods/log",
			config: flagsConfig(nil, map[string]bool{
				runnerconfig.FFUseLegacyKubernetesExecutionStrategy: true,
				runnerconfig.FFKubernetesHonorEntrypoint:            true,
			}),
			missing: []string{"get pods/log", "list pods/log"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// What this config needs that the Role does not grant, by
			// NeededFor itself: the expectation and the Role agree.
			var gap []string
			for _, a := range neededOf(t, tc.config) {
				if !permitsRules(rules, a) {
					gap = append(gap, a.String())
				}
			}
			slices.Sort(gap)
			if !slices.Equal(gap, tc.missing) {
				t.Fatalf("NeededFor for this config lacks %v from the Role, want %v\n%s", gap, tc.missing, tc.config)
			}

			rep := runOne(t, tc.config, kc)
			fs := findingsOf(rep, "runner-rbac", 1)
			for _, f := range rep.Findings {
				if f.Check == "runner-rbac" && (f.Runner == nil || f.Runner.Index != 1) {
					t.Errorf("runner-rbac finding for runner %v, want runner 1's only: %s", f.Runner, f.Cause)
				}
			}
			if tc.missing == nil {
				if got := statusOf(rep, "runner-rbac", 1); got != "pass" {
					t.Errorf("runner-rbac for runner 1: %q, want pass", got)
				}
				for _, f := range fs {
					t.Errorf("runner-rbac finding: %s", f.Cause)
				}
				return
			}
			if got := statusOf(rep, "runner-rbac", 1); got != "fail" {
				t.Errorf("runner-rbac for runner 1: %q, want fail", got)
			}
			if len(fs) != 1 {
				t.Fatalf("runner-rbac findings for runner 1: %d, want 1", len(fs))
			}
			f := fs[0]
			if got := missingOf(t, f); !slices.Equal(got, tc.missing) {
				t.Errorf("runner-rbac evidence denies %v, want %v", got, tc.missing)
			}
			for _, m := range tc.missing {
				if !strings.Contains(f.Cause, m) {
					t.Errorf("runner-rbac cause does not name %q: %s", m, f.Cause)
				}
			}
			for _, w := range []string{flagsUser, `"ns-alpha"`} {
				if !strings.Contains(f.Cause, w) {
					t.Errorf("runner-rbac cause does not name %s: %s", w, f.Cause)
				}
			}
			for _, granted := range []string{"pods/exec", "secrets", "create pods,", "events"} {
				if strings.Contains(f.Cause, granted) {
					t.Errorf("runner-rbac cause names %q, which the Role grants: %s", granted, f.Cause)
				}
			}
		})
	}
}

// permitsRules is whether rules (exact names, as rulesFor writes them)
// grant a.
func permitsRules(rules []rbacv1.PolicyRule, a facts.Access) bool {
	for _, r := range rules {
		if slices.Contains(r.APIGroups, a.Group) && slices.Contains(r.Resources, a.Resource) && slices.Contains(r.Verbs, a.Verb) {
			return true
		}
	}
	return false
}
