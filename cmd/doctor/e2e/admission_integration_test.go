//go:build integration

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/socialwebcomputer/doctor/report"
	"github.com/socialwebcomputer/doctor/testkit/closedport"
	"github.com/socialwebcomputer/doctor/testkit/fixture"
	"github.com/socialwebcomputer/doctor/testkit/testenv"
	"github.com/socialwebcomputer/doctor/testkit/testroot"
)

// admissionRunner is the guide's runner named name, sending its jobs to ns,
// with lines added to its [runners.kubernetes].
func admissionRunner(name, ns, lines string) string {
	i := strings.Index(testroot.GuideConfig, "[[runners]]")
	r := strings.Replace(testroot.GuideConfig[i:], `name = "kcp-tenant-kubernetes"`, `name = "`+name+`"`, 1)
	r = strings.Replace(r, `namespace = "gitlab-runner"`, `namespace = "`+ns+`"`, 1)
	return strings.Replace(r, "    poll_timeout = 3600\n", "    poll_timeout = 3600\n"+lines, 1)
}

// TestAdmissionOfEachRunnersPod is issue 31's "done when", as doctor run
// reports it: six runners, each sending its jobs to a namespace of its own
// on one real apiserver (the ServiceAccount plugin on), with a real
// validating webhook on loopback over TLS that denies, a failurePolicy-Fail
// webhook whose endpoint is closed, a namespace that enforces Pod Security
// restricted, a LimitRange, a ResourceQuota, and a namespace that admits the
// pod. Each refusal is a finding in the apiserver's words naming the stage;
// the admitting namespace gives none; each runner's pod is one dry-run
// create (the audit log), and no pod is left. runReport bundles the run and
// analyzes the bundle: the replayed dry runs conclude the same.
func TestAdmissionOfEachRunnersPod(t *testing.T) {
	env := testenv.Start(t, testenv.WithServiceAccountAdmission())
	env.BindOwnersToClusterAdmin()
	deny := env.StartWebhook(t, func(r *admissionv1.AdmissionRequest) testenv.Decision {
		return testenv.Decision{Message: "pods of namespace " + r.Namespace + " need a team label"}
	})
	closed := fmt.Sprintf("https://127.0.0.1:%d/validate", closedport.Reserve(t))
	const label = "doctor-test/webhook"
	env.CreateValidatingWebhookConfiguration("doctor-test-deny", env.ValidatingWebhookFor("deny.doctor.test", deny.URL, map[string]string{label: "deny"}, admissionregv1.Fail))
	env.CreateValidatingWebhookConfiguration("doctor-test-closed", env.ValidatingWebhookFor("closed.doctor.test", closed, map[string]string{label: "closed"}, admissionregv1.Fail))
	for ns, labels := range map[string]map[string]string{
		"admits": nil, "webhook-deny": {label: "deny"}, "webhook-closed": {label: "closed"},
		"restricted": {"pod-security.kubernetes.io/enforce": "restricted"}, "limited": nil, "quota": nil,
	} {
		env.EnsureNamespace(ns)
		env.CreateServiceAccount(ns, "default") // no controller-manager makes it
		if labels != nil {
			env.LabelNamespace(ns, labels)
		}
	}
	q := func(s string) resource.Quantity { return resource.MustParse(s) }
	env.CreateLimitRange("limited", corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Max: corev1.ResourceList{corev1.ResourceMemory: q("8Gi")}})
	env.CreateQuota("quota", "compute", corev1.ResourceList{"limits.memory": q("16Gi"), "limits.cpu": q("64")}, corev1.ResourceList{"limits.memory": q("0"), "limits.cpu": q("0")})
	env.WaitDryRun("webhook-deny", testenv.IsRefused)
	env.WaitDryRun("webhook-closed", testenv.IsRefused)

	const limits = "    cpu_limit = \"10\"\n    memory_limit = \"20Gi\"\n    helper_cpu_limit = \"1\"\n    helper_memory_limit = \"1Gi\"\n"
	config := "concurrent = 2\ncheck_interval = 3\n\n" + strings.Join([]string{
		admissionRunner("admits", "admits", limits),
		admissionRunner("webhook-deny", "webhook-deny", limits),
		admissionRunner("webhook-closed", "webhook-closed", limits),
		admissionRunner("restricted", "restricted", limits),
		admissionRunner("limited", "limited", limits),
		admissionRunner("quota", "quota", limits),
	}, "\n")
	began := time.Now()
	rep := runAgainst(t, config, ownerKubeconfig(env, env.URL, time.Now().Add(12*time.Hour)), time.Hour)

	// Every fix pastes (fixproof: bash -n, shellcheck), and each runner's
	// check ends where its stage says.
	fixture.AssertWant(t, rep, fixture.Want{Exit: 2, Findings: []string{"job-admission", "job-identity", "namespace-quota"},
		Status: map[string]string{"job-admission #1": "pass", "job-admission #2": "fail", "job-admission #3": "fail", "job-admission #4": "skipped",
			"job-admission #5": "skipped", "job-admission #6": "pass", "namespace-quota #1": "pass", "job-identity #1": "pass"}})
	const pod = `pods "runner-dryrun-project-0-concurrent-0-" is forbidden: `
	for _, c := range []struct {
		runner int
		check  string
		says   []string
	}{
		{2, "job-admission", []string{`the admission webhook "deny.doctor.test" denies the job pod`,
			`admission webhook "deny.doctor.test" denied the request: pods of namespace webhook-deny need a team label`,
			`the refusing validating webhook "deny.doctor.test" of doctor-test-deny, endpoint ` + deny.URL + ", failurePolicy Fail, timeoutSeconds 5"}},
		{3, "job-admission", []string{`the apiserver cannot call the admission webhook "closed.doctor.test"`,
			`Internal error occurred: failed calling webhook "closed.doctor.test": failed to call webhook: Post "` + closed, "connect: connection refused",
			"endpoint " + closed + ", failurePolicy Fail"}},
		{4, "job-identity", []string{"at its Pod Security admission (a dry run of the pod the runner sends)",
			pod + `violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false`}},
		{5, "namespace-quota", []string{"at the LimitRanger admission plugin (a dry run of the pod the runner sends)",
			pod + "maximum memory usage per Container is 8Gi, but limit is 20Gi"}},
		{6, "namespace-quota", []string{"at the ResourceQuota admission plugin (a dry run of the pod the runner sends)",
			pod + "exceeded quota: compute, requested: limits.memory=21Gi, used: limits.memory=0, limited: limits.memory=16Gi"}},
	} {
		fs := findingsOf(rep, c.check, c.runner)
		if len(fs) != 1 {
			t.Errorf("runner %d: %d %s findings, want 1: %v", c.runner, len(fs), c.check, causes(fs))
			continue
		}
		text := fs[0].Cause
		for _, e := range fs[0].Evidence {
			text += "\n" + e.Source + ": " + e.Detail
		}
		for _, s := range c.says {
			if !strings.Contains(text, s) {
				t.Errorf("runner %d: %s's finding does not say %q:\n%s", c.runner, c.check, s, text)
			}
		}
	}
	for _, id := range []string{"job-admission", "namespace-quota", "job-identity"} {
		if fs := findingsOf(rep, id, 1); len(fs) > 0 {
			t.Errorf("the admitting namespace: %s says %v", id, causes(fs))
		}
	}
	// One stage, one finding: the webhooks' and Pod Security's runners have
	// no quota finding, the LimitRange's and the quota's no job-admission one.
	for runner, id := range map[int]string{2: "namespace-quota", 3: "namespace-quota", 4: "job-admission", 5: "job-admission", 6: "job-admission"} {
		if fs := findingsOf(rep, id, runner); len(fs) > 0 {
			t.Errorf("runner %d: %s also says %v", runner, id, causes(fs))
		}
	}

	// Read-only by the audit log: each runner's pod is one create, every
	// create a dry run, and nothing stayed.
	var creates []testenv.AuditEvent
	for _, e := range env.WaitAuditSettled(500*time.Millisecond, 0, func(e testenv.AuditEvent) bool { return e.User.Username == ownerDID }) {
		if e.Verb == "create" && e.ObjectRef.Resource == "pods" && e.ObjectRef.Subresource == "" {
			creates = append(creates, e)
			if !strings.Contains(e.RequestURI, "dryRun=All") {
				t.Errorf("doctor created a pod without dryRun: %s", e.RequestURI)
			}
		}
	}
	// Each live run of doctor sends one dry run per runner.
	perNamespace := map[string]int{}
	for _, e := range creates {
		perNamespace[e.ObjectRef.Namespace]++
	}
	if len(perNamespace) != 6 {
		t.Errorf("dry runs in %d namespaces, want the 6 runners': %v", len(perNamespace), perNamespace)
	}
	for ns, n := range perNamespace {
		if n != perNamespace["admits"] {
			t.Errorf("%d dry runs in %s, %d in admits: want one per runner and run: %v", n, ns, perNamespace["admits"], perNamespace)
		}
	}
	t.Logf("pod creates per namespace (one per runner and live run): %v", perNamespace)
	pods, err := env.Clientset().CoreV1().Pods("").List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 0 {
		t.Errorf("%d pods in the cluster after the run, want none: %s/%s", len(pods.Items), pods.Items[0].Namespace, pods.Items[0].Name)
	}
	if all, dry := deny.Calls(); all != dry {
		t.Errorf("the webhook answered %d reviews, %d of them dry runs: doctor sent it something else", all, dry)
	}
	t.Logf("the run and its analysis took %s", time.Since(began).Round(time.Millisecond))
}

func causes(fs []report.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Cause)
	}
	return out
}
