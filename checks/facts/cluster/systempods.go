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

// SystemPods are kube-system's pods that match the label selector, listed
// once per target and selector and shared by the checks that read them:
// node-local-dns wants its add-on's pods, and kubelet-reach reads one of
// them on each node it samples. Never the whole namespace: kube-system runs
// a few DaemonSet pods on every node, and at 2,000 nodes listing them all
// was 65% of a run's bytes and six pages on its critical path (issue 24).
//
// target is the API target's key (kubefacts.APIClient.Key): runners of one cluster
// share the list. Without one (a unit test's client) it is listed afresh.
func SystemPods(p *checks.Pass, ctx context.Context, target string, c kube.Interface, selector string) ([]corev1.Pod, error) {
	list := func() ([]corev1.Pod, error) {
		return ListSystemPods(ctx, c, metav1.ListOptions{LabelSelector: selector})
	}
	if target == "" {
		return list()
	}
	return checks.Shared(p, "kube-system pods "+selector+" "+target, list)
}

// ListSystemPods lists kube-system's pods that o selects, page by page.
func ListSystemPods(ctx context.Context, c kube.Interface, o metav1.ListOptions) ([]corev1.Pod, error) {
	var pods []corev1.Pod
	err := pages(ctx, func(o metav1.ListOptions) (string, error) {
		r, err := c.CoreV1().Pods(SystemNamespace).List(ctx, o)
		if err != nil {
			return "", err
		}
		pods = appendPage(pods, r.Items)
		return r.Continue, nil
	}, o)
	return pods, err
}
