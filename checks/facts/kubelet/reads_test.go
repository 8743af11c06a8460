package kubelet

import (
	"errors"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"

	"github.com/socialwebcomputer/doctor/checks/client/kube/kubefake"
	"github.com/socialwebcomputer/doctor/checks/facts/nodedns"
)

// TestClassify: the apiserver's words for each way a kubelet dial fails,
// as kube-apiserver v1.37.2 returns them for pods/log (the integration
// test drives the real ones).
func TestClassify(t *testing.T) {
	internal := apierrors.NewInternalError(errors.New(`Get "https://127.0.0.1:10250/containerLogs/ns/p/c?limitBytes=1": remote error: tls: internal error`))
	for _, tc := range []struct {
		err  error
		want Kind
	}{
		{nil, Reachable},
		{internal, NoCertificate},
		{apierrors.NewInternalError(errors.New(`Get "https://10.0.0.7:10250/containerLogs/ns/p/c": dial tcp 10.0.0.7:10250: connect: connection refused`)), Refused},
		{apierrors.NewInternalError(errors.New(`Get "https://203.0.113.7:10250/containerLogs/ns/p/c": dial tcp 203.0.113.7:10250: i/o timeout`)), Unreachable},
		{apierrors.NewInternalError(errors.New(`Get "https://203.0.113.7:10250/containerLogs/ns/p/c": net/http: TLS handshake timeout`)), Unreachable},
		{&noAnswer{after: 3 * time.Second, err: errors.New("context deadline exceeded")}, Unreachable},
		{apierrors.NewForbidden(schema.GroupResource{Resource: "pods/log"}, "p", errors.New("no")), Inconclusive},
		{apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, "p"), Inconclusive},
		{apierrors.NewBadRequest(`container "c" in pod "p" is waiting to start: ContainerCreating`), Inconclusive},
	} {
		if got := Classify(tc.err); got.Kind != tc.want {
			t.Errorf("classify(%v) = %d (%s), want %d", tc.err, got.Kind, got.Words, tc.want)
		}
	}
}

func readyNode(name string, created time.Time, ready bool) corev1.Node {
	st := corev1.ConditionTrue
	if !ready {
		st = corev1.ConditionFalse
	}
	return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(created)},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: st}}}}
}

// TestSample: Ready nodes first, newest first, and never more than max.
func TestSample(t *testing.T) {
	base := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	var nodes []corev1.Node
	for i := range 8 {
		nodes = append(nodes, readyNode(fmt.Sprintf("n%d", i), base.Add(time.Duration(i)*time.Minute), i != 7))
	}
	got := Sample(nodes, MaxNodes)
	var names []string
	for _, n := range got {
		names = append(names, n.Name)
	}
	if fmt.Sprint(names) != "[n6 n5 n4 n3 n2]" {
		t.Errorf("sample %v, want [n6 n5 n4 n3 n2] (Ready, newest first, %d at most)", names, MaxNodes)
	}
}

// TestPodOn: the node-local DNS pod is preferred, only Running pods count.
func TestPodOn(t *testing.T) {
	pod := func(ns, name, node string, phase corev1.PodPhase, labels map[string]string) corev1.Pod {
		return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels}, Spec: corev1.PodSpec{NodeName: node},
			Status: corev1.PodStatus{Phase: phase}}
	}
	dns := map[string]string{nodedns.PodLabel: nodedns.PodName}
	pods := []corev1.Pod{
		pod("gitlab-runner", "runner-x", "n1", corev1.PodRunning, nil),
		pod("kube-system", "kube-proxy-a", "n1", corev1.PodRunning, nil),
		pod("kube-system", "node-dns-a", "n1", corev1.PodRunning, dns),
		pod("kube-system", "node-dns-b", "n2", corev1.PodPending, dns),
		pod("gitlab-runner", "runner-y", "n2", corev1.PodRunning, nil),
	}
	if p := PodOn("n1", pods); p == nil || p.Name != "node-dns-a" {
		t.Errorf("n1: %v, want node-dns-a", p)
	}
	if p := PodOn("n2", pods); p == nil || p.Name != "runner-y" {
		t.Errorf("n2: %v, want runner-y (the DNS pod is not Running)", p)
	}
	if p := PodOn("n3", pods); p != nil {
		t.Errorf("n3: %v, want none", p.Name)
	}
}

