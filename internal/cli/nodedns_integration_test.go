//go:build integration

package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/socialwebcomputer/doctor/checks/client/dnsq/dnsqtest"
	"github.com/socialwebcomputer/doctor/checks/facts/nodedns"
	"github.com/socialwebcomputer/doctor/internal/testing/fixture"
	"github.com/socialwebcomputer/doctor/internal/testing/testenv"
	"github.com/socialwebcomputer/doctor/internal/testing/testroot"
	"github.com/socialwebcomputer/doctor/report"
)

// jobToken rides in the repository URL, as CI_REPOSITORY_URL carries it; no
// output may repeat it.
const jobToken = "job-token-must-not-leak"

// nodeDNSCase is the guide's "Could not resolve host" row on a real
// apiserver. The DNS server is a loopback miekg server given as
// --dns-server; "" gives none, so the direct probe must not run.
type nodeDNSCase struct {
	name   string
	setup  func(t *testing.T, env *testenv.Env) []byte // returns the kubeconfig
	server func(t *testing.T) (addr string, queries func() int64)
	want   fixture.Want
	// folded maps text of a node-local-dns finding to the check it must
	// fold under ("" for a root).
	folded  map[string]string
	probed  bool // the server must have been asked
	absent  bool // node-local-dns must have no finding
	elapsed time.Duration
}

