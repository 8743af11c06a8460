//go:build integration

package e2e

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/socialwebcomputer/doctor/runnerconfig"
	"github.com/socialwebcomputer/doctor/runnerconfig/jobpod"
	"github.com/socialwebcomputer/doctor/testkit/testenv"
	"github.com/socialwebcomputer/doctor/testkit/testpki"
)

// The job pod doctor builds against the real apiserver, and the job
// checks without RBAC. Each job check's verdicts on quotas, limit ranges,
// service accounts, Pod Security labels and terminated job pods are live
// cases of its own package (checks/namespacequota, checks/jobidentity,
// checks/jobterminations).

const jobPodName = "runner-abc123-project-5-concurrent-0-x1y2z3"

func rlist(kv ...string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

// createQuota is testenv's CreateQuota, for the scenarios that keep it.
func createQuota(t *testing.T, env *testenv.Env, ns, name string, hard, used corev1.ResourceList) {
	t.Helper()
	env.CreateQuota(ns, name, hard, used)
}

// The apiserver itself refuses the pod doctor says it refuses: a
// server-side dry run of the job pod of the guide's runner, in a
// restricted namespace and under a quota, gets the refusal doctor quotes.
func TestJobPodRefusalsMatchTheAPIServer(t *testing.T) {
	env := testenv.Start(t)
	env.EnsureNamespace("psa")
	env.LabelNamespace("psa", map[string]string{"pod-security.kubernetes.io/enforce": "restricted"})
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
