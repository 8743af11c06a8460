//go:build integration

package bench

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/socialwebcomputer/doctor/testkit/testenv"
)

// shape is the loaded cluster. The 9,000 Running pods outside the runner
// namespace are one node-dns DaemonSet pod per node in kube-system plus
// Deployment pods over 49 application namespaces: 50 namespaces in all.
type shape struct {
	Nodes         int // each with a kube-system node-dns pod
	AppNamespaces int
	AppPods       int
	RunnerRunning int // job pods bound to nodes in the runner namespace
	RunnerPending int // job pods with no node, each with a FailedScheduling event
	Warnings      int // readiness-probe Warning events on app pods
}

var tenK = shape{Nodes: 1000, AppNamespaces: 49, AppPods: 8000, RunnerRunning: 950, RunnerPending: 50, Warnings: 1000}

func (s shape) pods() int { return s.Nodes + s.AppPods + s.RunnerRunning + s.RunnerPending }

// fastClient is the admin without client-side throttling and with protobuf:
// env.Clientset() is capped at 200 QPS, which would make loading 22,000
// objects take minutes.
func fastClient(env *testenv.Env) (kubernetes.Interface, error) {
	cfg := rest.CopyConfig(env.AdminConfig())
	cfg.QPS = -1 // negative: no rate limiter at all
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.UserAgent = "doctor-bench-loader"
	return kubernetes.NewForConfig(cfg)
}

// load creates the shape. Every object is a create (plus a status update for
// nodes and Running pods, as the kubelet would post), spread over workers.
func load(ctx context.Context, cs kubernetes.Interface, s shape, runnerNS string) error {
	const workers = 48
	core := cs.CoreV1()
	for i := 0; i < s.AppNamespaces; i++ {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: appNS(i)}}
		if _, err := core.Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	err := parallel(workers, s.Nodes, func(i int) error {
		n, err := core.Nodes().Create(ctx, node(i), metav1.CreateOptions{})
		if err != nil {
			return err
		}
		n.Status = nodeStatus(i)
		_, err = core.Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("nodes: %w", err)
	}
	// Pod index ranges: node-dns, app, runner Running, runner Pending.
	a, b, c := s.Nodes, s.Nodes+s.AppPods, s.Nodes+s.AppPods+s.RunnerRunning
	err = parallel(workers, s.pods(), func(i int) error {
		var p *corev1.Pod
		switch {
		case i < a:
			p = nodeDNSPod(i)
		case i < b:
			p = appPod(i-a, s)
		case i < c:
			p = jobPod(runnerNS, i-b, nodeName((i-b)%s.Nodes))
		default:
			p = jobPod(runnerNS, i-b, "")
		}
		created, err := core.Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{})
		if err != nil || i >= c {
			if err == nil { // a Pending job pod: the scheduler's warning
				_, err = core.Events(p.Namespace).Create(ctx, podEvent(created, "FailedScheduling", "default-scheduler",
					fmt.Sprintf("0/%d nodes are available: %d Insufficient cpu. preemption: 0/%d nodes are available: %d No preemption victims found for incoming pod.", s.Nodes, s.Nodes, s.Nodes, s.Nodes)), metav1.CreateOptions{})
			}
			return err
		}
		created.Status = runningStatus(created, i)
		_, err = core.Pods(p.Namespace).UpdateStatus(ctx, created, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("pods: %w", err)
	}
	return parallel(workers, s.Warnings, func(i int) error {
		idx := i * s.AppPods / s.Warnings
		p := appPod(idx, s)
		_, err := core.Events(p.Namespace).Create(ctx, podEvent(p, "Unhealthy", "kubelet",
			"Readiness probe failed: Get \"http://10.64.0.1:8080/healthz\": context deadline exceeded (Client.Timeout exceeded while awaiting headers)"), metav1.CreateOptions{})
		return err
	})
}

// parallel runs fn(0..n-1) on workers goroutines and returns the first error.
func parallel(workers, n int, fn func(i int) error) error {
	var next atomic.Int64
	var first atomic.Value
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Go(func() {
			for first.Load() == nil {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := fn(i); err != nil {
					first.CompareAndSwap(nil, err)
				}
			}
		})
	}
	wg.Wait()
	if err, ok := first.Load().(error); ok {
		return err
	}
	return nil
}

