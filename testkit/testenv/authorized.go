//go:build integration

package testenv

import (
	"time"

	authzv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// WaitAuthorized waits (up to 10s) until the apiserver's authorizer allows
// user with groups to verb resource (cluster-wide), asking as the admin with
// a SubjectAccessReview. RBAC reads bindings from an informer cache, so a
// binding made just before a run may not be in effect yet; asking as the
// admin keeps the wait out of the audit trail of user's own requests.
func (e *Env) WaitAuthorized(user string, groups []string, verb, resource string) {
	e.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := e.ctx()
		r, err := e.Clientset().AuthorizationV1().SubjectAccessReviews().Create(ctx, &authzv1.SubjectAccessReview{
			Spec: authzv1.SubjectAccessReviewSpec{
				User: user, Groups: append([]string{"system:authenticated"}, groups...),
				ResourceAttributes: &authzv1.ResourceAttributes{Verb: verb, Resource: resource},
			},
		}, metav1.CreateOptions{})
		cancel()
		e.check(err)
		if r.Status.Allowed {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("testenv: %s (groups %v) still may not %s %s after 10s: %s", user, groups, verb, resource, r.Status.Reason)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// WaitAuditSettled returns the audit events after the first skip that
// match accepts, once no new one has appeared for quiet (or after 15s),
// oldest first (pass len(AuditEvents()) taken before a run as skip): the apiserver writes
// each event just after its response, so a test reading right after a run
// may otherwise miss the last requests. The apiserver's own background
// requests keep the log growing, hence the filter.
func (e *Env) WaitAuditSettled(quiet time.Duration, skip int, match func(AuditEvent) bool) []AuditEvent {
	e.t.Helper()
	read := func() []AuditEvent {
		events, err := e.AuditEvents()
		e.check(err)
		var out []AuditEvent
		for i, ev := range events {
			if i >= skip && match(ev) {
				out = append(out, ev)
			}
		}
		return out
	}
	deadline := time.Now().Add(15 * time.Second)
	got := read()
	since := time.Now()
	for time.Now().Before(deadline) && time.Since(since) < quiet {
		time.Sleep(100 * time.Millisecond)
		if now := read(); len(now) != len(got) {
			got, since = now, time.Now()
		}
	}
	return got
}
