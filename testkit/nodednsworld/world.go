//go:build integration

// Package nodednsworld shapes a real apiserver (testenv) as the node
// network add-on leaves a cluster: its DaemonSet in kube-system, nodes
// labelled for it, and its pods on them. node-local-dns's live cases and
// the CLI's cluster scenarios share it.
package nodednsworld

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/socialwebcomputer/doctor/checks/facts/nodedns"
	"github.com/socialwebcomputer/doctor/testkit/testenv"
)

// DaemonSet applies the node network add-on's DaemonSet as the provider's
// add-on pass does. Nothing runs its controller here: tests create its
// pods themselves (DNSPod).
func DaemonSet(t testing.TB, env *testenv.Env) {
	t.Helper()
	labels := map[string]string{nodedns.PodLabel: nodedns.PodName}
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: nodedns.Namespace, Name: "socialweb-node-dns"},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					NodeSelector: map[string]string{nodedns.NodeLabel: "true"},
					Containers:   []corev1.Container{{Name: testenv.ContainerName, Image: "coredns/coredns:1.12.1"}},
				},
			},
		},
	}
	if _, err := env.Clientset().AppsV1().DaemonSets(nodedns.Namespace).Create(t.Context(), ds, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// Node makes a Ready node (cpu, memory, its kubelet's port: 0 for none),
// labelled for node-local DNS when asked.
func Node(t testing.TB, env *testenv.Env, name, cpu, memory string, kubeletPort int, labelled bool) {
	t.Helper()
	env.CreateNode(name, testenv.ReadyNodeStatus(cpu, memory, kubeletPort))
	if !labelled {
		return
	}
	patch := []byte(`{"metadata":{"labels":{"` + nodedns.NodeLabel + `":"true"}}}`)
	if _, err := env.Clientset().CoreV1().Nodes().Patch(t.Context(), name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// DNSPod binds a node DNS pod to a node and sets its status, as the
// DaemonSet controller, the scheduler and the kubelet would.
func DNSPod(t testing.TB, env *testenv.Env, name, nodeName string, status corev1.PodStatus) {
	t.Helper()
	env.EnsureNamespace(nodedns.Namespace)
	env.CreatePod(nodedns.Namespace, name, nodeName, func(p *corev1.Pod) {
		p.Labels = map[string]string{nodedns.PodLabel: nodedns.PodName}
	})
	env.SetPodStatus(nodedns.Namespace, name, status)
}
