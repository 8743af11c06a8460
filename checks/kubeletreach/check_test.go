package kubeletreach

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
