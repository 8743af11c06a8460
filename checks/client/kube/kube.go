// Package kube is the part of client-go's typed clientset that doctor
// calls, on a scheme of only the API groups it reads.
//
// Why not k8s.io/client-go/kubernetes: importing it registers every API
// group of Kubernetes in its scheme when the process starts, before main:
// 7 ms of a doctor run's 22 ms of package initialisation on this machine
// (GODEBUG=inittrace=1), and with the typed clients, apply configurations
// and discovery it pulls in, about 9 ms of every run, paid before the first
// byte goes to the cluster. Here the scheme holds six groups and is built
// on first use. The interfaces are subsets of the typed clientset's, with
// the same method shapes, so code reads as it would with client-go's, and
// kubefake adapts client-go's fake clientset to them for unit tests.
package kube

import (
	"context"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	certsv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	schedv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
)

// Interface is the clientset: one client per API group doctor reads.
type Interface interface {
	CoreV1() CoreV1Interface
	AppsV1() AppsV1Interface
	AuthenticationV1() AuthenticationV1Interface
	AuthorizationV1() AuthorizationV1Interface
	CertificatesV1() CertificatesV1Interface
	SchedulingV1() SchedulingV1Interface
}

type CoreV1Interface interface {
	RESTClient() rest.Interface
	Pods(namespace string) PodInterface
	Nodes() NodeInterface
	Events(namespace string) EventInterface
	Namespaces() NamespaceInterface
	ResourceQuotas(namespace string) ResourceQuotaInterface
	LimitRanges(namespace string) LimitRangeInterface
	ServiceAccounts(namespace string) ServiceAccountInterface
}

type AppsV1Interface interface {
	DaemonSets(namespace string) DaemonSetInterface
}

type AuthenticationV1Interface interface {
	SelfSubjectReviews() SelfSubjectReviewInterface
}

type AuthorizationV1Interface interface {
	SelfSubjectAccessReviews() SelfSubjectAccessReviewInterface
	SelfSubjectRulesReviews() SelfSubjectRulesReviewInterface
}

type CertificatesV1Interface interface {
	CertificateSigningRequests() CertificateSigningRequestInterface
}

type SchedulingV1Interface interface {
	PriorityClasses() PriorityClassInterface
}

// The resources, each with the verbs doctor uses.
type (
	PodInterface interface {
		List(ctx context.Context, opts metav1.ListOptions) (*corev1.PodList, error)
		Get(ctx context.Context, name string, opts metav1.GetOptions) (*corev1.Pod, error)
		Create(ctx context.Context, pod *corev1.Pod, opts metav1.CreateOptions) (*corev1.Pod, error)
		Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error
		Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
		GetLogs(name string, opts *corev1.PodLogOptions) *rest.Request
	}
	NodeInterface interface {
		List(ctx context.Context, opts metav1.ListOptions) (*corev1.NodeList, error)
		Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
	}
	EventInterface interface {
		List(ctx context.Context, opts metav1.ListOptions) (*corev1.EventList, error)
		Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
	}
	NamespaceInterface interface {
		List(ctx context.Context, opts metav1.ListOptions) (*corev1.NamespaceList, error)
		Get(ctx context.Context, name string, opts metav1.GetOptions) (*corev1.Namespace, error)
	}
	ResourceQuotaInterface interface {
		List(ctx context.Context, opts metav1.ListOptions) (*corev1.ResourceQuotaList, error)
	}
	ServiceAccountInterface interface {
		Get(ctx context.Context, name string, opts metav1.GetOptions) (*corev1.ServiceAccount, error)
	}
	LimitRangeInterface interface {
		List(ctx context.Context, opts metav1.ListOptions) (*corev1.LimitRangeList, error)
	}
	DaemonSetInterface interface {
		List(ctx context.Context, opts metav1.ListOptions) (*appsv1.DaemonSetList, error)
	}
	SelfSubjectReviewInterface interface {
		Create(ctx context.Context, r *authnv1.SelfSubjectReview, opts metav1.CreateOptions) (*authnv1.SelfSubjectReview, error)
	}
	SelfSubjectAccessReviewInterface interface {
		Create(ctx context.Context, r *authzv1.SelfSubjectAccessReview, opts metav1.CreateOptions) (*authzv1.SelfSubjectAccessReview, error)
	}
	SelfSubjectRulesReviewInterface interface {
		Create(ctx context.Context, r *authzv1.SelfSubjectRulesReview, opts metav1.CreateOptions) (*authzv1.SelfSubjectRulesReview, error)
	}
	CertificateSigningRequestInterface interface {
		List(ctx context.Context, opts metav1.ListOptions) (*certsv1.CertificateSigningRequestList, error)
	}
	PriorityClassInterface interface {
		List(ctx context.Context, opts metav1.ListOptions) (*schedv1.PriorityClassList, error)
	}
)

