package kubeletreach

import (
	"context"
	"errors"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts/nodedns"
	"github.com/socialwebcomputer/doctor/internal/hostio"
)

func TestKubeletAddr(t *testing.T) {
	n := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "rented-1"}, Status: corev1.NodeStatus{
		Addresses:       []corev1.NodeAddress{{Type: corev1.NodeExternalIP, Address: "203.0.113.7"}, {Type: corev1.NodeInternalIP, Address: "10.0.0.7"}},
		DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: 10250}},
	}}
	if got := KubeletAddr(&n); got != "10.0.0.7:10250" {
		t.Errorf("KubeletAddr = %s, want the InternalIP before the ExternalIP", got)
	}
}

// TestPodOnAsksANodeOnlyWithoutTheAddon: a node running the node-local DNS
// add-on's pod reads it, and its own kube-system page is never asked; a
// node without one reads its first Running kube-system pod from that page
// (as the whole namespace's list ranked it), not a runner pod; with
// kube-system refused, the runner pod, and no page asked.
func TestPodOnAsksANodeOnlyWithoutTheAddon(t *testing.T) {
	pod := func(ns, name, node string, labels map[string]string) corev1.Pod {
		return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels}, Spec: corev1.PodSpec{NodeName: node},
			Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	}
	var asked []string
	in := inputs{
		pods:       []corev1.Pod{pod("kube-system", "node-dns-a", "n1", map[string]string{nodedns.PodLabel: nodedns.PodName})},
		runnerPods: []corev1.Pod{pod("gitlab-runner", "runner-b", "n2", nil)},
		podsOn: func(_ context.Context, node string) ([]corev1.Pod, error) {
			asked = append(asked, node)
			return []corev1.Pod{pod("kube-system", "kube-proxy-"+node, node, nil)}, nil
		},
	}
	p := &checks.Pass{Context: t.Context(), Env: &hostio.Env{}}
	if got := podOn(p, in, "n1"); got == nil || got.Name != "node-dns-a" {
		t.Errorf("n1: %v, want node-dns-a", got)
	}
	if got := podOn(p, in, "n2"); got == nil || got.Name != "kube-proxy-n2" {
		t.Errorf("n2: %v, want kube-proxy-n2 (kube-system's before the runner's)", got)
	}
	if fmt.Sprint(asked) != "[n2]" {
		t.Errorf("pages asked for %v, want [n2] only", asked)
	}
	in.sysErr = errors.New("forbidden")
	if got := podOn(p, in, "n2"); got == nil || got.Name != "runner-b" {
		t.Errorf("n2, kube-system refused: %v, want runner-b", got)
	}
	if fmt.Sprint(asked) != "[n2]" {
		t.Errorf("pages asked for %v with kube-system refused", asked)
	}
}
