//go:build integration

package e2e

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/socialwebcomputer/doctor/report"
	"github.com/socialwebcomputer/doctor/testkit/fixture"
	"github.com/socialwebcomputer/doctor/testkit/testenv"
	"github.com/socialwebcomputer/doctor/testkit/testpki"
	"github.com/socialwebcomputer/doctor/testkit/testroot"
)

// clusterCase is one row of the guide's failure table, reproduced on a real
// apiserver: setup shapes the cluster and the kubeconfig, want is the report.
type clusterCase struct {
	name   string
	setup  func(t *testing.T, env *testenv.Env) []byte // returns the kubeconfig
	config string
	now    time.Duration // --now relative to the wall clock
	want   fixture.Want
}

func TestClusterScenarios(t *testing.T) {
	hour := time.Hour
	owner := func(env *testenv.Env, notAfter time.Time) []byte { return ownerKubeconfig(env, env.URL, notAfter) }
	// A healthy gateway cluster: the owner binding, the runner namespace,
	// and the node-local DNS DaemonSet the provider's add-on pass applies.
	healthy := func(t *testing.T, env *testenv.Env) []byte {
		env.BindOwnersToClusterAdmin()
		env.EnsureNamespace("gitlab-runner")
		createNodeDNSDaemonSet(t, env)
		return owner(env, time.Now().Add(12*hour))
	}
	// What one check concludes alone (namespace missing, a pod Pending
	// past poll_timeout, an image pull backing off, pause pods) is proven
	// in that check's package (checks/<id>/check_integration_test.go);
	// here, what the CLI makes of several: ranking, folding and the exit.
	cases := []clusterCase{
		{name: "healthy", setup: healthy,
			// The one finding is kubeconfig-file's note that a loopback
			// apiserver is not a kcp mount URL.
			want: fixture.Want{Exit: 0, Findings: []string{"kubeconfig-file"}, Absent: []string{"api-auth", "owner-rbac", "runner-rbac", "namespace", "pending-no-node", "scale-to-zero", "cert-expiry"},
				Status: map[string]string{"api-auth": "pass", "owner-rbac": "pass", "runner-rbac": "pass", "namespace": "pass"}}},
		{name: "expired-certificate", setup: func(t *testing.T, env *testenv.Env) []byte {
			healthy(t, env)
			return owner(env, time.Now().Add(-10*time.Minute))
		}, want: fixture.Want{Exit: 2, Top: "cert-expiry", Findings: []string{"api-auth"}, CausedBy: map[string]string{"api-auth": "cert-expiry"},
			Status: map[string]string{"namespace": "skipped", "owner-rbac": "skipped"}}},
		{name: "certificate-from-another-ca", setup: func(t *testing.T, env *testenv.Env) []byte {
			healthy(t, env)
			cert, key := env.MintForeignClient(ownerDID, []string{testenv.OwnersGroup})
			return testpki.Kubeconfig("tenant-ci", env.URL, env.CAPEM, cert, key)
		}, want: fixture.Want{Exit: 2, Top: "api-auth", CausedBy: map[string]string{"api-auth": ""}}},
		{name: "owner-binding-deleted", setup: func(t *testing.T, env *testenv.Env) []byte {
			env.EnsureNamespace("gitlab-runner")
			return owner(env, time.Now().Add(12*hour))
		}, want: fixture.Want{Exit: 2, Top: "owner-rbac", Findings: []string{"runner-rbac"}, CausedBy: map[string]string{"runner-rbac": "owner-rbac"}}},
		{name: "requests-fit-no-node", now: 2 * hour, setup: func(t *testing.T, env *testenv.Env) []byte {
			kc := healthy(t, env)
			rentNode(t, env, "rented-1", "4", "16Gi", 0)
			pod := env.CreatePod("gitlab-runner", "runner-abc123-project-5-concurrent-0-big", "", func(p *corev1.Pod) {
				p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("64")}
			})
			env.CreatePodEvent(pod, corev1.EventTypeWarning, "FailedScheduling", "0/1 nodes are available: 1 Insufficient cpu.")
			return kc
		}, want: fixture.Want{Exit: 2, Top: "pending-unschedulable", CausedBy: map[string]string{"pending-no-node": "pending-unschedulable"}}},
	}
	runClusterCases(t, cases)
}

// runClusterCases runs each case on its own apiserver with the guide's
// config unless the case gives one.
func runClusterCases(t *testing.T, cases []clusterCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := testenv.Start(t)
			kc := tc.setup(t, env)
			cfg := tc.config
			if cfg == "" {
				cfg = testroot.GuideConfig
			}
			rep := runAgainst(t, cfg, kc, tc.now)
			fixture.AssertWant(t, rep, tc.want)
			if tc.want.Top != "" && len(rep.Findings) > 0 {
				t.Logf("top: %s", rep.Findings[0].Cause)
			}
		})
	}
}

// runAgainst runs doctor on a fake host whose runner holds kubeconfig.
func runAgainst(t *testing.T, config string, kubeconfig []byte, now time.Duration) *report.Report {
	t.Helper()
	return runAgainstWith(t, config, kubeconfig, now)
}

// runAgainstWith is runAgainst with more flags.
func runAgainstWith(t *testing.T, config string, kubeconfig []byte, now time.Duration, flags ...string) *report.Report {
	t.Helper()
	root := testroot.New(t)
	root.GuideRunner(config, kubeconfig)
	// The cluster worlds have no GitLab: gitlab-reachability (and the
	// runner-token check that needs it) has its own tests against a loopback
	// GitLab, and here would only be unknown for want of a resolver.
	args := []string{"run", "--root", root.Dir, "-o", "json", "--now", time.Now().Add(now).UTC().Format(time.RFC3339), "--timeout", "60s",
		"--skip", "gitlab-reachability"}
	rep, _ := runReport(t, append(args, flags...)...)
	return rep
}

func createPriorityClass(t *testing.T, env *testenv.Env, name string, value int32) {
	t.Helper()
	_, err := env.Clientset().SchedulingV1().PriorityClasses().Create(t.Context(), &schedv1.PriorityClass{
		ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value,
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

var pauseConfig = strings.Replace(testroot.GuideConfig, "    poll_timeout = 3600\n", `    poll_timeout = 3600

    [runners.kubernetes.autoscaler]
      max_pause_pods = 1
      pause_pod_image = "registry.k8s.io/pause:3.10"
      pause_pod_priority_class_name = "gitlab-pause"

      [[runners.kubernetes.autoscaler.policy]]
        idle_count = 0
        idle_time = "1m"
`, 1)
