//go:build integration

package e2e

import (
	"slices"
	"strings"
	"testing"
	"time"

	authzv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/socialwebcomputer/doctor/checks/facts/kubefacts"
	"github.com/socialwebcomputer/doctor/report"
	"github.com/socialwebcomputer/doctor/runnerconfig"
	"github.com/socialwebcomputer/doctor/testkit/testenv"
	"github.com/socialwebcomputer/doctor/testkit/testroot"
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

// neededOf is kubefacts.NeededFor of config's only runner, the config
// decoded as doctor decodes it.
func neededOf(t *testing.T, config string) []kubefacts.Access {
	t.Helper()
	cfg, _, err := runnerconfig.Decode([]byte(config))
	if err != nil {
		t.Fatalf("config does not decode: %v\n%s", err, config)
	}
	if len(cfg.Runners) != 1 {
		t.Fatalf("config has %d runners, want 1", len(cfg.Runners))
	}
	return kubefacts.NeededFor(cfg.Runners[0])
}

// rulesFor is a Role's rules granting exactly want, less the resources in
// drop: one rule per (group, resource), verbs in NeededFor's order.
func rulesFor(t *testing.T, want []kubefacts.Access, namespace string, drop ...string) []rbacv1.PolicyRule {
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
