// Package kubefake adapts a client-go clientset (the fake one of unit
// tests, or a real one) to kube.Interface. Only tests import it: doctor's
// binary must not link k8s.io/client-go/kubernetes (see package kube).
package kubefake

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	appsv1 "k8s.io/client-go/kubernetes/typed/apps/v1"
	authnv1 "k8s.io/client-go/kubernetes/typed/authentication/v1"
	authzv1 "k8s.io/client-go/kubernetes/typed/authorization/v1"
	certsv1 "k8s.io/client-go/kubernetes/typed/certificates/v1"
	corev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	schedv1 "k8s.io/client-go/kubernetes/typed/scheduling/v1"
	"k8s.io/client-go/rest"

	"github.com/socialwebcomputer/doctor/checks/client/kube"
)

// New is fake.NewClientset's clientset, and the same as kube.Interface.
func New(objects ...runtime.Object) (*fake.Clientset, kube.Interface) {
	cs := fake.NewClientset(objects...)
	return cs, Wrap(cs)
}

// Wrap is cs as kube.Interface.
func Wrap(cs kubernetes.Interface) kube.Interface { return clientset{cs} }

type clientset struct{ cs kubernetes.Interface }

func (c clientset) CoreV1() kube.CoreV1Interface { return coreV1{c.cs.CoreV1()} }
func (c clientset) AppsV1() kube.AppsV1Interface { return appsV1{c.cs.AppsV1()} }
func (c clientset) AuthenticationV1() kube.AuthenticationV1Interface {
	return authnV1{c.cs.AuthenticationV1()}
}
func (c clientset) AuthorizationV1() kube.AuthorizationV1Interface {
	return authzV1{c.cs.AuthorizationV1()}
}
func (c clientset) CertificatesV1() kube.CertificatesV1Interface {
	return certsV1{c.cs.CertificatesV1()}
}
func (c clientset) SchedulingV1() kube.SchedulingV1Interface { return schedV1{c.cs.SchedulingV1()} }

type coreV1 struct{ g corev1.CoreV1Interface }

func (c coreV1) RESTClient() rest.Interface                     { return c.g.RESTClient() }
func (c coreV1) Pods(ns string) kube.PodInterface               { return c.g.Pods(ns) }
func (c coreV1) Nodes() kube.NodeInterface                      { return c.g.Nodes() }
func (c coreV1) Events(ns string) kube.EventInterface           { return c.g.Events(ns) }
func (c coreV1) Namespaces() kube.NamespaceInterface            { return c.g.Namespaces() }
func (c coreV1) LimitRanges(ns string) kube.LimitRangeInterface { return c.g.LimitRanges(ns) }
func (c coreV1) ResourceQuotas(ns string) kube.ResourceQuotaInterface {
	return c.g.ResourceQuotas(ns)
}

func (c coreV1) ServiceAccounts(ns string) kube.ServiceAccountInterface {
	return c.g.ServiceAccounts(ns)
}

type appsV1 struct{ g appsv1.AppsV1Interface }

func (c appsV1) DaemonSets(ns string) kube.DaemonSetInterface { return c.g.DaemonSets(ns) }

type authnV1 struct {
	g authnv1.AuthenticationV1Interface
}

func (c authnV1) SelfSubjectReviews() kube.SelfSubjectReviewInterface {
	return c.g.SelfSubjectReviews()
}

type authzV1 struct {
	g authzv1.AuthorizationV1Interface
}

func (c authzV1) SelfSubjectAccessReviews() kube.SelfSubjectAccessReviewInterface {
	return c.g.SelfSubjectAccessReviews()
}
func (c authzV1) SelfSubjectRulesReviews() kube.SelfSubjectRulesReviewInterface {
	return c.g.SelfSubjectRulesReviews()
}

type certsV1 struct {
	g certsv1.CertificatesV1Interface
}

func (c certsV1) CertificateSigningRequests() kube.CertificateSigningRequestInterface {
	return c.g.CertificateSigningRequests()
}

type schedV1 struct{ g schedv1.SchedulingV1Interface }

func (c schedV1) PriorityClasses() kube.PriorityClassInterface { return c.g.PriorityClasses() }
