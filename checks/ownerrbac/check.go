// Package ownerrbac checks that the gateway owner is still cluster-admin.
package ownerrbac

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/apiauth"
	"github.com/socialwebcomputer/doctor/checks/certexpiry"
	"github.com/socialwebcomputer/doctor/checks/facts"
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
		Fix:     "Restore the ClusterRoleBinding of group socialweb.computer:cluster-owners to cluster-admin (the gateway owns it; ask its operator), or download a kubeconfig for an account that owns the cluster.",
		Verify:  "kubectl auth can-i '*' '*'; kubectl auth whoami",
		Patterns: []string{
			// k8s.io/apiserver pkg/endpoints/handlers/responsewriters/errors.go, v0.37.2: "User %q cannot
			// %s resource %q in API group %q …", as docs/install/kubernetes_troubleshooting.md, v19.3.0,
			// quotes it: "secrets is forbidden: User \"system:serviceaccount:gitlab:default\"".
			"is forbidden: User \"",
		},
	},
	Requires:  []checks.Node{apiauth.Check, ReviewFact, facts.APIClient, facts.Whoami},
	Executors: []string{checks.Kubernetes},
	Explains:  []string{"runner-rbac"},
	Network:   true,
	Run:       run,
}

func run(p *checks.Pass) error {
	api, id := facts.APIClient.Get(p), facts.Whoami.Get(p)
	if id.User != "" && !slices.Contains(id.Groups, certexpiry.OwnersGroup) {
		// A service account or an identity of the operator's own: its RBAC
		// is scoped by design, and runner-rbac checks what the runner needs.
		return checks.Skip("%s is not a gateway owner (no group %s); cluster-admin is not expected", id.User, certexpiry.OwnersGroup)
	}
	rev := ReviewFact.Get(p)
	ok, err := rev.answer, rev.err
	if ok == nil && err == nil {
		// The certificate did not say owner, the server did: ask now.
		ctx, cancel := context.WithTimeout(p.Context, p.Env.APITimeout())
		defer cancel()
		ok, err = facts.Allowed(p, ctx, api, []facts.Access{all})
	}
	if err != nil {
		return fmt.Errorf("access review: %w", err)
	}
	if ok[all] {
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

// all is cluster-admin's access: every verb on every resource.
var all = facts.Access{Verb: "*", Group: "*", Resource: "*"}

// review is the access review for all, when it was asked ahead.
type review struct {
	answer map[facts.Access]bool
	err    error
}

// AllowsEverything says whether the review was asked ahead and allowed
// every verb on every resource: then every namespace grants whatever a
// runner needs, and runner-rbac need not ask each one.
func (r *review) AllowsEverything() bool { return r != nil && r.err == nil && r.answer[all] }

// ReviewFact asks the access review ahead of the self-review when the
// client certificate already says what the self-review will: an x509
// identity's groups are its certificate's organizations, and an owner's
// include the owners group. Gated on api-auth, not behind it, the review
// leaves with the self-review, in the same round trip. Other credentials
// are asked by the check, once the self-review has named their groups.
var ReviewFact = &checks.Fact[*review]{
	ID:       "owner-access-review",
	Doc:      "the access review for verb * on resource *, asked ahead when the client certificate names the owners group",
	Requires: []checks.Node{checks.Gate(apiauth.Check), facts.APIClient, checks.Optional(facts.ClientCertFact)},
	Network:  true,
	Compute: func(p *checks.Pass) (*review, error) {
		c := facts.ClientCertFact.Get(p)
		if c == nil || c.Cert == nil || !slices.Contains(c.Cert.Subject.Organization, certexpiry.OwnersGroup) {
			return &review{}, nil
		}
		ctx, cancel := context.WithTimeout(p.Context, p.Env.APITimeout())
		defer cancel()
		ok, err := facts.Allowed(p, ctx, facts.APIClient.Get(p), []facts.Access{all})
		return &review{answer: ok, err: err}, nil
	},
}
