//go:build integration

package cli

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/socialwebcomputer/doctor/internal/testing/fixture"
	"github.com/socialwebcomputer/doctor/internal/testing/testenv"
	"github.com/socialwebcomputer/doctor/internal/testing/testpki"
	"github.com/socialwebcomputer/doctor/internal/testing/testroot"
	"github.com/socialwebcomputer/doctor/runnerconfig"
	"github.com/socialwebcomputer/doctor/runnerconfig/jobpod"
)

// The job checks on the real apiserver: quotas, limit ranges, service
// accounts and Pod Security labels are real objects the apiserver stores
// (and, for Pod Security, enforces); pod and quota statuses are set
// through their status subresources, as the kubelet and the quota
// controller (which do not run here) would.

const jobPodName = "runner-abc123-project-5-concurrent-0-x1y2z3"

// withKube adds lines to the guide's [runners.kubernetes].
func withKube(lines string) string {
	return strings.Replace(testroot.GuideConfig, "    poll_timeout = 3600\n", "    poll_timeout = 3600\n"+lines, 1)
}

func rlist(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

// createQuota stores a ResourceQuota and sets its status as the quota
// controller would: hard copied from spec, used as given.
func createQuota(t *testing.T, env *testenv.Env, ns, name string, hard, used corev1.ResourceList) {
	t.Helper()
	quotas := env.Clientset().CoreV1().ResourceQuotas(ns)
	q, err := quotas.Create(t.Context(), &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.ResourceQuotaSpec{Hard: hard}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	q.Status = corev1.ResourceQuotaStatus{Hard: hard, Used: used}
	if _, err := quotas.UpdateStatus(t.Context(), q, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func createLimitRange(t *testing.T, env *testenv.Env, ns string, item corev1.LimitRangeItem) {
	t.Helper()
	_, err := env.Clientset().CoreV1().LimitRanges(ns).Create(t.Context(), &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "limits"},
		Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{item}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

func labelNamespace(t *testing.T, env *testenv.Env, ns string, labels map[string]string) {
	t.Helper()
	obj, err := env.Clientset().CoreV1().Namespaces().Get(t.Context(), ns, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if obj.Labels == nil {
		obj.Labels = map[string]string{}
	}
	for k, v := range labels {
		obj.Labels[k] = v
	}
	if _, err := env.Clientset().CoreV1().Namespaces().Update(t.Context(), obj, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func createServiceAccount(t *testing.T, env *testenv.Env, ns, name string) {
	t.Helper()
	if _, err := env.Clientset().CoreV1().ServiceAccounts(ns).Create(t.Context(), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func TestJobScenarios(t *testing.T) {
	healthy := func(t *testing.T, env *testenv.Env) []byte {
		env.BindOwnersToClusterAdmin()
		env.EnsureNamespace("gitlab-runner")
		createNodeDNSDaemonSet(t, env)
		return ownerKubeconfig(env, env.URL, time.Now().Add(12*time.Hour))
	}
	// The guide's limits (testroot.GuideConfig sets only the requests).
	limits := "    cpu_limit = \"10\"\n    memory_limit = \"20Gi\"\n    helper_cpu_limit = \"1\"\n    helper_memory_limit = \"1Gi\"\n"
	withSA := withKube(limits + "    service_account = \"ci\"\n    image_pull_secrets = [\"registry\"]\n")
	cases := []clusterCase{
		{name: "quota-limitrange-identity-fit", config: withSA, setup: func(t *testing.T, env *testenv.Env) []byte {
			kc := healthy(t, env)
			createQuota(t, env, "gitlab-runner", "compute", rlist("limits.memory", "64Gi", "limits.cpu", "32", "pods", "10"), rlist("pods", "0"))
			createLimitRange(t, env, "gitlab-runner", corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Max: rlist("memory", "32Gi")})
			createServiceAccount(t, env, "gitlab-runner", "ci")
			_, err := env.Clientset().CoreV1().Secrets("gitlab-runner").Create(t.Context(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "registry"},
				Type: corev1.SecretTypeDockerConfigJson, Data: map[string][]byte{".dockerconfigjson": []byte(`{"auths":{}}`)}}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			labelNamespace(t, env, "gitlab-runner", map[string]string{"pod-security.kubernetes.io/enforce": "baseline"})
			return kc
		}, want: fixture.Want{Exit: 0, Findings: []string{"kubeconfig-file"}, Absent: []string{"namespace-quota", "job-identity", "job-terminations"},
			Status: map[string]string{"namespace-quota": "pass", "job-identity": "pass", "job-terminations": "pass"}}},
		{name: "job-oomkilled", setup: func(t *testing.T, env *testenv.Env) []byte {
			kc := healthy(t, env)
			rentNode(t, env, "rented-1", "4", "16Gi", 0)
			env.CreatePod("gitlab-runner", jobPodName, "rented-1", func(p *corev1.Pod) {
				p.Spec.Containers[0].Name = "build"
				p.Spec.Containers[0].Resources.Limits = rlist("memory", "20Gi")
			})
			env.SetPodStatus("gitlab-runner", jobPodName, corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{{
				Name: "build", Image: "busybox:1.36",
				State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled",
					StartedAt: metav1.Now(), FinishedAt: metav1.Now()}}}}})
			return kc
		}, want: fixture.Want{Exit: 2, Top: "job-terminations"}},
		{name: "job-evicted-pod-gone", setup: func(t *testing.T, env *testenv.Env) []byte {
			kc := healthy(t, env)
			gone := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "gitlab-runner", Name: jobPodName}}
			env.CreatePodEvent(gone, corev1.EventTypeWarning, "Evicted", "The node was low on resource: ephemeral-storage. Threshold quantity: 1Gi, available: 100Mi. ")
			return kc
		}, want: fixture.Want{Exit: 2, Top: "job-terminations"}},
		// testroot.GuideConfig sets no limits: a quota on limits.cpu refuses every container.
		{name: "quota-needs-limits-the-config-lacks", setup: func(t *testing.T, env *testenv.Env) []byte {
			kc := healthy(t, env)
			createQuota(t, env, "gitlab-runner", "compute", rlist("limits.cpu", "32"), rlist("limits.cpu", "0"))
			return kc
		}, want: fixture.Want{Exit: 2, Top: "namespace-quota"}},
		{name: "quota-smaller-than-a-job-pod", config: withKube(limits), setup: func(t *testing.T, env *testenv.Env) []byte {
			kc := healthy(t, env)
			createQuota(t, env, "gitlab-runner", "compute", rlist("limits.memory", "16Gi"), rlist("limits.memory", "0"))
			return kc
		}, want: fixture.Want{Exit: 2, Top: "namespace-quota"}},
		{name: "limitrange-max-below-memory-limit", config: withKube(limits), setup: func(t *testing.T, env *testenv.Env) []byte {
			kc := healthy(t, env)
			createLimitRange(t, env, "gitlab-runner", corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Max: rlist("memory", "8Gi")})
			return kc
		}, want: fixture.Want{Exit: 2, Top: "namespace-quota"}},
		{name: "service-account-missing", config: withKube("    service_account = \"ci\"\n"), setup: healthy,
			want: fixture.Want{Exit: 2, Top: "job-identity"}},
		{name: "restricted-namespace", setup: func(t *testing.T, env *testenv.Env) []byte {
			kc := healthy(t, env)
			labelNamespace(t, env, "gitlab-runner", map[string]string{"pod-security.kubernetes.io/enforce": "restricted"})
			return kc
		}, want: fixture.Want{Exit: 2, Top: "job-identity"}},
	}
	runClusterCases(t, cases)
}

// The apiserver itself refuses the pod doctor says it refuses: a
// server-side dry run of the job pod of the guide's runner, in a
// restricted namespace and under a quota, gets the refusal doctor quotes.
func TestJobPodRefusalsMatchTheAPIServer(t *testing.T) {
	env := testenv.Start(t)
	env.EnsureNamespace("psa")
	labelNamespace(t, env, "psa", map[string]string{"pod-security.kubernetes.io/enforce": "restricted"})
	env.EnsureNamespace("quota")
	createQuota(t, env, "quota", "compute", rlist("limits.memory", "16Gi", "limits.cpu", "64"), rlist("limits.memory", "0", "limits.cpu", "0"))

	k := &runnerconfig.Kubernetes{CPURequest: "100m", MemoryRequest: "128Mi", CPULimit: "10", MemoryLimit: "20Gi",
		HelperCPURequest: "100m", HelperMemoryRequest: "128Mi", HelperCPULimit: "1", HelperMemoryLimit: "1Gi"}
	for _, tc := range []struct{ ns, want string }{
		{"psa", `violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false`},
		{"quota", "exceeded quota: compute, requested: limits.memory=21Gi, used: limits.memory=0, limited: limits.memory=16Gi"},
	} {
		pod, err := jobpod.Pod(k, jobpod.Flags{}, jobpod.Configured)
		if err != nil {
			t.Fatal(err)
		}
		pod.Name, pod.Namespace = jobPodName, tc.ns
		for i := range pod.Spec.Containers {
			pod.Spec.Containers[i].Image = "busybox:1.36"
		}
		pod.Spec.InitContainers[0].Image = "busybox:1.36"
		_, err = env.Clientset().CoreV1().Pods(tc.ns).Create(t.Context(), pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("dry-run create in %s: %v, want %q", tc.ns, err, tc.want)
		}
	}
}

// With two runners, the restricted namespace is the first runner's only:
// job-identity ranks first for it and passes for the other.
func TestTwoRunnersOneRestrictedNamespace(t *testing.T) {
	env, kc := twoRunnersWorld(t)
	env.EnsureNamespace("ns-beta")
	labelNamespace(t, env, "ns-alpha", map[string]string{"pod-security.kubernetes.io/enforce": "restricted"})
	rep, _ := runTwo(t, alphaBeta, kc)
	if len(rep.Findings) == 0 || rep.Findings[0].Check != "job-identity" || rep.Findings[0].Runner == nil || rep.Findings[0].Runner.Index != 1 {
		t.Fatalf("top finding %s, want job-identity for runner 1", fixture.TopOf(rep))
	}
	if !strings.Contains(rep.Findings[0].Cause, `violates PodSecurity "restricted:latest"`) {
		t.Errorf("cause does not quote the apiserver: %s", rep.Findings[0].Cause)
	}
	if got := statusOf(rep, "job-identity", 2); got != "pass" {
		t.Errorf("job-identity for runner 2: %q, want pass", got)
	}
}

// A runner identity with exactly the runner's Role in its namespace may not
// read quotas, limit ranges or the namespace: namespace-quota and
// job-identity are unknown, naming the RBAC it lacks, and report nothing.
func TestJobChecksUnknownWithoutRBAC(t *testing.T) {
	env := testenv.Start(t)
	env.EnsureNamespace("ns-alpha")
	config := flagsConfig(nil, nil)
	rules := rulesFor(t, neededOf(t, config), "ns-alpha")
	const user = "ci-runner-role-only"
	rbac := env.Clientset().RbacV1()
	if _, err := rbac.Roles("ns-alpha").Create(t.Context(), &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: user}, Rules: rules}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := rbac.RoleBindings("ns-alpha").Create(t.Context(), &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: user},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitAuthorizedIn(t, env, user, "ns-alpha", "list", "pods", "")
	now := time.Now()
	cert, key := env.MintClient(user, nil, now.Add(-time.Hour), now.Add(12*time.Hour))
	rep := runOne(t, config, testpki.Kubeconfig("tenant-ci", env.URL, env.CAPEM, cert, key))
	for id, want := range map[string]string{
		"namespace-quota": `its RBAC lacks verb "list" on resource "resourcequotas" in API group ""`,
		"job-identity":    `its RBAC lacks verb "get" on resource "namespaces" in API group ""`,
	} {
		var found bool
		for _, c := range rep.Checks {
			if c.ID != id {
				continue
			}
			found = true
			if c.Status != "unknown" || !strings.Contains(c.Reason, want) {
				t.Errorf("%s: %s %q, want unknown naming %q", id, c.Status, c.Reason, want)
			}
		}
		if !found {
			t.Errorf("%s not in the report", id)
		}
		for _, f := range rep.Findings {
			if f.Check == id {
				t.Errorf("%s reported a finding without permission to read: %s", id, f.Cause)
			}
		}
	}
}
