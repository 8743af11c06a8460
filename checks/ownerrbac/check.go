// Package ownerrbac checks that the gateway owner is still cluster-admin.
package ownerrbac

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts/kubefacts"
)

var Check = &checks.Check{
	ID:       "owner-rbac",
	Title:    "The kubeconfig's identity is cluster-admin",
	Severity: checks.Error,
	Doc: checks.Doc{
		Cause: "The gateway's certificate carries the group socialweb.computer:cluster-owners, bound to cluster-admin " +
			"in every tenant cluster, so `kubectl auth can-i '*' '*'` answers yes and the whole class of 403s " +
			"cannot happen. When it answers no, the owner-group binding changed: the runner is not what broke.",
		Symptom: "A job's first request is Forbidden: pods is forbidden: User \"did:plc:…\" cannot create resource \"pods\" in API group \"\" in the namespace \"gitlab-runner\"",
		Fix:     checks.Text("Restore the ClusterRoleBinding of group socialweb.computer:cluster-owners to cluster-admin (the gateway owns it; ask its operator), or download a kubeconfig for an account that owns the cluster."),
		Verify:  checks.Target(checks.Sh(checks.CatalogKubectl + " auth can-i '*' '*'\n" + checks.CatalogKubectl + " auth whoami")),
		Patterns: []string{
			// The runner's own calls: its step wrappers before the apiserver's Forbidden
			// (executors/kubernetes/kubernetes.go, v15.0.0 to v19.3.0: "setting up build pod: %w",
			// "setting up credentials: %w", …, inside common/build.go's "prepare environment: %w";
			// docs/install/kubernetes_troubleshooting.md, v19.3.0: "Job failed (system failure):
			// secrets is forbidden: User …"; "Error cleaning up pod: %v", kubernetes.go). The same
			// Forbidden printed by a tool in a job is job-identity's (its Doc.Ambiguous).
			"prepare environment: *is forbidden: User \"",
			"Job failed (system failure): *is forbidden: User \"",
			"Error cleaning up pod: *is forbidden: User \"",
		},
	},
	Requires:  []checks.Node{checks.Ref("api-auth"), kubefacts.OwnerAccessReviewFact, kubefacts.APIClientFact, kubefacts.IdentityFact},
	Executors: []string{checks.Kubernetes},
	Explains:  []string{"runner-rbac"},
	Network:   true,
	Run:       run,
}

func run(p *checks.Pass) error {
	api, id := kubefacts.APIClientFact.Get(p), kubefacts.IdentityFact.Get(p)
	if id.User != "" && !slices.Contains(id.Groups, kubefacts.OwnersGroup) {
		// A service account or an identity of the operator's own: its RBAC
		// is scoped by design, and runner-rbac checks what the runner needs.
		return checks.Skip("%s is not a gateway owner (no group %s); cluster-admin is not expected", id.User, kubefacts.OwnersGroup)
	}
	rev := kubefacts.OwnerAccessReviewFact.Get(p)
	ok, err := rev.Answer, rev.Err
	if ok == nil && err == nil {
		// The certificate did not say owner, the server did: ask now.
		ctx, cancel := context.WithTimeout(p.Context, p.Env.APITimeout())
		defer cancel()
		ok, err = kubefacts.Allowed(p, ctx, api, []kubefacts.Access{kubefacts.ClusterAdmin})
	}
	if err != nil {
		return fmt.Errorf("access review: %w", err)
	}
	if ok[kubefacts.ClusterAdmin] {
		return nil
	}
	p.Report(checks.Finding{
		Cause: fmt.Sprintf("%s (groups %s) is not cluster-admin: an access review for verb * on resource * is denied. "+
			"The owner-group binding changed; the runner is not what broke.", id.User, strings.Join(id.Groups, ", ")),
		Evidence: []checks.Evidence{
			{Source: "POST /apis/authentication.k8s.io/v1/selfsubjectreviews", Detail: fmt.Sprintf("user %s, groups [%s]", id.User, strings.Join(id.Groups, ", "))},
			{Source: "POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews", Detail: "verb=* group=* resource=*: denied"},
		},
	})
	return nil
}