// Prepare builds the scheme in the background. A run that will talk to a
// cluster calls it when it starts: the first client then finds the scheme
// built, its half a millisecond spent on another CPU while the host facts
// are read, not between them and the first request.
func Prepare() { go codecs() }

// codecs is the scheme of the six groups, built on first use, as
// client-go's scheme package builds its own at init: the meta types
// unversioned, then each group (whose AddToScheme adds its meta types).
var codecs = sync.OnceValues(func() (serializer.CodecFactory, runtime.ParameterCodec) {
	s := runtime.NewScheme()
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, appsv1.AddToScheme, authnv1.AddToScheme,
		authzv1.AddToScheme, certsv1.AddToScheme, schedv1.AddToScheme} {
		if err := add(s); err != nil {
			panic(err) // the API packages' own registrations: cannot fail
		}
	}
	return serializer.NewCodecFactory(s), runtime.NewParameterCodec(s)
})

// Clientset is Interface over one HTTP client: every group's requests share
// its transport (one connection to the server) and one rate limiter, as
// kubernetes.NewForConfig shares them.
type Clientset struct {
	core, apps, authn, authz, certs, sched rest.Interface
}

// NewForConfig is kubernetes.NewForConfig for the six groups.
func NewForConfig(c *rest.Config) (*Clientset, error) {
	cfg := *c
	if cfg.UserAgent == "" {
		cfg.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	if cfg.RateLimiter == nil && cfg.QPS > 0 {
		cfg.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(cfg.QPS, cfg.Burst)
	}
	hc, err := rest.HTTPClientFor(&cfg)
	if err != nil {
		return nil, err
	}
	cf, _ := codecs()
	cfg.NegotiatedSerializer = serializer.WithoutConversionCodecFactory{CodecFactory: cf}
	cs := &Clientset{}
	for _, g := range []struct {
		to   *rest.Interface
		gv   schema.GroupVersion
		path string
	}{
		{&cs.core, corev1.SchemeGroupVersion, "/api"},
		{&cs.apps, appsv1.SchemeGroupVersion, "/apis"},
		{&cs.authn, authnv1.SchemeGroupVersion, "/apis"},
		{&cs.authz, authzv1.SchemeGroupVersion, "/apis"},
		{&cs.certs, certsv1.SchemeGroupVersion, "/apis"},
		{&cs.sched, schedv1.SchemeGroupVersion, "/apis"},
	} {
		gc := cfg
		gv := g.gv
		gc.GroupVersion, gc.APIPath = &gv, g.path
		rc, err := rest.RESTClientForConfigAndClient(&gc, hc)
		if err != nil {
			return nil, err
		}
		*g.to = rc
	}
	return cs, nil
}

func (c *Clientset) CoreV1() CoreV1Interface                     { return coreV1{c.core} }
func (c *Clientset) AppsV1() AppsV1Interface                     { return appsV1{c.apps} }
func (c *Clientset) AuthenticationV1() AuthenticationV1Interface { return authnV1{c.authn} }
func (c *Clientset) AuthorizationV1() AuthorizationV1Interface   { return authzV1{c.authz} }
func (c *Clientset) CertificatesV1() CertificatesV1Interface     { return certsV1{c.certs} }
func (c *Clientset) SchedulingV1() SchedulingV1Interface         { return schedV1{c.sched} }

type coreV1 struct{ c rest.Interface }

func (g coreV1) RESTClient() rest.Interface { return g.c }
func (g coreV1) Pods(ns string) PodInterface {
	return pods{resource[corev1.Pod, *corev1.Pod, corev1.PodList, *corev1.PodList]{g.c, "pods", ns, true}}
}
func (g coreV1) Nodes() NodeInterface {
	return resource[corev1.Node, *corev1.Node, corev1.NodeList, *corev1.NodeList]{g.c, "nodes", "", false}
}
func (g coreV1) Events(ns string) EventInterface {
	return resource[corev1.Event, *corev1.Event, corev1.EventList, *corev1.EventList]{g.c, "events", ns, true}
}
func (g coreV1) Namespaces() NamespaceInterface {
	return resource[corev1.Namespace, *corev1.Namespace, corev1.NamespaceList, *corev1.NamespaceList]{g.c, "namespaces", "", false}
}
func (g coreV1) ResourceQuotas(ns string) ResourceQuotaInterface {
	return resource[corev1.ResourceQuota, *corev1.ResourceQuota, corev1.ResourceQuotaList, *corev1.ResourceQuotaList]{g.c, "resourcequotas", ns, true}
}
func (g coreV1) LimitRanges(ns string) LimitRangeInterface {
	return resource[corev1.LimitRange, *corev1.LimitRange, corev1.LimitRangeList, *corev1.LimitRangeList]{g.c, "limitranges", ns, true}
}

func (g coreV1) ServiceAccounts(ns string) ServiceAccountInterface {
	return resource[corev1.ServiceAccount, *corev1.ServiceAccount, corev1.ServiceAccountList, *corev1.ServiceAccountList]{g.c, "serviceaccounts", ns, true}
}

type pods struct {
	resource[corev1.Pod, *corev1.Pod, corev1.PodList, *corev1.PodList]
}

// GetLogs is the typed client's: a request for the pod's log subresource.
func (p pods) GetLogs(name string, opts *corev1.PodLogOptions) *rest.Request {
	_, pc := codecs()
	return p.c.Get().Namespace(p.ns).Name(name).Resource("pods").SubResource("log").VersionedParams(opts, pc)
}

type appsV1 struct{ c rest.Interface }

func (g appsV1) DaemonSets(ns string) DaemonSetInterface {
	return resource[appsv1.DaemonSet, *appsv1.DaemonSet, appsv1.DaemonSetList, *appsv1.DaemonSetList]{g.c, "daemonsets", ns, true}
}

type authnV1 struct{ c rest.Interface }

func (g authnV1) SelfSubjectReviews() SelfSubjectReviewInterface {
	return resource[authnv1.SelfSubjectReview, *authnv1.SelfSubjectReview, authnv1.SelfSubjectReview, *authnv1.SelfSubjectReview]{g.c, "selfsubjectreviews", "", false}
}

type authzV1 struct{ c rest.Interface }

func (g authzV1) SelfSubjectAccessReviews() SelfSubjectAccessReviewInterface {
	return resource[authzv1.SelfSubjectAccessReview, *authzv1.SelfSubjectAccessReview, authzv1.SelfSubjectAccessReview, *authzv1.SelfSubjectAccessReview]{g.c, "selfsubjectaccessreviews", "", false}
}
func (g authzV1) SelfSubjectRulesReviews() SelfSubjectRulesReviewInterface {
	return resource[authzv1.SelfSubjectRulesReview, *authzv1.SelfSubjectRulesReview, authzv1.SelfSubjectRulesReview, *authzv1.SelfSubjectRulesReview]{g.c, "selfsubjectrulesreviews", "", false}
}

type certsV1 struct{ c rest.Interface }

func (g certsV1) CertificateSigningRequests() CertificateSigningRequestInterface {
	return resource[certsv1.CertificateSigningRequest, *certsv1.CertificateSigningRequest, certsv1.CertificateSigningRequestList, *certsv1.CertificateSigningRequestList]{g.c, "certificatesigningrequests", "", false}
}

type schedV1 struct{ c rest.Interface }

func (g schedV1) PriorityClasses() PriorityClassInterface {
	return resource[schedv1.PriorityClass, *schedv1.PriorityClass, schedv1.PriorityClassList, *schedv1.PriorityClassList]{g.c, "priorityclasses", "", false}
}
