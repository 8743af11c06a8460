//go:build integration

package e2e

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/socialwebcomputer/doctor/cmd/doctor/cli"
	"github.com/socialwebcomputer/doctor/report"
	"github.com/socialwebcomputer/doctor/testkit/fixture"
	"github.com/socialwebcomputer/doctor/testkit/testenv"
	"github.com/socialwebcomputer/doctor/testkit/testroot"
)

// execWorld is the guide's exec path on loopback: the real apiserver, a
// fake-kubelet node whose upgrade is apimachinery's real SPDY upgrader, and
// optionally real Caddy in front, demanding the owner's client certificate
// as the kcp front does.
func execWorld(t *testing.T, front *testenv.FrontOptions) (env *testenv.Env, kubeconfig []byte) {
	env, kc, _ := execWorldKubelet(t, front)
	return env, kc
}

func execWorldKubelet(t *testing.T, front *testenv.FrontOptions) (env *testenv.Env, kubeconfig []byte, kubelet *testenv.FakeKubelet) {
	env = testenv.Start(t)
	env.BindOwnersToClusterAdmin()
	env.EnsureNamespace("gitlab-runner")
	kubelet = env.StartFakeKubelet(t)
	createNodeDNSDaemonSet(t, env)
	rentNode(t, env, "rented-1", "4", "16Gi", kubelet.Port)
	server := env.URL
	if front != nil {
		// The front admits the owner's certificate and reaches the cluster
		// as the owner, as the kcp mount does.
		o := *front
		o.UpstreamCertPEM, o.UpstreamKeyPEM = env.OwnerCert(ownerDID, time.Now().Add(12*time.Hour))
		server = env.StartFront(t, o).URL
	}
	return env, ownerKubeconfig(env, server, time.Now().Add(12*time.Hour)), kubelet
}

// What exec-upgrade concludes of a front with and without HTTP/1.1 and of
// a direct apiserver is proven in checks/execupgrade. Here: the broken
// front fails only exec-upgrade, ranked first, exit 2.
func TestExecUpgradeThroughFrontWithoutHTTP11(t *testing.T) {
	_, kc := execWorld(t, &testenv.FrontOptions{HTTP11: false, RequireClientCert: true})
	rep := runAgainst(t, testroot.GuideConfig, kc, 0)
	// Plain GETs pass the broken front: every other API check is green.
	fixture.AssertWant(t, rep, fixture.Want{Exit: 2, Top: "exec-upgrade",
		Status: map[string]string{"api-auth": "pass", "owner-rbac": "pass", "runner-rbac": "pass", "namespace": "pass", "exec-upgrade": "fail"}})
}

// TestExecUpgradeDeep runs --deep through the good front: the probe pod is
// created, placed by this test acting as the scheduler and kubelet, exec'd
// with the real SPDY executor (a real 101 from the fake kubelet), and deleted.
func TestExecUpgradeDeep(t *testing.T) {
	env, kc, kubelet := execWorldKubelet(t, &testenv.FrontOptions{HTTP11: true, RequireClientCert: true})
	stop := actAsScheduler(t, env, "gitlab-runner", "rented-1")
	defer stop()
	root := testroot.New(t)
	root.GuideRunner(testroot.GuideConfig, kc)
	var out, errb bytes.Buffer
	code := cli.Main([]string{"run", "--root", root.Dir, "-o", "json", "--deep", "--timeout", "90s", "--skip", "gitlab-reachability"},
		cli.IO{Out: &out, Err: &errb, Getenv: func(string) string { return "" }})
	var rep report.Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("exit %d: %v\n%s\n%s", code, err, out.String(), errb.String())
	}
	t.Logf("report:\n%s", summarize(&rep))
	fixture.AssertWant(t, &rep, fixture.Want{Exit: 0, Absent: []string{"exec-upgrade"}, Status: map[string]string{"exec-upgrade": "pass"}})
	if !strings.Contains(errb.String(), "--deep creates a probe pod") {
		t.Errorf("--deep did not say it mutates: %q", errb.String())
	}
	pods, err := env.Clientset().CoreV1().Pods("gitlab-runner").List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if strings.HasPrefix(p.Name, "doctor-exec-probe-") && p.DeletionTimestamp == nil {
			t.Errorf("probe pod %s was not deleted", p.Name)
		}
	}
	if len(rep.CleanupErrors) > 0 {
		t.Errorf("cleanup errors: %v", rep.CleanupErrors)
	}
	// The exec reached the node: the fake kubelet answered it with the real
	// SPDY upgrader (101) and played `true`.
	reached := false
	for _, r := range kubelet.Requests() {
		if strings.Contains(r, "/exec/gitlab-runner/doctor-exec-probe-") {
			reached = true
		}
	}
	if !reached {
		t.Errorf("the probe's exec never reached the kubelet; it saw %v", kubelet.Requests())
	}
}