func appNS(i int) string    { return fmt.Sprintf("team-%02d", i) }
func nodeName(i int) string { return fmt.Sprintf("market-node-%04d", i) }

func node(i int) *corev1.Node {
	name := nodeName(i)
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
			"node.kubernetes.io/instance-type": "market-4c16g", "topology.kubernetes.io/zone": fmt.Sprintf("zone-%d", i%3),
			"socialweb.computer/lease": fmt.Sprintf("lease-%06d", i),
		}},
		Spec: corev1.NodeSpec{ProviderID: "socialweb://" + name, PodCIDR: fmt.Sprintf("10.%d.%d.0/24", 64+i/256, i%256)},
	}
}

// nodeStatus is testenv's Ready status (InternalIP 127.0.0.1, no kubelet
// port: nothing may dial off loopback) with what a real kubelet adds and
// what makes node objects large: the other conditions, nodeInfo, images.
func nodeStatus(i int) corev1.NodeStatus {
	st := testenv.ReadyNodeStatus("4", "16Gi", 0)
	now := metav1.Now()
	for _, c := range []corev1.NodeConditionType{corev1.NodeMemoryPressure, corev1.NodeDiskPressure, corev1.NodePIDPressure} {
		st.Conditions = append(st.Conditions, corev1.NodeCondition{Type: c, Status: corev1.ConditionFalse,
			Reason: "KubeletHas" + string(c)[:len(c)-len("Pressure")] + "Sufficient", LastHeartbeatTime: now, LastTransitionTime: now})
	}
	st.NodeInfo = corev1.NodeSystemInfo{
		MachineID: fmt.Sprintf("%032x", i), SystemUUID: fmt.Sprintf("%08x-0000-0000-0000-000000000000", i), BootID: fmt.Sprintf("boot-%d", i),
		KernelVersion: "6.12.48+deb13-amd64", OSImage: "Debian GNU/Linux 13 (trixie)", ContainerRuntimeVersion: "containerd://2.1.4",
		KubeletVersion: "v1.37.2", OperatingSystem: "linux", Architecture: "amd64",
	}
	for j := 0; j < 20; j++ {
		repo := fmt.Sprintf("registry.example.invalid/team-%02d/app", j)
		st.Images = append(st.Images, corev1.ContainerImage{SizeBytes: int64(50+j) << 20,
			Names: []string{fmt.Sprintf("%s@sha256:%064x", repo, j), repo + ":v1.2.3"}})
	}
	return st
}

func nodeDNSPod(i int) *corev1.Pod {
	p := pod("kube-system", fmt.Sprintf("socialweb-node-dns-%05x", i), nodeName(i), "DaemonSet", "socialweb-node-dns",
		map[string]string{"app.kubernetes.io/name": "socialweb-node-dns", "controller-revision-hash": "7d9f8c6b5"},
		container("node-dns", "registry.example.invalid/socialweb/node-dns:1.4.0", "50m", "64Mi"))
	p.Spec.PriorityClassName = "system-node-critical"
	return p
}

func appPod(i int, s shape) *corev1.Pod {
	ns := appNS(i % s.AppNamespaces)
	dep := fmt.Sprintf("svc-%02d", (i/s.AppNamespaces)%20)
	return pod(ns, fmt.Sprintf("%s-6f7c9d8b4-%05d", dep, i), nodeName(i%s.Nodes), "ReplicaSet", dep+"-6f7c9d8b4",
		map[string]string{"app.kubernetes.io/name": dep, "app.kubernetes.io/part-of": ns, "pod-template-hash": "6f7c9d8b4"},
		container("app", "registry.example.invalid/"+ns+"/"+dep+":v1.2.3", "250m", "256Mi"))
}

