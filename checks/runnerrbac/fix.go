package runnerrbac

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts/kubefacts"
	"github.com/socialwebcomputer/doctor/internal/fixcode"
	"github.com/socialwebcomputer/doctor/internal/redact"
)

// grantName is the name of the Role and the RoleBinding the grant writes.
const grantName = "gitlab-runner-executor"

// adminGuard is the first line of the grant: without ADMIN_CONTEXT it
// says what to set, and a script stops there. Pasted at a prompt it ends
// its own line alone: an interactive bash reads on and runs the next one
// (bash 5.2: an expansion error exits only a shell that is not
// interactive), so the grant's line tests ADMIN_CONTEXT again before it
// runs anything. Constant text only: bash expands the word of
// ${VAR:?word} when VAR is unset, so a host value in it (a server URL
// with "#$(...)") would run; and no ' in it, which bash reads as a quote
// even inside the double-quoted ${...} (bash 5.2).
const adminGuard = `: "${ADMIN_CONTEXT:?set ADMIN_CONTEXT to a context with admin rights on the cluster of the runner}"`

// grantFix is the Role and RoleBinding that grant exactly what is missing,
// applied by an administrator of the runner's cluster: the runner's own
// identity may not grant itself anything. The block refuses to run unless
// ADMIN_CONTEXT is set and names a context whose server is the runner's,
// so pasted into a shell whose current context is another cluster it acts
// on none. The objects are typed (rbacv1) and rendered by fixcode.Manifest;
// the server is one word of the comparison, printed without userinfo.
func grantFix(user, server, ns string, missing []kubefacts.Access) checks.Steps {
	bind := "Bind the runner's identity to a Role in namespace " + ns + " with the missing verbs (the Deckhouse guide's code-runner Role lists them)."
	if err := fixcode.NamespaceName(ns); err != nil {
		// No Role can exist in it: the namespace is what is wrong (the
		// namespace check's finding), and a manifest would carry it.
		return checks.Steps{checks.Withheld(fmt.Errorf("the runner's namespace is %w, so no Role can be granted in it: correct [runners.kubernetes] namespace first", err))}
	}
	subject, err := subjectOf(user)
	switch {
	case errors.Is(err, errNoUser):
		return checks.Text(bind)
	case err != nil:
		return checks.Steps{checks.Say(bind), checks.Withheld(err)}
	}
	server = redact.StripUserinfo(server)
	if server == "" {
		return checks.Text(bind)
	}
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: grantName, Namespace: ns},
		Rules:      rules(missing),
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: grantName, Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: grantName},
		Subjects:   []rbacv1.Subject{subject},
	}
	// kubectl config view --minify --context C prints context C's cluster
	// alone (k8s.io/kubectl pkg/cmd/config/view.go, v0.37.2: --minify
	// "Remove all information not used by current-context", with
	// --context as the current one).
	serverOf := fixcode.Command("kubectl", "config", "view", "--minify", "--context").Words(fixcode.Var("ADMIN_CONTEXT")).
		Arg("-o", "jsonpath={.clusters[0].cluster.server}")
	apply := fixcode.Command("kubectl", "--context").Words(fixcode.Var("ADMIN_CONTEXT")).Arg("apply", "-f", "-").
		Stdin(fixcode.Manifest(role, binding))
	// An empty --context is the shell's current one: without
	// ADMIN_CONTEXT the grant's line runs nothing, pasted or not.
	script := fixcode.Lines(
		fixcode.Raw(adminGuard),
		fixcode.Run(fixcode.Command("test", "-n").Words(fixcode.Var("ADMIN_CONTEXT"))).
			And(fixcode.Command("test").Words(fixcode.Output(serverOf)).Arg("=", server)).And(apply),
	)
	return checks.Steps{
		checks.Say(fmt.Sprintf("As an administrator of %s (the runner's cluster), grant what is missing with a Role and a RoleBinding in %s; set ADMIN_CONTEXT first:", server, ns)),
		checks.Script(script),
	}
}

// rules groups the missing accesses by resource, each with its verbs.
func rules(missing []kubefacts.Access) []rbacv1.PolicyRule {
	at := map[[2]string]*rbacv1.PolicyRule{}
	var out []*rbacv1.PolicyRule
	for _, a := range missing {
		k := [2]string{a.Group, a.Resource}
		r := at[k]
		if r == nil {
			r = &rbacv1.PolicyRule{APIGroups: []string{a.Group}, Resources: []string{a.Resource}}
			at[k] = r
			out = append(out, r)
		}
		r.Verbs = append(r.Verbs, a.Verb)
	}
	sort.SliceStable(out, func(i, j int) bool {
		return out[i].APIGroups[0]+"/"+out[i].Resources[0] < out[j].APIGroups[0]+"/"+out[j].Resources[0]
	})
	rs := make([]rbacv1.PolicyRule, len(out))
	for i, r := range out {
		rs[i] = *r
	}
	return rs
}

// errNoUser is an identity the apiserver did not name (a server without
// SelfSubjectReview): there is no subject to bind.
var errNoUser = errors.New("the apiserver did not name the runner's identity")

// saPrefix is a service account's user name prefix
// (k8s.io/apiserver pkg/authentication/serviceaccount/util.go, v0.37.2:
// ServiceAccountUsernamePrefix "system:serviceaccount:", and MakeUsername
// namespace + ":" + name).
const saPrefix = "system:serviceaccount:"

// subjectOf is the RoleBinding subject of the user name the apiserver
// gives the runner's identity: a service account, or a user (a client
// certificate's CN, an OIDC or webhook name), whose name is data of the
// manifest whatever it holds. A service account's namespace and name are
// split as SplitUsername splits them (util.go, v0.37.2: exactly two parts,
// the namespace a DNS-1123 label, the name a DNS-1123 subdomain): one that
// is not both is refused, never printed.
func subjectOf(user string) (rbacv1.Subject, error) {
	if user == "" {
		return rbacv1.Subject{}, errNoUser
	}
	rest, ok := strings.CutPrefix(user, saPrefix)
	if !ok {
		if !utf8.ValidString(user) {
			// The manifest's encoder (JSON, then YAML) would write U+FFFD
			// for each bad byte: a binding for another name.
			return rbacv1.Subject{}, errors.New("the runner's user name is not UTF-8, which a manifest cannot hold")
		}
		return rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}, nil
	}
	parts := strings.Split(rest, ":")
	if len(parts) != 2 {
		return rbacv1.Subject{}, errors.New("the runner's user name starts with system:serviceaccount: but is not system:serviceaccount:NAMESPACE:NAME")
	}
	ns, name := parts[0], parts[1]
	if err := fixcode.NamespaceName(ns); err != nil {
		return rbacv1.Subject{}, fmt.Errorf("the namespace of the runner's service account is %w", err)
	}
	if err := fixcode.ObjectName(name); err != nil {
		return rbacv1.Subject{}, fmt.Errorf("the name of the runner's service account is %w", err)
	}
	return rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: ns}, nil
}
