package kubefacts

import (
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// RBACError is a read the API server refused with 403: the check that
// needed it could not check (unknown), and says which RBAC the identity
// lacks. A scoped identity (the built-in view ClusterRole, a runner's
// namespaced service account) is not a fault of the cluster, but a check it
// could not perform proved nothing either: skipped would let a run exit 0
// having looked at none of it.
type RBACError struct {
	Access Access
	Err    error // the server's 403
}

// LacksRBAC wraps err as a RBACError for a when the server refused it with
// 403, and returns err unchanged otherwise.
func LacksRBAC(a Access, err error) error {
	if err == nil || !apierrors.IsForbidden(err) {
		return err
	}
	var d *RBACError
	if errors.As(err, &d) {
		return err
	}
	return &RBACError{Access: a, Err: err}
}

func (e *RBACError) Error() string {
	a := e.Access
	return fmt.Sprintf("the identity may not %s %s; its RBAC lacks verb %q on resource %q in API group %q. "+
		"Grant that in a Role or ClusterRole bound to it, or run doctor with a kubeconfig that has it (--kubeconfig). The server said: %v",
		a, a.scope(), a.Verb, a.Resource, a.Group, e.Err)
}

func (e *RBACError) Unwrap() error { return e.Err }

func (a Access) scope() string {
	if a.Namespace != "" {
		return fmt.Sprintf("in the namespace %q", a.Namespace)
	}
	return "at the cluster scope"
}
