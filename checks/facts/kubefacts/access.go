package kubefacts

import (
	"context"
	"fmt"
	"strings"

	authzv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/socialwebcomputer/doctor/checks"
)

// Access is one verb on one resource, as an access review asks it.
type Access struct {
	Verb        string
	Group       string
	Resource    string // "pods", "pods/exec" (resource/subresource)
	Namespace   string // "" for cluster scope
	WhenMissing string // the job error this denial causes
}

func (a Access) String() string {
	r := a.Resource
	if a.Group != "" {
		r += "." + a.Group
	}
	return a.Verb + " " + r
}

// Forbidden is the message the API server gives a denied request, the text
// that lands in the job log.
func (a Access) Forbidden(user string) string {
	res, _, _ := strings.Cut(a.Resource, "/")
	msg := fmt.Sprintf("%s is forbidden: User %q cannot %s resource %q in API group %q", res, user, a.Verb, a.Resource, a.Group)
	if a.Namespace != "" {
		msg += fmt.Sprintf(" in the namespace %q", a.Namespace)
	} else {
		msg += " at the cluster scope"
	}
	return msg
}

// Allowed answers an access review for each wanted access. It asks one
// SelfSubjectRulesReview per namespace and decides locally; what the rules do
// not settle (an incomplete review, or a denial) is asked again with a
// SelfSubjectAccessReview, which is authoritative.
//
// Runners of one target ask their reviews once: the rules of a namespace
// and each access review are shared by target (checks.Shared).
func Allowed(p *checks.Pass, ctx context.Context, api *APIClient, want []Access) (map[Access]bool, error) {
	out := map[Access]bool{}
	for _, a := range want {
		var st *authzv1.SubjectRulesReviewStatus
		if ns := a.Namespace; ns != "" {
			var err error
			st, err = checks.Shared(p, "rules "+api.Key+" ns "+ns, func() (*authzv1.SubjectRulesReviewStatus, error) {
				r, err := api.Client.AuthorizationV1().SelfSubjectRulesReviews().Create(ctx,
					&authzv1.SelfSubjectRulesReview{Spec: authzv1.SelfSubjectRulesReviewSpec{Namespace: ns}}, metav1.CreateOptions{})
				if err != nil {
					return nil, err
				}
				return &r.Status, nil
			})
			if err != nil {
				return nil, err
			}
		}
		if st != nil && !st.Incomplete && permits(st.ResourceRules, a) {
			out[a] = true
			continue
		}
		allowed, err := checks.Shared(p, "access "+api.Key+" "+a.Namespace+" "+a.String(), func() (bool, error) {
			res, sub, _ := strings.Cut(a.Resource, "/")
			r, err := api.Client.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authzv1.SelfSubjectAccessReview{
				Spec: authzv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authzv1.ResourceAttributes{
					Namespace: a.Namespace, Verb: a.Verb, Group: a.Group, Resource: res, Subresource: sub,
				}},
			}, metav1.CreateOptions{})
			if err != nil {
				return false, err
			}
			return r.Status.Allowed, nil
		})
		if err != nil {
			return nil, err
		}
		out[a] = allowed
	}
	return out, nil
}

func permits(rules []authzv1.ResourceRule, a Access) bool {
	for _, r := range rules {
		if match(r.Verbs, a.Verb) && match(r.APIGroups, a.Group) && match(r.Resources, a.Resource) {
			return true
		}
	}
	return false
}

func match(list []string, v string) bool {
	for _, x := range list {
		if x == "*" || x == v {
			return true
		}
		// "pods/*" grants every subresource of pods; "*/exec" exec on all.
		if xr, xs, ok := strings.Cut(x, "/"); ok {
			vr, vs, _ := strings.Cut(v, "/")
			if (xr == "*" || xr == vr) && (xs == "*" || xs == vs) && vs != "" {
				return true
			}
		}
	}
	return false
}