// jobPod is a job pod as the Kubernetes executor makes it: build and helper
// containers with the guide's requests.
func jobPod(ns string, i int, node string) *corev1.Pod {
	name := fmt.Sprintf("runner-t3stt0k3n-project-%d-concurrent-%d-%05d", 100+i%40, i%2, i)
	p := pod(ns, name, node, "", "", map[string]string{
		"pod": name, "project.runner.gitlab.com/id": fmt.Sprint(100 + i%40), "job.runner.gitlab.com/id": fmt.Sprint(500000 + i),
		"manager.runner.gitlab.com/name": "kcp-tenant-kubernetes",
	}, container("build", "busybox:1.36", "100m", "128Mi"), container("helper", "registry.gitlab.com/gitlab-org/gitlab-runner/gitlab-runner-helper:x86_64-v19.3.0", "100m", "128Mi"))
	p.Spec.RestartPolicy = corev1.RestartPolicyNever
	for i := range p.Spec.Containers {
		p.Spec.Containers[i].Ports = nil // job containers serve nothing
	}
	return p
}

func pod(ns, name, node, ownerKind, owner string, labels map[string]string, cs ...corev1.Container) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		// The token projection needs a service account name; with the
		// ServiceAccount admission plugin off, the account need not exist.
		Spec: corev1.PodSpec{NodeName: node, ServiceAccountName: "default", Containers: cs, Volumes: []corev1.Volume{{
			Name: "kube-api-access", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
				{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr(int64(3607))}},
				{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
					Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
				{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "namespace",
					FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}},
			}}},
		}}},
	}
	if ownerKind != "" {
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: ownerKind, Name: owner,
			UID: types.UID(fmt.Sprintf("00000000-0000-0000-0000-%012d", len(owner))), Controller: ptr(true), BlockOwnerDeletion: ptr(true)}}
	}
	return p
}

func container(name, image, cpu, mem string) corev1.Container {
	req := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}
	return corev1.Container{
		Name: name, Image: image, Resources: corev1.ResourceRequirements{Requests: req, Limits: corev1.ResourceList{corev1.ResourceMemory: req[corev1.ResourceMemory]}},
		Ports:                  []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
		Env:                    []corev1.EnvVar{{Name: "LOG_LEVEL", Value: "info"}, {Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}},
		VolumeMounts:           []corev1.VolumeMount{{Name: "kube-api-access", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true}},
		TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: corev1.TerminationMessageReadFile, ImagePullPolicy: corev1.PullIfNotPresent,
	}
}

// runningStatus is what the kubelet posts for a started pod: Running, every
// container running and ready, IPs and the four conditions.
func runningStatus(p *corev1.Pod, i int) corev1.PodStatus {
	now := metav1.Now()
	st := corev1.PodStatus{Phase: corev1.PodRunning, StartTime: &now, QOSClass: corev1.PodQOSBurstable,
		HostIP: "127.0.0.1", PodIP: fmt.Sprintf("10.%d.%d.%d", 64+i/65536, (i/256)%256, i%256)}
	for _, c := range []corev1.PodConditionType{corev1.PodInitialized, corev1.PodReady, corev1.ContainersReady, corev1.PodScheduled} {
		st.Conditions = append(st.Conditions, corev1.PodCondition{Type: c, Status: corev1.ConditionTrue, LastTransitionTime: now})
	}
	for _, c := range p.Spec.Containers {
		st.ContainerStatuses = append(st.ContainerStatuses, corev1.ContainerStatus{
			Name: c.Name, Image: c.Image, ImageID: "docker-pullable://" + c.Image, ContainerID: fmt.Sprintf("containerd://%064x", i),
			Ready: true, Started: ptr(true), State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
		})
	}
	return st
}

func podEvent(p *corev1.Pod, reason, component, message string) *corev1.Event {
	now := metav1.NewTime(time.Now())
	return &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Namespace: p.Namespace, Name: fmt.Sprintf("%s.%x", p.Name, time.Now().UnixNano())},
		InvolvedObject: corev1.ObjectReference{APIVersion: "v1", Kind: "Pod", Namespace: p.Namespace, Name: p.Name, UID: p.UID},
		Type:           corev1.EventTypeWarning, Reason: reason, Message: message, Source: corev1.EventSource{Component: component, Host: p.Spec.NodeName},
		FirstTimestamp: now, LastTimestamp: now, Count: 1,
	}
}

func ptr[T any](v T) *T { return &v }
