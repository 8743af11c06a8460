//go:build integration

package jobidentity

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/checks/checktest/apigatetest"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/checktest"
	"github.com/socialwebcomputer/doctor/runnerconfig"
	"github.com/socialwebcomputer/doctor/runnerconfig/jobpod"
	"github.com/socialwebcomputer/doctor/testkit/testenv"
	"github.com/socialwebcomputer/doctor/testkit/testroot"
)

// inNamespace is the guide's runner sending jobs to ns, with lines added
// to its [runners.kubernetes].
func inNamespace(ns, lines string) string {
	c := strings.Replace(testroot.GuideConfig, `namespace = "gitlab-runner"`, `namespace = "`+ns+`"`, 1)
	return strings.Replace(c, "    poll_timeout = 3600\n", "    poll_timeout = 3600\n"+lines, 1)
}

// andSecond is config with the guide's runner again, named "second",
// sending its jobs to ns.
func andSecond(config, ns string) string {
	i := strings.Index(testroot.GuideConfig, "[[runners]]")
	second := strings.Replace(testroot.GuideConfig[i:], `name = "kcp-tenant-kubernetes"`, `name = "second"`, 1)
	return config + "\n" + strings.Replace(second, `namespace = "gitlab-runner"`, `namespace = "`+ns+`"`, 1)
}

// Service accounts, pull secrets and Pod Security labels are objects the
// apiserver stores, and Pod Security it enforces; each case is a namespace
// of its own in one cluster.
func TestLive(t *testing.T) {
	live := checktest.Cluster(t, "", apigatetest.With())
	run := func(t *testing.T, config string) []checks.CheckResult {
		root := testroot.New(t)
		root.GuideRunner(config, live.OwnerKubeconfigBytes(checktest.OwnerDID, time.Now().Add(12*time.Hour)))
		return checktest.Check(t, Check, checktest.Root(root.Dir), apigatetest.With())
	}
	fail := func(runner int, says ...string) checktest.ResultWant {
		return checktest.ResultWant{Runner: runner, Status: checks.StatusFail, Findings: []checktest.FindingWant{{Severity: checks.Error, Says: says}}}
	}
	t.Run("identity-fits", func(t *testing.T) {
		live.EnsureNamespace("fit")
		live.CreateServiceAccount("fit", "ci")
		if _, err := live.Clientset().CoreV1().Secrets("fit").Create(t.Context(), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "registry"},
			Type: corev1.SecretTypeDockerConfigJson, Data: map[string][]byte{".dockerconfigjson": []byte(`{"auths":{}}`)}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		live.LabelNamespace("fit", map[string]string{"pod-security.kubernetes.io/enforce": "baseline"})
		checktest.WantResults(t, run(t, inNamespace("fit", "    service_account = \"ci\"\n    image_pull_secrets = [\"registry\"]\n")),
			checktest.ResultWant{Runner: 1, Status: checks.StatusPass})
	})
	t.Run("service-account-missing", func(t *testing.T) {
		live.EnsureNamespace("no-sa")
		checktest.WantResults(t, run(t, inNamespace("no-sa", "    service_account = \"ci\"\n")), fail(1,
			`[[runners]] #1 "kcp-tenant-kubernetes": service_account "ci" does not exist in no-sa: every job pod is refused with `+"`error looking up service account no-sa/ci: serviceaccount \"ci\" not found`",
			"create serviceaccount -n no-sa ci", `/etc/gitlab-runner/config.toml:19: service_account = "ci"`,
			"GET /api/v1/namespaces/no-sa/serviceaccounts/ci: 404 Not Found"))
	})
	// The restricted namespace is the first runner's only: the second
	// runner's job pod is admitted.
	t.Run("restricted-namespace-of-one-runner", func(t *testing.T) {
		live.EnsureNamespace("restricted")
		live.LabelNamespace("restricted", map[string]string{"pod-security.kubernetes.io/enforce": "restricted"})
		live.EnsureNamespace("open")
		checktest.WantResults(t, run(t, andSecond(inNamespace("restricted", ""), "open")),
			fail(1,
				`[[runners]] #1 "kcp-tenant-kubernetes": the apiserver refuses every job pod in namespace restricted at its Pod Security admission (a dry run of the pod the runner sends): `+
					"`"+`pods "runner-dryrun-project-0-concurrent-0-" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false`,
				`POST /api/v1/namespaces/restricted/pods?dryRun=All (the runner's identity): 403 Forbidden: pods "runner-dryrun-project-0-concurrent-0-" is forbidden: violates PodSecurity "restricted:latest"`,
				`doctor's evaluation (k8s.io/pod-security-admission): violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false`,
				"label --overwrite ns restricted pod-security.kubernetes.io/enforce=baseline",
				"GET /api/v1/namespaces/restricted: pod-security.kubernetes.io/enforce=restricted",
				`/etc/gitlab-runner/config.toml:11: pod securityContext null; init-permissions {"capabilities":{"drop":["NET_RAW"]}}`), checktest.ResultWant{Runner: 2, Status: checks.StatusPass})
	})
	// An identity with no RBAC may not read the namespace: unknown, naming
	// the get it lacks, and no finding.
	t.Run("forbidden", func(t *testing.T) {
		live.EnsureNamespace("gitlab-runner")
		now := time.Now()
		cert, key := live.MintClient("ci-no-rbac", nil, now.Add(-time.Hour), now.Add(12*time.Hour))
		root := testroot.New(t)
		root.GuideRunner(testroot.GuideConfig, live.Kubeconfig(cert, key))
		checktest.WantResults(t, checktest.Check(t, Check, checktest.Root(root.Dir), apigatetest.With()),
			checktest.ResultWant{Runner: 1, Status: checks.StatusUnknown, Reason: `its RBAC lacks verb "get" on resource "namespaces" in API group ""`})
	})
}

