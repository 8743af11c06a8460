//go:build integration

package namespacequota

import (
	"strings"
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/checks/checktest/apigatetest"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/checktest"
	"github.com/socialwebcomputer/doctor/testkit/testroot"
)

// limits are the guide's limits (testroot.GuideConfig sets only the requests).
const limits = "    cpu_limit = \"10\"\n    memory_limit = \"20Gi\"\n    helper_cpu_limit = \"1\"\n    helper_memory_limit = \"1Gi\"\n"

// inNamespace is the guide's config sending jobs to ns, with lines added to
// its [runners.kubernetes].
func inNamespace(ns, lines string) string {
	c := strings.Replace(testroot.GuideConfig, `namespace = "gitlab-runner"`, `namespace = "`+ns+`"`, 1)
	return strings.Replace(c, "    poll_timeout = 3600\n", "    poll_timeout = 3600\n"+lines, 1)
}

// Quotas and limit ranges are objects the apiserver stores (the quota's
// status set as its controller would); each case is a namespace of its own
// in one cluster.
func TestLive(t *testing.T) {
	live := checktest.Cluster(t, "", apigatetest.With())
	run := func(t *testing.T, config string) []checks.CheckResult {
		root := testroot.New(t)
		root.GuideRunner(config, live.OwnerKubeconfigBytes(checktest.OwnerDID, time.Now().Add(12*time.Hour)))
		return checktest.Check(t, Check, checktest.Root(root.Dir), apigatetest.With())
	}
	fail := func(says ...string) checktest.ResultWant {
		return checktest.ResultWant{Runner: 1, Status: checks.StatusFail, Findings: []checktest.FindingWant{{Severity: checks.Error, Says: says}}}
	}
	// The apiserver refuses a pod under a quota whose status lacks a usage
	// of what it limits ("status unknown for quota"): the controller fills
	// every one, so the tests do too.
	t.Run("quota-and-limitrange-fit", func(t *testing.T) {
		live.EnsureNamespace("fit")
		live.CreateQuota("fit", "compute", rlist("limits.memory", "64Gi", "limits.cpu", "32", "pods", "10"), rlist("limits.memory", "0", "limits.cpu", "0", "pods", "0"))
		live.CreateLimitRange("fit", corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Max: rlist("memory", "32Gi")})
		checktest.WantResults(t, run(t, inNamespace("fit", limits)), checktest.ResultWant{Runner: 1, Status: checks.StatusPass})
	})
	// The guide's config sets no limits: a quota on limits.cpu refuses
	// every container.
	t.Run("quota-needs-limits-the-config-lacks", func(t *testing.T) {
		live.EnsureNamespace("no-limits")
		live.CreateQuota("no-limits", "compute", rlist("limits.cpu", "32"), rlist("limits.cpu", "0"))
		checktest.WantResults(t, run(t, inNamespace("no-limits", "")), fail(
			`[[runners]] #1 "kcp-tenant-kubernetes": the apiserver refuses every job pod in no-limits at the ResourceQuota admission plugin (a dry run of the pod the runner sends): `+
				`pods "runner-dryrun-project-0-concurrent-0-" is forbidden: failed quota: compute: must specify limits.cpu for: build,helper,init-permissions.`,
			`POST /api/v1/namespaces/no-limits/pods?dryRun=All (the runner's identity): 403 Forbidden: pods "runner-dryrun-project-0-concurrent-0-" is forbidden: failed quota: compute: must specify limits.cpu for: build,helper,init-permissions`,
			"GET resourcequota no-limits/compute: failed quota: compute: must specify limits.cpu for: build,helper,init-permissions",
			"/etc/gitlab-runner/config.toml: the job pod: init-permissions requests cpu=100m,memory=128Mi limits none; build requests cpu=100m,memory=128Mi limits none"))
	})
	t.Run("quota-smaller-than-a-job-pod", func(t *testing.T) {
		live.EnsureNamespace("small")
		live.CreateQuota("small", "compute", rlist("limits.memory", "16Gi"), rlist("limits.memory", "0"))
		checktest.WantResults(t, run(t, inNamespace("small", limits)), fail(
			"the apiserver refuses every job pod in small at the ResourceQuota admission plugin (a dry run of the pod the runner sends): "+
				`pods "runner-dryrun-project-0-concurrent-0-" is forbidden: exceeded quota: compute, requested: limits.memory=21Gi, used: limits.memory=0, limited: limits.memory=16Gi.`,
			"Make the job pod fit", "GET resourcequota small/compute: exceeded quota: compute",
			"build requests cpu=100m,memory=128Mi limits cpu=10,memory=20Gi"))
	})
	t.Run("limitrange-max-below-memory-limit", func(t *testing.T) {
		live.EnsureNamespace("max")
		live.CreateLimitRange("max", corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Max: rlist("memory", "8Gi")})
		checktest.WantResults(t, run(t, inNamespace("max", limits)), fail(
			"the apiserver refuses every job pod in max at the LimitRanger admission plugin (a dry run of the pod the runner sends): "+
				`pods "runner-dryrun-project-0-concurrent-0-" is forbidden: maximum memory usage per Container is 8Gi, but limit is 20Gi.`,
			"GET limitrange max/limits: maximum memory usage per Container is 8Gi, but limit is 20Gi (container build)"))
	})
	// A quota with room for one job pod now, and the guide's concurrent =
	// 2: the dry run of one pod is admitted; the model sees the second.
	t.Run("room-for-one-of-two-concurrent", func(t *testing.T) {
		live.EnsureNamespace("one-left")
		live.CreateQuota("one-left", "pods", rlist("pods", "3"), rlist("pods", "2"))
		checktest.WantResults(t, run(t, inNamespace("one-left", limits)), checktest.ResultWant{Runner: 1, Status: checks.StatusFail,
			Findings: []checktest.FindingWant{{Severity: checks.Warning, Says: []string{
				"quota pods in one-left admits 1 more job pod(s) now, and the runner runs up to 2 jobs at once (concurrent = 2): " +
					"the next is refused with `exceeded quota: pods, requested: pods=1, …` until one ends.",
				"GET resourcequota one-left/pods: pods: 2 of 3 used; each job pod asks 1"}}}})
	})
	// A scoped quota (the model weighs none): the apiserver's verdict
	// stands alone, and says the model has no explanation.
	t.Run("scoped-quota-only-the-dry-run-sees", func(t *testing.T) {
		live.EnsureNamespace("scoped")
		quotas := live.Clientset().CoreV1().ResourceQuotas("scoped")
		q, err := quotas.Create(t.Context(), &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "not-terminating"},
			Spec: corev1.ResourceQuotaSpec{Hard: rlist("limits.memory", "16Gi"), Scopes: []corev1.ResourceQuotaScope{corev1.ResourceQuotaScopeNotTerminating}}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		q.Status = corev1.ResourceQuotaStatus{Hard: rlist("limits.memory", "16Gi"), Used: rlist("limits.memory", "0")}
		if _, err := quotas.UpdateStatus(t.Context(), q, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		checktest.WantResults(t, run(t, inNamespace("scoped", limits)), fail(
			"at the ResourceQuota admission plugin (a dry run of the pod the runner sends): "+
				`pods "runner-dryrun-project-0-concurrent-0-" is forbidden: exceeded quota: not-terminating, requested: limits.memory=21Gi, used: limits.memory=0, limited: limits.memory=16Gi.`,
			"doctor's model of the ResourceQuota admission plugin: finds no refusal"))
	})
	// An identity with no RBAC may not read quotas: unknown, naming the
	// list it lacks, and no finding.
	t.Run("forbidden", func(t *testing.T) {
		live.EnsureNamespace("gitlab-runner")
		now := time.Now()
		cert, key := live.MintClient("ci-no-rbac", nil, now.Add(-time.Hour), now.Add(12*time.Hour))
		root := testroot.New(t)
		root.GuideRunner(testroot.GuideConfig, live.Kubeconfig(cert, key))
		checktest.WantResults(t, checktest.Check(t, Check, checktest.Root(root.Dir), apigatetest.With()),
			checktest.ResultWant{Runner: 1, Status: checks.StatusUnknown, Reason: `its RBAC lacks verb "list" on resource "resourcequotas" in API group ""`})
	})
}
