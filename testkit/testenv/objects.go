//go:build integration

package testenv

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Nothing runs in this cluster but the apiserver: no scheduler binds pods,
// no kubelet reports nodes. Tests build every cluster state directly, which
// is what these helpers do. A created, unbound pod stays Pending with no
// node forever: the guide's "Pending pod, no node".

// ContainerName is the single container of pods made by CreatePod.
const ContainerName = "main"

// EnsureNamespace creates the namespace unless it exists.
func (e *Env) EnsureNamespace(name string) {
	ctx, cancel := e.ctx()
	defer cancel()
	_, err := e.Clientset().CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		e.check(err)
	}
}

// ReadyNodeStatus is the status a healthy kubelet would report: Ready, the
// given allocatable cpu/memory (e.g. "2", "4Gi") and 110 pods, InternalIP
// 127.0.0.1, and the kubelet port the apiserver dials for exec/logs (a
// fake kubelet's port, or 0 for none).
func ReadyNodeStatus(cpu, memory string, kubeletPort int) corev1.NodeStatus {
	res := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse(cpu),
		corev1.ResourceMemory: resource.MustParse(memory),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	now := metav1.Now()
	return corev1.NodeStatus{
		Capacity:    res,
		Allocatable: res,
		Conditions: []corev1.NodeCondition{{
			Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
			Message: "kubelet is posting ready status", LastHeartbeatTime: now, LastTransitionTime: now,
		}},
		Addresses: []corev1.NodeAddress{
			{Type: corev1.NodeInternalIP, Address: "127.0.0.1"},
			{Type: corev1.NodeHostName, Address: "localhost"},
		},
		DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: int32(kubeletPort)}},
	}
}

// CreateNode creates a Node and then sets its status through the status
// subresource (a create ignores status). Start from ReadyNodeStatus and
// change it for NotReady or full nodes.
func (e *Env) CreateNode(name string, status corev1.NodeStatus) *corev1.Node {
	ctx, cancel := e.ctx()
	defer cancel()
	nodes := e.Clientset().CoreV1().Nodes()
	n, err := nodes.Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{
		Name: name, Labels: map[string]string{"kubernetes.io/hostname": name},
	}}, metav1.CreateOptions{})
	e.check(err)
	n.Status = status
	n, err = nodes.UpdateStatus(ctx, n, metav1.UpdateOptions{})
	e.check(err)
	return n
}

// CreatePod creates a one-container pod. A non-empty nodeName binds it at
// create time (as the scheduler would); an empty one leaves it Pending with
// no node. mutate, if given, edits the pod before it is created (requests,
// labels, ...).
func (e *Env) CreatePod(namespace, name, nodeName string, mutate ...func(*corev1.Pod)) *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: corev1.PodSpec{
			NodeName:   nodeName,
			Containers: []corev1.Container{{Name: ContainerName, Image: "busybox:1.36"}},
		},
	}
	for _, m := range mutate {
		m(pod)
	}
	ctx, cancel := e.ctx()
	defer cancel()
	pod, err := e.Clientset().CoreV1().Pods(namespace).Create(ctx, pod, metav1.CreateOptions{})
	e.check(err)
	return pod
}

// PodRunning is the status of a pod whose container is running.
func PodRunning() corev1.PodStatus {
	now := metav1.Now()
	return corev1.PodStatus{
		Phase:      corev1.PodRunning,
		Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now}},
		ContainerStatuses: []corev1.ContainerStatus{{
			Name: ContainerName, Image: "busybox:1.36", Ready: true,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
		}},
	}
}

// PodWaiting is the status of a Pending pod whose container waits for the
// given reason (ImagePullBackOff, ErrImagePull, CrashLoopBackOff, ...).
func PodWaiting(reason, message string) corev1.PodStatus {
	return corev1.PodStatus{
		Phase: corev1.PodPending,
		ContainerStatuses: []corev1.ContainerStatus{{
			Name: ContainerName, Image: "busybox:1.36",
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message}},
		}},
	}
}

// SetPodStatus replaces the pod's status through the status subresource,
// as a kubelet would.
func (e *Env) SetPodStatus(namespace, name string, status corev1.PodStatus) *corev1.Pod {
	ctx, cancel := e.ctx()
	defer cancel()
	pods := e.Clientset().CoreV1().Pods(namespace)
	pod, err := pods.Get(ctx, name, metav1.GetOptions{})
	e.check(err)
	pod.Status = status
	pod, err = pods.UpdateStatus(ctx, pod, metav1.UpdateOptions{})
	e.check(err)
	return pod
}

// CreatePodEvent records a core/v1 Event about the pod, as the scheduler
// (reason FailedScheduling, message like "0/1 nodes are available: 1
// Insufficient cpu.") or the kubelet (Failed, BackOff, ...) would.
// eventType is corev1.EventTypeWarning or corev1.EventTypeNormal.
func (e *Env) CreatePodEvent(pod *corev1.Pod, eventType, reason, message string) *corev1.Event {
	component := "kubelet"
	if reason == "FailedScheduling" || reason == "Scheduled" {
		component = "default-scheduler"
	}
	now := metav1.NewTime(time.Now())
	ev := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: pod.Namespace,
			Name:      fmt.Sprintf("%s.%x", pod.Name, time.Now().UnixNano()),
		},
		InvolvedObject: corev1.ObjectReference{
			APIVersion: "v1", Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name,
			UID: pod.UID, ResourceVersion: pod.ResourceVersion,
		},
		Type: eventType, Reason: reason, Message: message,
		Source:         corev1.EventSource{Component: component, Host: pod.Spec.NodeName},
		FirstTimestamp: now, LastTimestamp: now, Count: 1,
	}
	ctx, cancel := e.ctx()
	defer cancel()
	ev, err := e.Clientset().CoreV1().Events(pod.Namespace).Create(ctx, ev, metav1.CreateOptions{})
	e.check(err)
	return ev
}
