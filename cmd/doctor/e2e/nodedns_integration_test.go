//go:build integration

package e2e

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/socialwebcomputer/doctor/checks/client/dnsq/dnsqtest"
	"github.com/socialwebcomputer/doctor/testkit/fixture"
	"github.com/socialwebcomputer/doctor/testkit/nodednsworld"
	"github.com/socialwebcomputer/doctor/testkit/testenv"
	"github.com/socialwebcomputer/doctor/testkit/testroot"
)

// jobToken rides in the repository URL, as CI_REPOSITORY_URL carries it; no
// output may repeat it.
const jobToken = "job-token-must-not-leak"

// TestNodeDNSScenarios is node-local-dns run whole by the CLI where another
// check decides the outcome: what node-local-dns concludes of a cluster
// and a DNS server alone is proven in checks/nodelocaldns.
func TestNodeDNSScenarios(t *testing.T) {
	const ndns = "node-local-dns"
	// The API refuses the credential: api-auth's finding ranks first and
	// the exit is 2; the cluster side cannot run, and the direct probe,
	// which needs no API, still does and passes.
	t.Run("expired-certificate-probe-only", func(t *testing.T) {
		env := testenv.Start(t)
		env.BindOwnersToClusterAdmin()
		env.EnsureNamespace("gitlab-runner")
		createNodeDNSDaemonSet(t, env)
		nodednsworld.Node(t, env, "rented-1", "4", "16Gi", 0, true)
		createDNSPod(t, env, "node-dns-rented-1", "rented-1", testenv.PodRunning())
		s := dnsqtest.Healthy(t, "127.0.0.9")

		root := testroot.New(t)
		root.GuideRunner(testroot.GuideConfig, ownerKubeconfig(env, env.URL, time.Now().Add(-10*time.Minute)))
		rep, out := runReport(t, "run", "--root", root.Dir, "-o", "json", "--timeout", "60s", "--only", ndns,
			"--repository-url", "https://gitlab-ci-token:"+jobToken+"@git.example.invalid/group/project.git", "--dns-server", s.Addr)
		// fixture.AssertWant leaves the exit code to its caller.
		if rep.Summary.ExitCode != 2 {
			t.Errorf("exit %d, want 2", rep.Summary.ExitCode)
		}
		fixture.AssertWant(t, rep, fixture.Want{Exit: 2, Top: "api-auth", Status: map[string]string{ndns: "pass"}})
		for _, f := range rep.Findings {
			if f.Check == ndns {
				t.Errorf("want no %s finding, got: %s", ndns, f.Cause)
			}
		}
		if s.Queries() == 0 {
			t.Errorf("the DNS server was not asked")
		}
		if strings.Contains(out, jobToken) {
			t.Errorf("the output repeats the job token from --repository-url")
		}
	})
}

// createNodeDNSDaemonSet applies the node network add-on's DaemonSet
// (nodednsworld.DaemonSet).
func createNodeDNSDaemonSet(t *testing.T, env *testenv.Env) { nodednsworld.DaemonSet(t, env) }

// createDNSPod binds a node DNS pod to a node and sets its status
// (nodednsworld.DNSPod).
func createDNSPod(t *testing.T, env *testenv.Env, name, nodeName string, status corev1.PodStatus) {
	nodednsworld.DNSPod(t, env, name, nodeName, status)
}

// rentNode makes a Ready node with a node-local DNS pod on it. A
// kubeletPort of 0 starts a fake kubelet for it: the apiserver reaches a
// rented node's kubelet unless a scenario says otherwise (kubelet-reach).
func rentNode(t *testing.T, env *testenv.Env, name, cpu, memory string, kubeletPort int) {
	t.Helper()
	if kubeletPort == 0 {
		kubeletPort = env.StartFakeKubelet(t).Port
	}
	nodednsworld.Node(t, env, name, cpu, memory, kubeletPort, true)
	createDNSPod(t, env, "node-dns-"+name, name, testenv.PodRunning())
}
