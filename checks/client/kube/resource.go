package kube

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
)

// object is a pointer to an API type: *T is a runtime.Object.
type object[T any] interface {
	*T
	runtime.Object
}

// resource is one resource of a group, in a namespace or cluster-wide:
// T is its type and L its list's. Each verb is built as client-go's
// generated clients build it (k8s.io/client-go/gentype, v0.37.2), for
// what the server sees to be what kubectl's client sends.
type resource[T any, PT object[T], L any, PL object[L]] struct {
	c          rest.Interface
	name       string
	ns         string
	namespaced bool
}

func (r resource[T, PT, L, PL]) List(ctx context.Context, opts metav1.ListOptions) (PL, error) {
	_, pc := codecs()
	out := PL(new(L))
	err := r.c.Get().NamespaceIfScoped(r.ns, r.namespaced).Resource(r.name).
		VersionedParams(&opts, pc).Timeout(timeout(opts)).Do(ctx).Into(out)
	return out, err
}

func (r resource[T, PT, L, PL]) Get(ctx context.Context, name string, opts metav1.GetOptions) (PT, error) {
	_, pc := codecs()
	out := PT(new(T))
	err := r.c.Get().NamespaceIfScoped(r.ns, r.namespaced).Resource(r.name).Name(name).
		VersionedParams(&opts, pc).Do(ctx).Into(out)
	return out, err
}

func (r resource[T, PT, L, PL]) Create(ctx context.Context, obj PT, opts metav1.CreateOptions) (PT, error) {
	_, pc := codecs()
	out := PT(new(T))
	err := r.c.Post().NamespaceIfScoped(r.ns, r.namespaced).Resource(r.name).
		VersionedParams(&opts, pc).Body(runtime.Object(obj)).Do(ctx).Into(out)
	return out, err
}

func (r resource[T, PT, L, PL]) Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error {
	return r.c.Delete().NamespaceIfScoped(r.ns, r.namespaced).Resource(r.name).Name(name).
		Body(&opts).Do(ctx).Error()
}

func (r resource[T, PT, L, PL]) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	_, pc := codecs()
	opts.Watch = true
	return r.c.Get().NamespaceIfScoped(r.ns, r.namespaced).Resource(r.name).
		VersionedParams(&opts, pc).Timeout(timeout(opts)).Watch(ctx)
}

// timeout is a list's or watch's own (timeoutSeconds), as the generated
// clients apply it to the request.
func timeout(opts metav1.ListOptions) time.Duration {
	if opts.TimeoutSeconds != nil {
		return time.Duration(*opts.TimeoutSeconds) * time.Second
	}
	return 0
}
