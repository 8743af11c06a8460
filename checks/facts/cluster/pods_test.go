package cluster

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestIsJobPod(t *testing.T) {
	pod := func(name string, labels map[string]string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	}
	for _, tc := range []struct {
		p    *corev1.Pod
		want bool
	}{
		{pod("runner-abc123-project-5-concurrent-0-xyz", nil), true},
		{pod("build-1", map[string]string{"job.runner.gitlab.com/pod": "runner-abc-project-5-concurrent-0"}), true},
		{pod("build-2", map[string]string{"project.runner.gitlab.com/id": "5"}), true},
		// A pause pod carries runner.gitlab.com labels and is no job: it is
		// what holds a node at scale-to-zero.
		{pod("pause-1", map[string]string{"runner.gitlab.com/pause-pod": "true", "manager.runner.gitlab.com/id-short": "abc"}), false},
		{pod("coredns-1", map[string]string{"k8s-app": "kube-dns"}), false},
	} {
		if got := IsJobPod(tc.p); got != tc.want {
			t.Errorf("IsJobPod(%s %v) = %v, want %v", tc.p.Name, tc.p.Labels, got, tc.want)
		}
	}
}