// TestExecUpgradeDeepCleansUpOnTimeout ends the run while the probe pod can
// never start (nothing schedules it): the pod must still be deleted.
func TestExecUpgradeDeepCleansUpOnTimeout(t *testing.T) {
	env, kc := execWorld(t, nil)
	root := testroot.New(t)
	root.GuideRunner(testroot.GuideConfig, kc)
	var out, errb bytes.Buffer
	start := time.Now()
	cli.Main([]string{"run", "--root", root.Dir, "-o", "json", "--deep", "--timeout", "8s"},
		cli.IO{Out: &out, Err: &errb, Getenv: func(string) string { return "" }})
	if took := time.Since(start); took > 8*time.Second+checksCleanupSlack {
		t.Errorf("run took %s with --timeout 8s", took)
	}
	pods, err := env.Clientset().CoreV1().Pods("gitlab-runner").List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	created := false
	for _, p := range pods.Items {
		if strings.HasPrefix(p.Name, "doctor-exec-probe-") {
			created = true
			if p.DeletionTimestamp == nil {
				t.Errorf("probe pod %s left behind after the deadline", p.Name)
			}
		}
	}
	if !created && !strings.Contains(out.String(), "doctor-exec-probe-") {
		t.Log("the run ended before the probe pod was created; nothing to clean")
	}
}

const checksCleanupSlack = 5 * time.Second

// actAsScheduler binds every new probe pod to node and reports it Running,
// as the scheduler and the kubelet would.
func actAsScheduler(t *testing.T, env *testenv.Env, ns, node string) func() {
	st := testenv.PodRunning()
	if len(st.ContainerStatuses) > 0 {
		st.ContainerStatuses[0].Name = "probe"
	}
	return actAsSchedulerWith(t, env, ns, node, st)
}

// actAsSchedulerWith binds every new probe pod to node and gives it the
// status st, as the scheduler and the kubelet would.
func actAsSchedulerWith(t *testing.T, env *testenv.Env, ns, node string, st corev1.PodStatus) func() {
	done := make(chan struct{})
	cs := env.Clientset()
	go func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(200 * time.Millisecond):
			}
			pods, err := cs.CoreV1().Pods(ns).List(t.Context(), metav1.ListOptions{})
			if err != nil {
				continue
			}
			for _, p := range pods.Items {
				if !strings.HasPrefix(p.Name, "doctor-exec-probe-") || p.Spec.NodeName != "" {
					continue
				}
				err := cs.CoreV1().Pods(ns).Bind(t.Context(), &corev1.Binding{
					ObjectMeta: metav1.ObjectMeta{Name: p.Name},
					Target:     corev1.ObjectReference{Kind: "Node", Name: node},
				}, metav1.CreateOptions{})
				if err != nil {
					continue
				}
				env.WithT(t).SetPodStatus(ns, p.Name, st)
			}
		}
	}()
	return func() { close(done) }
}
