package runnerrbac

import (
	"fmt"
	"sort"
	"strings"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts"
)

// grantFix is the Role and RoleBinding that grant exactly what is missing,
// applied by an administrator of the runner's cluster: the runner's own
// identity may not grant itself anything. The block refuses to run unless
// ADMIN_CONTEXT is set and names a context whose server is the runner's,
// so pasted into a shell whose current context is another cluster it acts
// on none.
func grantFix(user, server, ns string, missing []facts.Access) checks.Steps {
	subject, ok := subjectOf(user)
	if !ok {
		return checks.Text("Bind the runner's identity to a Role in namespace " + ns + " with the missing verbs (the Deckhouse guide's code-runner Role lists them).")
	}
	const name = "gitlab-runner-executor"
	var b strings.Builder
	fmt.Fprintf(&b, ": \"${ADMIN_CONTEXT:?set ADMIN_CONTEXT to a context of yours with admin rights on %s}\"\n", server)
	fmt.Fprintf(&b, "test \"$(kubectl config view --minify --context \"$ADMIN_CONTEXT\" -o jsonpath='{.clusters[0].cluster.server}')\" = %s &&\n", checks.Quote(server))
	fmt.Fprintf(&b, "kubectl --context \"$ADMIN_CONTEXT\" apply -f - <<'EOF'\n")
	fmt.Fprintf(&b, "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: %s\n  namespace: %s\nrules:\n", name, ns)
	for _, r := range rules(missing) {
		fmt.Fprintf(&b, "- apiGroups: [%q]\n  resources: [%q]\n  verbs: [%s]\n", r.group, r.resource, quoted(r.verbs))
	}
	fmt.Fprintf(&b, "---\napiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata:\n  name: %s\n  namespace: %s\n", name, ns)
	fmt.Fprintf(&b, "roleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: Role\n  name: %s\nsubjects:\n%sEOF", name, subject)
	return checks.Steps{
		checks.Say(fmt.Sprintf("As an administrator of %s (the runner's cluster), grant what is missing with a Role and a RoleBinding in %s; set ADMIN_CONTEXT first:", server, ns)),
		checks.Sh(b.String()),
	}
}

type rule struct {
	group, resource string
	verbs           []string
}

// rules groups the missing accesses by resource, each with its verbs.
func rules(missing []facts.Access) []rule {
	at := map[[2]string]*rule{}
	var out []*rule
	for _, a := range missing {
		k := [2]string{a.Group, a.Resource}
		r := at[k]
		if r == nil {
			r = &rule{group: a.Group, resource: a.Resource}
			at[k] = r
			out = append(out, r)
		}
		r.verbs = append(r.verbs, a.Verb)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].group+"/"+out[i].resource < out[j].group+"/"+out[j].resource })
	rs := make([]rule, len(out))
	for i, r := range out {
		rs[i] = *r
	}
	return rs
}

// subjectOf is the RoleBinding subject of an authenticated user name: a
// service account, or a user (a client certificate's CN).
func subjectOf(user string) (string, bool) {
	if rest, ok := strings.CutPrefix(user, "system:serviceaccount:"); ok {
		ns, name, ok := strings.Cut(rest, ":")
		if !ok || ns == "" || name == "" {
			return "", false
		}
		return fmt.Sprintf("- kind: ServiceAccount\n  name: %s\n  namespace: %s\n", name, ns), true
	}
	if user == "" || strings.ContainsAny(user, "\n\"'") {
		return "", false
	}
	return fmt.Sprintf("- kind: User\n  apiGroup: rbac.authorization.k8s.io\n  name: %q\n", user), true
}

func quoted(vs []string) string {
	q := make([]string, len(vs))
	for i, v := range vs {
		q[i] = fmt.Sprintf("%q", v)
	}
	return strings.Join(q, ", ")
}
