package cluster

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts/configfacts"
	"github.com/socialwebcomputer/doctor/checks/facts/kubefacts"
)

// AcrossNamespaces says whether this run's Kubernetes runners use more than
// one namespace. What each runner reads of its own namespace (the
// Namespace, quotas, its service account) is then listed once for the
// whole cluster: one request for N namespaces instead of N. One namespace
// keeps the smaller, namespaced read. The caller must require configfacts.ConfigFact.
func AcrossNamespaces(p *checks.Pass) bool {
	return p.Env.NamespaceOverride == "" && namespaces(configfacts.ConfigFact.Get(p)) > 1
}

// NamespaceObject is the runner namespace's Namespace, read once per target
// and shared by every check that needs it (namespace, job-identity). With
// runners in several namespaces it comes from one list of the cluster's
// namespaces; an identity that may not list them (a Role-bound one) reads
// its own with a GET. A namespace the list lacks is the GET's 404.
// source names the request for evidence.
func NamespaceObject(p *checks.Pass, ctx context.Context, api *kubefacts.APIClient, ns string, across bool) (obj *corev1.Namespace, source string, err error) {
	if across {
		type all struct {
			byName map[string]*corev1.Namespace
			err    error
		}
		a, _ := checks.Shared(p, "namespaces "+api.Key, func() (all, error) {
			m := map[string]*corev1.Namespace{}
			err := pages(ctx, func(o metav1.ListOptions) (string, error) {
				r, err := api.Client.CoreV1().Namespaces().List(ctx, o)
				if err != nil {
					return "", err
				}
				for i := range r.Items {
					m[r.Items[i].Name] = &r.Items[i]
				}
				return r.Continue, nil
			}, metav1.ListOptions{})
			return all{m, err}, nil
		})
		if a.err == nil {
			src := "GET /api/v1/namespaces (the cluster's list)"
			if o, ok := a.byName[ns]; ok {
				return o, src, nil
			}
			return nil, src, apierrors.NewNotFound(corev1.Resource("namespaces"), ns)
		}
		if !apierrors.IsForbidden(a.err) {
			return nil, "GET /api/v1/namespaces", a.err
		}
	}
	type got struct {
		obj *corev1.Namespace
		err error
	}
	g, _ := checks.Shared(p, "namespace "+api.Key+" "+ns, func() (got, error) {
		obj, err := api.Client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		return got{obj, err}, nil
	})
	return g.obj, "GET /api/v1/namespaces/" + ns, g.err
}
