package cluster

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/client/kube"
)

// SystemNamespace is where the cluster's own pods run: the node-local DNS
// add-on's, and those kubelet-reach reads a byte of log from.
const SystemNamespace = "kube-system"

// SystemPods are kube-system's pods, every one, listed once per target and
// shared by the checks that read them. node-local-dns wants its add-on's
// pods and kubelet-reach the Running ones: each filters this one list
// rather than asking the server for its own, which at a thousand nodes
// was a thousand pods encoded, sent and decoded twice.
//
// target is the API target's key (facts.APIClient.Key): runners of one cluster
// share the list. Without one (a unit test's client) it is listed afresh.
func SystemPods(p *checks.Pass, ctx context.Context, target string, c kube.Interface) ([]corev1.Pod, error) {
	if target == "" {
		return ListSystemPods(ctx, c)
	}
	return checks.Shared(p, "kube-system pods "+target, func() ([]corev1.Pod, error) {
		return ListSystemPods(ctx, c)
	})
}

// ListSystemPods lists kube-system's pods, page by page.
func ListSystemPods(ctx context.Context, c kube.Interface) ([]corev1.Pod, error) {
	var pods []corev1.Pod
	err := pages(ctx, func(o metav1.ListOptions) (string, error) {
		r, err := c.CoreV1().Pods(SystemNamespace).List(ctx, o)
		if err != nil {
			return "", err
		}
		pods = appendPage(pods, r.Items)
		return r.Continue, nil
	}, metav1.ListOptions{})
	return pods, err
}