func TestNodeDNSScenarios(t *testing.T) {
	owner := func(env *testenv.Env, notAfter time.Time) []byte { return ownerKubeconfig(env, env.URL, notAfter) }
	base := func(t *testing.T, env *testenv.Env) []byte {
		env.BindOwnersToClusterAdmin()
		env.EnsureNamespace("gitlab-runner")
		return owner(env, time.Now().Add(12*time.Hour))
	}
	withDNS := func(t *testing.T, env *testenv.Env) []byte {
		kc := base(t, env)
		createNodeDNSDaemonSet(t, env)
		createNode(t, env, "rented-1", true)
		createDNSPod(t, env, "node-dns-rented-1", "rented-1", testenv.PodRunning())
		return kc
	}
	healthy := func(t *testing.T) (string, func() int64) {
		s := dnsqtest.Healthy(t, "127.0.0.9")
		return s.Addr, s.Queries
	}
	none := func(*testing.T) (string, func() int64) { return "", nil }
	const ndns = "node-local-dns"

	cases := []nodeDNSCase{
		{name: "healthy", setup: withDNS, server: healthy, probed: true, absent: true,
			want: fixture.Want{Exit: 0, Status: map[string]string{ndns: "pass"}}},
		{name: "no-daemonset-at-rest", setup: base, server: none,
			want: fixture.Want{Exit: 1, Top: ndns, Says: map[string][]string{ndns: {"the provider's add-on pass never applied the node network add-ons", "zero nodes"}}}},
		{name: "no-daemonset-with-a-node-probe-refused", setup: func(t *testing.T, env *testenv.Env) []byte {
			kc := base(t, env)
			createNode(t, env, "rented-1", true)
			return kc
		}, server: func(t *testing.T) (string, func() int64) { return dnsqtest.Closed(t), nil },
			want:   fixture.Want{Exit: 2, Top: ndns, Says: map[string][]string{ndns: {"None of the 1 node runs a DNS server", "refuses DNS over UDP and TCP"}}},
			folded: map[string]string{"add-on pass": "", "refuses DNS": ndns}},
		{name: "node-without-label", setup: func(t *testing.T, env *testenv.Env) []byte {
			kc := base(t, env)
			createNodeDNSDaemonSet(t, env)
			createNode(t, env, "rented-1", false)
			return kc
		}, server: healthy, probed: true,
			want: fixture.Want{Exit: 2, Top: ndns, Says: map[string][]string{ndns: {"Node rented-1 is not labelled socialweb.computer/node-local-dns=true", "older user_data"}}}},
		{name: "dns-pod-not-ready-probe-times-out", setup: func(t *testing.T, env *testenv.Env) []byte {
			kc := base(t, env)
			createNodeDNSDaemonSet(t, env)
			createNode(t, env, "rented-1", true)
			createDNSPod(t, env, "node-dns-rented-1", "rented-1", testenv.PodWaiting("CrashLoopBackOff", "back-off 5m0s restarting failed container"))
			return kc
		}, server: func(t *testing.T) (string, func() int64) { return dnsqtest.Silent(t).Addr, nil },
			want:    fixture.Want{Exit: 2, Top: ndns, Says: map[string][]string{ndns: {"pod on node rented-1 is not Ready", "CrashLoopBackOff", "Nothing answers DNS at"}}},
			folded:  map[string]string{"is not Ready": "", "Nothing answers": ndns},
			elapsed: 8 * time.Second},
		{name: "dns-pod-ready-server-fails", setup: withDNS, server: func(t *testing.T) (string, func() int64) {
			s := dnsqtest.Rcode(t, dns.RcodeServerFailure)
			return s.Addr, s.Queries
		}, probed: true,
			want:   fixture.Want{Exit: 2, Top: ndns, Says: map[string][]string{ndns: {"answers SERVFAIL for git.example.invalid", "Could not resolve host: git.example.invalid"}}},
			folded: map[string]string{"SERVFAIL": ""}},
		// The API refuses the credential: the cluster side cannot run, and
		// the direct probe, which needs no API, still does.
		{name: "expired-certificate-probe-only", setup: func(t *testing.T, env *testenv.Env) []byte {
			withDNS(t, env)
			return owner(env, time.Now().Add(-10*time.Minute))
		}, server: healthy, probed: true, absent: true,
			want: fixture.Want{Exit: 2, Top: "api-auth", Status: map[string]string{ndns: "pass"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := testenv.Start(t)
			kc := tc.setup(t, env)
			addr, queries := tc.server(t)
			start := time.Now()
			rep, out := runNodeDNS(t, kc, addr)
			if tc.elapsed > 0 && time.Since(start) > tc.elapsed {
				t.Errorf("run took %s, want under %s", time.Since(start), tc.elapsed)
			}
			// fixture.AssertWant leaves the exit code to its caller.
			if rep.Summary.ExitCode != tc.want.Exit {
				t.Errorf("exit %d, want %d", rep.Summary.ExitCode, tc.want.Exit)
			}
			fixture.AssertWant(t, rep, tc.want)
			assertFolded(t, rep, ndns, tc.folded)
			if tc.absent {
				for _, f := range rep.Findings {
					if f.Check == ndns {
						t.Errorf("want no %s finding, got: %s", ndns, f.Cause)
					}
				}
			}
			if queries != nil && (queries() > 0) != tc.probed {
				t.Errorf("the DNS server was asked %d questions; want asked: %v", queries(), tc.probed)
			}
			if strings.Contains(out, jobToken) {
				t.Errorf("the output repeats the job token from --repository-url")
			}
			if strings.Contains(out, "169.254.20.10:53,") || strings.Contains(out, "udp 169.254.20.10") {
				t.Errorf("the output shows a query to the production default")
			}
		})
	}
}

// runNodeDNS runs only node-local-dns (and what it requires) against the
// cluster, with the guide's runner config and --dns-server when given.
func runNodeDNS(t *testing.T, kubeconfig []byte, dnsServer string) (*report.Report, string) {
	t.Helper()
	root := testroot.New(t)
	root.GuideRunner(testroot.GuideConfig, kubeconfig)
	args := []string{"run", "--root", root.Dir, "-o", "json", "--timeout", "60s", "--only", "node-local-dns",
		"--repository-url", "https://gitlab-ci-token:" + jobToken + "@git.example.invalid/group/project.git"}
	if dnsServer != "" {
		args = append(args, "--dns-server", dnsServer)
	}
	return runReport(t, args...)
}

// assertFolded finds each check finding by its text and checks what it
// folds under. fixture.AssertWant's CausedBy cannot: it looks at a check's first
// finding, and here one check reports both the cause and its consequence.
func assertFolded(t *testing.T, rep *report.Report, check string, want map[string]string) {
	t.Helper()
	for text, by := range want {
		var f *report.Finding
		for i := range rep.Findings {
			if rep.Findings[i].Check == check && strings.Contains(rep.Findings[i].Cause, text) {
				f = &rep.Findings[i]
				break
			}
		}
		if f == nil {
			t.Errorf("no %s finding says %q", check, text)
			continue
		}
		if got := fixture.Deref(f.CausedBy); got != by {
			t.Errorf("%s finding %q folds under %q, want %q", check, text, got, by)
		}
	}
}

// createNodeDNSDaemonSet applies the node network add-on's DaemonSet as
// the provider's add-on pass does. Nothing runs its controller here: tests
// create its pods themselves.
func createNodeDNSDaemonSet(t *testing.T, env *testenv.Env) {
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

// createNode makes a Ready node, labelled for node-local DNS when asked.
func createNode(t *testing.T, env *testenv.Env, name string, labelled bool) {
	t.Helper()
	env.CreateNode(name, testenv.ReadyNodeStatus("4", "16Gi", 0))
	if !labelled {
		return
	}
	patch := []byte(`{"metadata":{"labels":{"` + nodedns.NodeLabel + `":"true"}}}`)
	if _, err := env.Clientset().CoreV1().Nodes().Patch(t.Context(), name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// createDNSPod binds a node DNS pod to a node and sets its status, as the
// DaemonSet controller, the scheduler and the kubelet would.
func createDNSPod(t *testing.T, env *testenv.Env, name, nodeName string, status corev1.PodStatus) {
	t.Helper()
	env.EnsureNamespace(nodedns.Namespace)
	env.CreatePod(nodedns.Namespace, name, nodeName, func(p *corev1.Pod) {
		p.Labels = map[string]string{nodedns.PodLabel: nodedns.PodName}
	})
	env.SetPodStatus(nodedns.Namespace, name, status)
}

// rentNode is a node as the provider joins it today: Ready, labelled for
// node-local DNS, with its Ready DNS pod. kubeletPort 0 means no kubelet.
// rentNode makes a Ready node with a node-local DNS pod on it. A
// kubeletPort of 0 starts a fake kubelet for it: the apiserver reaches a
// rented node's kubelet unless a scenario says otherwise (kubelet-reach).
func rentNode(t *testing.T, env *testenv.Env, name, cpu, memory string, kubeletPort int) {
	t.Helper()
	if kubeletPort == 0 {
		kubeletPort = env.StartFakeKubelet(t).Port
	}
	env.CreateNode(name, testenv.ReadyNodeStatus(cpu, memory, kubeletPort))
	patch := []byte(`{"metadata":{"labels":{"` + nodedns.NodeLabel + `":"true"}}}`)
	if _, err := env.Clientset().CoreV1().Nodes().Patch(t.Context(), name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	createDNSPod(t, env, "node-dns-"+name, name, testenv.PodRunning())
}
