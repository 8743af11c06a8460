//go:build integration

package testenv

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// What a namespace holds that decides whether a job pod is admitted:
// quotas, limit ranges, service accounts and Pod Security labels, stored
// by the apiserver (and, for Pod Security, enforced by it).

// CreateQuota stores a ResourceQuota and sets its status as the quota
// controller (which does not run here) would: hard copied from spec, used
// as given.
func (e *Env) CreateQuota(namespace, name string, hard, used corev1.ResourceList) *corev1.ResourceQuota {
	e.t.Helper()
	ctx, cancel := e.ctx()
	defer cancel()
	quotas := e.Clientset().CoreV1().ResourceQuotas(namespace)
	q, err := quotas.Create(ctx, &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.ResourceQuotaSpec{Hard: hard}}, metav1.CreateOptions{})
	e.check(err)
	q.Status = corev1.ResourceQuotaStatus{Hard: hard, Used: used}
	q, err = quotas.UpdateStatus(ctx, q, metav1.UpdateOptions{})
	e.check(err)
	return q
}

// CreateLimitRange stores the LimitRange "limits" of one item.
func (e *Env) CreateLimitRange(namespace string, item corev1.LimitRangeItem) {
	e.t.Helper()
	ctx, cancel := e.ctx()
	defer cancel()
	_, err := e.Clientset().CoreV1().LimitRanges(namespace).Create(ctx, &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "limits"},
		Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{item}}}, metav1.CreateOptions{})
	e.check(err)
}

// LabelNamespace adds labels to a namespace (pod-security.kubernetes.io/enforce...).
func (e *Env) LabelNamespace(namespace string, labels map[string]string) {
	e.t.Helper()
	ctx, cancel := e.ctx()
	defer cancel()
	obj, err := e.Clientset().CoreV1().Namespaces().Get(ctx, namespace, metav1.GetOptions{})
	e.check(err)
	if obj.Labels == nil {
		obj.Labels = map[string]string{}
	}
	for k, v := range labels {
		obj.Labels[k] = v
	}
	_, err = e.Clientset().CoreV1().Namespaces().Update(ctx, obj, metav1.UpdateOptions{})
	e.check(err)
}

// CreateServiceAccount stores a service account.
func (e *Env) CreateServiceAccount(namespace, name string) {
	e.t.Helper()
	ctx, cancel := e.ctx()
	defer cancel()
	_, err := e.Clientset().CoreV1().ServiceAccounts(namespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	e.check(err)
}