// TestLiveDryRunDecides: where the apiserver's own admission and doctor's
// model disagree, the dry run's verdict stands. An apiserver whose
// AdmissionConfiguration exempts a namespace from Pod Security admits the
// pod the model finds violating its label; the ServiceAccount plugin (on,
// as in every real cluster) refuses a pod of a missing account, and the
// finding carries its words.
func TestLiveDryRunDecides(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "admission.yaml")
	if err := os.WriteFile(cfg, []byte(`apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: PodSecurity
  configuration:
    apiVersion: pod-security.admission.config.k8s.io/v1
    kind: PodSecurityConfiguration
    defaults: {enforce: privileged, enforce-version: latest}
    exemptions: {namespaces: [exempt]}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	env := testenv.Start(t, testenv.WithServiceAccountAdmission(), testenv.WithAPIServerArgs("--admission-control-config-file="+cfg))
	env.BindOwnersToClusterAdmin()
	run := func(t *testing.T, config string) []checks.CheckResult {
		root := testroot.New(t)
		root.GuideRunner(config, env.OwnerKubeconfigBytes(checktest.OwnerDID, time.Now().Add(12*time.Hour)))
		return checktest.Check(t, Check, checktest.Root(root.Dir), apigatetest.With())
	}
	t.Run("exempt-namespace", func(t *testing.T) {
		env.EnsureNamespace("exempt")
		env.CreateServiceAccount("exempt", "default")
		env.LabelNamespace("exempt", map[string]string{"pod-security.kubernetes.io/enforce": "restricted"})
		if v := Evaluate(map[string]string{"pod-security.kubernetes.io/enforce": "restricted"}, mustPod(t)); v.Allowed {
			t.Fatal("the model admits the guide's pod under restricted: the case proves nothing")
		}
		checktest.WantResults(t, run(t, inNamespace("exempt", "")), checktest.ResultWant{Runner: 1, Status: checks.StatusPass})
	})
	t.Run("service-account-missing", func(t *testing.T) {
		env.EnsureNamespace("no-sa")
		checktest.WantResults(t, run(t, inNamespace("no-sa", "    service_account = \"ci\"\n")), checktest.ResultWant{Runner: 1, Status: checks.StatusFail,
			Findings: []checktest.FindingWant{{Severity: checks.Error, Says: []string{
				`service_account "ci" does not exist in no-sa`, "GET /api/v1/namespaces/no-sa/serviceaccounts/ci: 404 Not Found",
				`POST /api/v1/namespaces/no-sa/pods?dryRun=All (the runner's identity): 403 Forbidden: pods "runner-dryrun-project-0-concurrent-0-" is forbidden: error looking up service account no-sa/ci: serviceaccount "ci" not found`,
			}}}})
	})
}

// mustPod is the guide's job pod.
func mustPod(t *testing.T) *corev1.Pod {
	t.Helper()
	k := &runnerconfig.Kubernetes{CPURequest: "100m", MemoryRequest: "128Mi"}
	pod, err := jobpod.Pod(k, jobpod.Flags{}, jobpod.Configured)
	if err != nil {
		t.Fatal(err)
	}
	return pod
}
