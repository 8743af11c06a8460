package keep

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// A cluster of issue 24's shape at 60,000 pods (2,000 nodes, three
// kube-system DaemonSet pods a node, 20 job pods, a thousand Warning
// events), as a run lists it in pages of 1,000: what its kept objects
// decode to stays well inside MaxRunDecoded, so the bound on work never
// makes a large healthy cluster unknown.
func TestDecodedBudgetHoldsALargeCluster(t *testing.T) {
	now := metav1.Now()
	rl := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourceMemory: resource.MustParse("32Gi"),
		corev1.ResourcePods: resource.MustParse("110"), corev1.ResourceEphemeralStorage: resource.MustParse("100Gi")}
	pod := func(ns, name, node string) corev1.Pod {
		return corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: "0b5a5f8e-7c1d-4d1a-9a3e-3f0c1d2e4b5a", ResourceVersion: "123456789",
				CreationTimestamp: now, Labels: map[string]string{"k8s-app": "kube-proxy", "controller-revision-hash": "6d4b7f9c8", "pod-template-generation": "3"},
				Annotations: map[string]string{"kubectl.kubernetes.io/restartedAt": "2026-01-01T00:00:00Z"}},
			Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "kube-proxy", Image: "registry.k8s.io/kube-proxy:v1.37.2",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}},
				Env:       []corev1.EnvVar{{Name: "NODE_NAME", Value: node}}}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning,
				Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
					{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
					{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: now}},
				ContainerStatuses: []corev1.ContainerStatus{{Name: "kube-proxy", Image: "registry.k8s.io/kube-proxy:v1.37.2", ImageID: "sha256:0123456789abcdef",
					Ready: true, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}}}},
		}
	}
	run := &Run{}
	page := func(l runtime.Object) {
		t.Helper()
		if _, err := Protobuf(encode(t, l, mediaProto), Request{URL: "test", Limit: 1000, Run: run}); err != nil {
			t.Fatal(err)
		}
	}
	for p := range 6 { // kube-system: 6,000 pods
		l := &corev1.PodList{}
		for i := range 1000 {
			l.Items = append(l.Items, pod("kube-system", fmt.Sprintf("kube-proxy-%d-%d", p, i), fmt.Sprintf("node-%d", i)))
		}
		page(l)
	}
	jobs := &corev1.PodList{}
	for i := range 20 {
		jobs.Items = append(jobs.Items, pod("gitlab-runner", fmt.Sprintf("runner-x-project-1-concurrent-%d", i), "node-1"))
	}
	page(jobs)
	for p := range 2 { // 2,000 nodes
		l := &corev1.NodeList{}
		for i := range 1000 {
			l.Items = append(l.Items, corev1.Node{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("node-%d-%d", p, i), CreationTimestamp: now, ResourceVersion: "123456789",
					Labels: map[string]string{"kubernetes.io/arch": "amd64", "kubernetes.io/os": "linux", "kubernetes.io/hostname": "node", "node.kubernetes.io/instance-type": "c5.2xlarge",
						"topology.kubernetes.io/zone": "eu-west-1a", "socialweb.computer/node-local-dns": "true"}},
				Spec: corev1.NodeSpec{ProviderID: "aws:///eu-west-1a/i-0123456789abcdef0"},
				Status: corev1.NodeStatus{Allocatable: rl, Capacity: rl, NodeInfo: corev1.NodeSystemInfo{Architecture: "amd64", KubeletVersion: "v1.37.2"},
					Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.1"}, {Type: corev1.NodeHostName, Address: "ip-10-0-0-1"}},
					Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", Message: "kubelet is posting ready status", LastTransitionTime: now},
						{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientMemory", Message: "kubelet has sufficient memory available", LastTransitionTime: now},
						{Type: corev1.NodeDiskPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasNoDiskPressure", Message: "kubelet has no disk pressure", LastTransitionTime: now},
						{Type: corev1.NodePIDPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientPID", Message: "kubelet has sufficient PID available", LastTransitionTime: now}},
					Images: []corev1.ContainerImage{{Names: []string{"registry.k8s.io/kube-proxy:v1.37.2"}, SizeBytes: 1 << 30}}},
			})
		}
		page(l)
	}
	events := &corev1.EventList{}
	for i := range 1000 {
		events.Items = append(events.Items, corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("e%d", i), Namespace: "gitlab-runner", CreationTimestamp: now},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "runner-x-project-1-concurrent-0", Namespace: "gitlab-runner"},
			Reason:         "FailedScheduling", Message: "0/2000 nodes are available: 2000 Insufficient cpu. preemption: 0/2000 nodes are available.", Type: "Warning", LastTimestamp: now})
	}
	page(events)
	t.Logf("decoded: %.1f MiB of %d MiB", float64(run.Decoded())/(1<<20), MaxRunDecoded>>20)
	if run.Decoded() > MaxRunDecoded/2 {
		t.Errorf("a 60,000-pod cluster decodes %d MiB: within a factor 2 of the bound (%d MiB)", run.Decoded()>>20, MaxRunDecoded>>20)
	}
}
