//go:build integration

package bench

import (
	"context"
	"fmt"
	"net"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/socialwebcomputer/doctor/checks/facts/nodedns"
	"github.com/socialwebcomputer/doctor/testkit/testenv"
)

// The shape of issue 24: a real cluster's, grown in place. Every node runs
// three kube-system DaemonSet pods (the node-local DNS add-on's, labelled as
// the add-on labels them, and two others) and about 30 pods in all; the
// application pods live in namespaces of 200; the runner namespace holds
// 20 Running job pods. A size is its pod count; nodes are a thirtieth.
const (
	podsPerNode     = 30
	systemPerNode   = 3
	appsPerNS       = 200
	runnerJobs      = 20
	appsPerNodeSlot = podsPerNode - systemPerNode // where app pod j runs: node j / 27
)

// scaleShape is the cluster at one size.
type scaleShape struct{ Pods, Nodes, System, Apps int }

func shapeOf(pods int) scaleShape {
	nodes := (pods + podsPerNode - 1) / podsPerNode
	return scaleShape{Pods: pods, Nodes: nodes, System: systemPerNode * nodes, Apps: pods - systemPerNode*nodes - runnerJobs}
}

// systemDaemonSets are kube-system's DaemonSets, by the label their pods
// carry: the node-local DNS add-on's (nodedns.PodLabel=nodedns.PodName),
// kube-proxy and a CNI agent.
var systemDaemonSets = []struct{ name, labelKey, labelValue, image string }{
	{nodedns.PodName, nodedns.PodLabel, nodedns.PodName, "registry.example.invalid/socialweb/node-dns:1.4.0"},
	{"kube-proxy", "k8s-app", "kube-proxy", "registry.k8s.io/kube-proxy:v1.37.2"},
	{"cilium", "k8s-app", "cilium", "quay.io/cilium/cilium:v1.18.2"},
}

// growClients are the loader's connections: each clientset its own HTTP/2
// connection (a Dial of its own keeps client-go from sharing one transport),
// so the apiserver serves the writes on several at once.
func growClients(env *testenv.Env, n int) ([]kubernetes.Interface, error) {
	var out []kubernetes.Interface
	for range n {
		cfg := rest.CopyConfig(env.AdminConfig())
		cfg.QPS = -1
		cfg.ContentType = "application/vnd.kubernetes.protobuf"
		cfg.UserAgent = "doctor-bench-loader"
		d := &net.Dialer{Timeout: 10 * time.Second}
		cfg.Dial = d.DialContext
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return nil, err
		}
		out = append(out, cs)
	}
	return out, nil
}

// grow takes the cluster from shape from to shape to (from zero: the
// DaemonSets and namespaces too). Each object is a create and, for nodes
// and pods, the status the kubelet would post; the apiserver makes the
// managedFields of both. Nodes are created before the pods bound to them.
func grow(ctx context.Context, css []kubernetes.Interface, from, to scaleShape, kubeletPort int) error {
	const workers = 24
	cs := func(w int) kubernetes.Interface { return css[w%len(css)] }
	if from.Pods == 0 {
		for _, d := range systemDaemonSets {
			if _, err := css[0].AppsV1().DaemonSets("kube-system").Create(ctx, daemonSet(d.name, d.labelKey, d.labelValue, d.image), metav1.CreateOptions{}); err != nil {
				return fmt.Errorf("daemonset %s: %w", d.name, err)
			}
		}
	}
	for ns := (from.Apps + appsPerNS - 1) / appsPerNS; ns < (to.Apps+appsPerNS-1)/appsPerNS; ns++ {
		_, err := css[0].CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: scaleNS(ns)}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	err := parallel(workers, to.Nodes-from.Nodes, func(i int) error {
		i += from.Nodes
		core := cs(i).CoreV1()
		n := node(i)
		n.Labels[nodedns.NodeLabel] = "true"
		n, err := core.Nodes().Create(ctx, n, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		n.Status = nodeStatus(i)
		n.Status.DaemonEndpoints.KubeletEndpoint.Port = int32(kubeletPort)
		_, err = core.Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("nodes: %w", err)
	}
	// The new pods: the new nodes' DaemonSet pods, then the new app pods,
	// then (from zero) the runner's job pods.
	newSystem, newApps := to.System-from.System, to.Apps-from.Apps
	jobs := 0
	if from.Pods == 0 {
		jobs = runnerJobs
	}
	err = parallel(workers, newSystem+newApps+jobs, func(i int) error {
		var p *corev1.Pod
		switch {
		case i < newSystem:
			k := from.System + i
			p = systemPod(k/systemPerNode, k%systemPerNode)
		case i < newSystem+newApps:
			p = scaleAppPod(from.Apps + i - newSystem)
		default:
			j := i - newSystem - newApps
			p = jobPod(runnerNS, j, nodeName(j))
		}
		p.Spec.Containers[0].Args = []string{"--log-level=info", "--listen=:8080", "--metrics"}
		core := cs(i).CoreV1()
		created, err := core.Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		created.Status = runningStatus(created, i+from.Pods)
		_, err = core.Pods(p.Namespace).UpdateStatus(ctx, created, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("pods: %w", err)
	}
	return nil
}

func scaleNS(i int) string { return fmt.Sprintf("apps-%03d", i) }

// systemPod is DaemonSet d's pod on node n.
func systemPod(n, d int) *corev1.Pod {
	ds := systemDaemonSets[d]
	p := pod("kube-system", fmt.Sprintf("%s-%05x", ds.name, n), nodeName(n), "DaemonSet", ds.name,
		map[string]string{ds.labelKey: ds.labelValue, "controller-revision-hash": "7d9f8c6b5", "pod-template-generation": "1"},
		container(ds.name, ds.image, "50m", "64Mi"))
	p.Spec.PriorityClassName = "system-node-critical"
	return p
}

// scaleAppPod is app pod j: namespace j/200, a Deployment of 20 per
// namespace, on node j/27.
func scaleAppPod(j int) *corev1.Pod {
	ns := scaleNS(j / appsPerNS)
	dep := fmt.Sprintf("svc-%02d", j%20)
	return pod(ns, fmt.Sprintf("%s-6f7c9d8b4-%06d", dep, j), nodeName(j/appsPerNodeSlot), "ReplicaSet", dep+"-6f7c9d8b4",
		map[string]string{"app.kubernetes.io/name": dep, "app.kubernetes.io/part-of": ns, "pod-template-hash": "6f7c9d8b4"},
		container("app", "registry.example.invalid/"+ns+"/"+dep+":v1.2.3", "250m", "256Mi"))
}

func daemonSet(name, key, value, image string) *appsv1.DaemonSet {
	sel := map[string]string{key: value}
	c := container(name, image, "50m", "64Mi")
	c.VolumeMounts = nil // the pods' projected token volume is the admission's, not the template's
	return &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: name, Labels: sel},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: sel},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: sel}, Spec: corev1.PodSpec{
				PriorityClassName: "system-node-critical", Containers: []corev1.Container{c}}},
		},
	}
}
