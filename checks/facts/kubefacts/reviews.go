package kubefacts

import (
	"context"
	"slices"

	"github.com/socialwebcomputer/doctor/checks"
)

// ClusterAdmin is cluster-admin's access: every verb on every resource.
var ClusterAdmin = Access{Verb: "*", Group: "*", Resource: "*"}

// OwnerAccessReview is the access review for ClusterAdmin, when it was
// asked ahead (Answer and Err nil when it was not).
type OwnerAccessReview struct {
	Answer map[Access]bool
	Err    error
}

// AllowsEverything says whether the review was asked ahead and allowed
// every verb on every resource: then every namespace grants whatever a
// runner needs, and runner-rbac need not ask each one.
func (r *OwnerAccessReview) AllowsEverything() bool {
	return r != nil && r.Err == nil && r.Answer[ClusterAdmin]
}

// OwnerAccessReviewFact asks the access review ahead of the self-review when the
// client certificate already says what the self-review will: an x509
// identity's groups are its certificate's organizations, and an owner's
// include the owners group. Gated on api-auth, not behind it, the review
// leaves with the self-review, in the same round trip. Other credentials
// are asked by the check, once the self-review has named their groups.
var OwnerAccessReviewFact = &checks.Fact[*OwnerAccessReview]{
	ID:       "owner-access-review",
	Doc:      "the access review for verb * on resource *, asked ahead when the client certificate names the owners group",
	Requires: []checks.Node{AfterAPIAuth, APIClientFact, checks.Optional(ClientCertFact)},
	Network:  true,
	Compute: func(p *checks.Pass) (*OwnerAccessReview, error) {
		c := ClientCertFact.Get(p)
		if c == nil || c.Cert == nil || !slices.Contains(c.Cert.Subject.Organization, OwnersGroup) {
			return &OwnerAccessReview{}, nil
		}
		ctx, cancel := context.WithTimeout(p.Context, p.Env.APITimeout())
		defer cancel()
		ok, err := Allowed(p, ctx, APIClientFact.Get(p), []Access{ClusterAdmin})
		return &OwnerAccessReview{Answer: ok, Err: err}, nil
	},
}