// TestEarlyNodes: the early reads go to each node that runs a Running
// kube-system pod, once, in name order; a pod on no node, or not Running,
// names none.
func TestEarlyNodes(t *testing.T) {
	pod := func(name, node string, phase corev1.PodPhase) corev1.Pod {
		return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: name}, Spec: corev1.PodSpec{NodeName: node},
			Status: corev1.PodStatus{Phase: phase}}
	}
	pods := []corev1.Pod{
		pod("a", "n2", corev1.PodRunning),
		pod("b", "n1", corev1.PodRunning),
		pod("c", "n2", corev1.PodRunning),
		pod("d", "n3", corev1.PodPending),
		pod("e", "", corev1.PodRunning),
	}
	if got := fmt.Sprint(earlyNodes(pods, MaxNodes)); got != "[n1 n2]" {
		t.Errorf("earlyNodes = %s, want [n1 n2]", got)
	}
	if got := earlyNodes(nil, MaxNodes); len(got) != 0 {
		t.Errorf("earlyNodes(nil) = %v", got)
	}
	// More nodes than max: no early reads (the check samples them).
	if got := earlyNodes(pods, 1); got != nil {
		t.Errorf("earlyNodes(max 1) = %v, want none", got)
	}
	if got := fmt.Sprint(earlyNodes(pods, 2)); got != "[n1 n2]" {
		t.Errorf("earlyNodes(max 2) = %s, want [n1 n2]", got)
	}
}

// TestPodOnReadsEveryList: the candidates are several lists read in place,
// and the first pod of the best rank wins in their order, as in one list.
func TestPodOnReadsEveryList(t *testing.T) {
	pod := func(ns, name, node string, labels map[string]string) corev1.Pod {
		return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels}, Spec: corev1.PodSpec{NodeName: node},
			Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	}
	dns := map[string]string{nodedns.PodLabel: nodedns.PodName}
	addon := []corev1.Pod{pod("kube-system", "node-dns-a", "n1", dns)}
	onNode := []corev1.Pod{pod("kube-system", "cilium-b", "n2", nil), pod("kube-system", "kube-proxy-b", "n2", nil)}
	runner := []corev1.Pod{pod("gitlab-runner", "runner-x", "n1", nil), pod("gitlab-runner", "runner-y", "n2", nil)}
	if p := PodOn("n1", runner, addon); p == nil || p.Name != "node-dns-a" {
		t.Errorf("n1: %v, want node-dns-a (the add-on's, from the second list)", p)
	}
	if p := PodOn("n2", addon, onNode, runner); p == nil || p.Name != "cilium-b" {
		t.Errorf("n2: %v, want cilium-b (kube-system's first on the node)", p)
	}
	if p := PodOn("n2", addon, runner); p == nil || p.Name != "runner-y" {
		t.Errorf("n2 without its page: %v, want runner-y", p)
	}
}

// TestSystemPodsOn: a node's Running kube-system pods are one small page by
// field selector, in kube-system only.
func TestSystemPodsOn(t *testing.T) {
	running := func(name, node string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: name}, Spec: corev1.PodSpec{NodeName: node},
			Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	}
	fake, c := kubefake.New(running("kube-proxy-a", "n1"), running("kube-proxy-b", "n2"))
	pods, err := SystemPodsOn(nil, t.Context(), "", c, "n2")
	if err != nil {
		t.Fatal(err)
	}
	if p := PodOn("n2", pods); p == nil || p.Name != "kube-proxy-b" {
		t.Errorf("PodOn(n2, SystemPodsOn(n2)) = %v, want kube-proxy-b", p)
	}
	var lists []string
	for _, a := range fake.Actions() {
		if l, ok := a.(k8stesting.ListAction); ok {
			r := l.GetListRestrictions()
			lists = append(lists, fmt.Sprintf("%s %s %s", l.GetNamespace(), r.Fields, r.Labels))
		}
	}
	if want := "[kube-system spec.nodeName=n2,status.phase=Running ]"; fmt.Sprint(lists) != want {
		t.Errorf("lists %v, want %s", lists, want)
	}
}
