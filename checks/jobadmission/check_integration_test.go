//go:build integration

package jobadmission

import (
	"fmt"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/checktest"
	"github.com/socialwebcomputer/doctor/checks/checktest/apigatetest"
	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/testkit/closedport"
	"github.com/socialwebcomputer/doctor/testkit/testenv"
	"github.com/socialwebcomputer/doctor/testkit/testpki"
	"github.com/socialwebcomputer/doctor/testkit/testroot"
)

// inNamespace is the guide's config sending jobs to ns, with lines added to
// its [runners.kubernetes].
func inNamespace(ns, lines string) string {
	c := strings.Replace(testroot.GuideConfig, `namespace = "gitlab-runner"`, `namespace = "`+ns+`"`, 1)
	return strings.Replace(c, "    poll_timeout = 3600\n", "    poll_timeout = 3600\n"+lines, 1)
}

// webhookLabel selects the namespaces a test webhook is sent.
const webhookLabel = "doctor-test/webhook"

// TestLive runs the check on a real apiserver (the ServiceAccount admission
// plugin on, as in every real cluster) with real webhooks on loopback over
// TLS: one that denies the job pod, one whose endpoint is closed and whose
// failurePolicy is Fail, and namespaces that admit the pod or refuse it at
// the stages other checks own.
func TestLive(t *testing.T) {
	env := testenv.Start(t, testenv.WithServiceAccountAdmission())
	env.BindOwnersToClusterAdmin()
	deny := env.StartWebhook(t, func(r *admissionv1.AdmissionRequest) testenv.Decision {
		return testenv.Decision{Message: "pods of namespace " + r.Namespace + " need a team label"}
	})
	closed := fmt.Sprintf("https://127.0.0.1:%d/validate", closedport.Reserve(t))
	env.CreateValidatingWebhookConfiguration("doctor-test-deny",
		env.ValidatingWebhookFor("deny.doctor.test", deny.URL, map[string]string{webhookLabel: "deny"}, admissionregv1.Fail))
	// Slow webhooks: one that answers after 4s with timeoutSeconds 10, one
	// whose timeoutSeconds (1) runs out first. The runs below let the
	// apiserver take 2s (--request-timeout 3s).
	slow := env.StartWebhook(t, func(r *admissionv1.AdmissionRequest) testenv.Decision {
		time.Sleep(4 * time.Second)
		return testenv.Decision{Allowed: true}
	})
	patient := env.ValidatingWebhookFor("patient.doctor.test", slow.URL, map[string]string{webhookLabel: "patient"}, admissionregv1.Fail)
	ten, one := int32(10), int32(1)
	patient.TimeoutSeconds = &ten
	hasty := env.ValidatingWebhookFor("hasty.doctor.test", slow.URL, map[string]string{webhookLabel: "hasty"}, admissionregv1.Fail)
	hasty.TimeoutSeconds = &one
	env.CreateValidatingWebhookConfiguration("doctor-test-slow", patient, hasty)
	env.CreateValidatingWebhookConfiguration("doctor-test-closed",
		env.ValidatingWebhookFor("closed.doctor.test", closed, map[string]string{webhookLabel: "closed"}, admissionregv1.Fail))
	// A webhook with side effects, as an older cluster may still store one
	// (v1 refuses sideEffects Some on create): the apiserver refuses every
	// dry run it would be sent, without calling it.
	some := admissionregv1.SideEffectClassSome
	sideEffects := env.ValidatingWebhookFor("audit.doctor.test", deny.URL, map[string]string{webhookLabel: "side-effects"}, admissionregv1.Fail)
	sideEffects.SideEffects = &some
	env.StoreValidatingWebhookConfiguration("doctor-test-side-effects", sideEffects)
	namespace := func(name string, labels map[string]string) {
		env.EnsureNamespace(name)
		env.CreateServiceAccount(name, "default") // no controller-manager makes it
		if labels != nil {
			env.LabelNamespace(name, labels)
		}
	}
	namespace("admits", nil)
	namespace("webhook-deny", map[string]string{webhookLabel: "deny"})
	namespace("webhook-closed", map[string]string{webhookLabel: "closed"})
	namespace("restricted", map[string]string{"pod-security.kubernetes.io/enforce": "restricted"})
	namespace("no-priority", nil)
	namespace("side-effects", map[string]string{webhookLabel: "side-effects"})
	namespace("patient", map[string]string{webhookLabel: "patient"})
	namespace("hasty", map[string]string{webhookLabel: "hasty"})
	env.WaitDryRun("hasty", testenv.IsRefused)
	env.WaitDryRun("webhook-deny", testenv.IsRefused)
	env.WaitDryRun("side-effects", testenv.IsRefused)
	env.WaitDryRun("webhook-closed", testenv.IsRefused)

	run := func(t *testing.T, config string) []checks.CheckResult {
		root := testroot.New(t)
		root.GuideRunner(config, env.OwnerKubeconfigBytes(checktest.OwnerDID, time.Now().Add(12*time.Hour)))
		res := checktest.Check(t, Check, checktest.Root(root.Dir), apigatetest.With())
		logFindings(t, res)
		return res
	}
	fail := func(sev checks.Severity, says ...string) checktest.ResultWant {
		return checktest.ResultWant{Runner: 1, Status: checks.StatusFail, Findings: []checktest.FindingWant{{Severity: sev, Says: says}}}
	}
	t.Run("admits", func(t *testing.T) {
		checktest.WantResults(t, run(t, inNamespace("admits", "")), checktest.ResultWant{Runner: 1, Status: checks.StatusPass})
	})
	t.Run("webhook-denies", func(t *testing.T) {
		before, _ := deny.Calls()
		checktest.WantResults(t, run(t, inNamespace("webhook-deny", "")), fail(checks.Error,
			`[[runners]] #1 "kcp-tenant-kubernetes": the admission webhook "deny.doctor.test" denies the job pod the runner would create in webhook-deny, `+
				"so every job fails with `setting up build pod: admission webhook \"deny.doctor.test\" denied the request: pods of namespace webhook-deny need a team label`.",
			"POST /api/v1/namespaces/webhook-deny/pods?dryRun=All (the runner's identity): 403: admission webhook \"deny.doctor.test\" denied the request: pods of namespace webhook-deny need a team label",
			`the refusing validating webhook "deny.doctor.test" of doctor-test-deny, endpoint `+deny.URL+", failurePolicy Fail, timeoutSeconds 5, sideEffects None, namespaceSelector doctor-test/webhook=deny",
			"the dry run's pod: generateName runner-dryrun-project-0-concurrent-0- in webhook-deny",
			"get validatingwebhookconfiguration doctor-test-deny -o yaml"))
		all, dry := deny.Calls()
		if all == before || all != dry {
			t.Errorf("the webhook answered %d reviews, %d of them dry runs (%d before): want the dry run's, and dry runs only", all, dry, before)
		}
	})
	t.Run("webhook-cannot-be-called", func(t *testing.T) {
		checktest.WantResults(t, run(t, inNamespace("webhook-closed", "")), fail(checks.Error,
			`the apiserver cannot call the admission webhook "closed.doctor.test", whose failurePolicy refuses the pod meanwhile: every job fails with `+
				"`setting up build pod: Internal error occurred: failed calling webhook \"closed.doctor.test\": failed to call webhook: Post \""+closed,
			"connect: connection refused",
			"endpoint "+closed+", failurePolicy Fail"))
	})
	// Bounded: a webhook slower than doctor lets the apiserver wait is
	// unknown, the apiserver's timeout named; one whose own timeoutSeconds
	// runs out first fails every job, in the apiserver's words.
	quick := checktest.Env(func(e *hostio.Env) { e.RequestTimeout = 3 * time.Second })
	runQuick := func(t *testing.T, config string) ([]checks.CheckResult, time.Duration) {
		root := testroot.New(t)
		root.GuideRunner(config, env.OwnerKubeconfigBytes(checktest.OwnerDID, time.Now().Add(12*time.Hour)))
		began := time.Now()
		res := checktest.Check(t, Check, checktest.Root(root.Dir), apigatetest.With(), quick)
		logFindings(t, res)
		return res, time.Since(began)
	}
	t.Run("webhook-slower-than-doctor-waits", func(t *testing.T) {
		res, took := runQuick(t, inNamespace("patient", ""))
		checktest.WantResults(t, res, checktest.ResultWant{Runner: 1, Status: checks.StatusUnknown,
			Reason: "the apiserver did not finish admitting the job pod within the 2s doctor lets it take"})
		if took > 6*time.Second {
			t.Errorf("the run took %s: the dry run is bounded by its 3s call", took)
		}
	})
	t.Run("webhook-timeout-runs-out", func(t *testing.T) {
		res, _ := runQuick(t, inNamespace("hasty", ""))
		checktest.WantResults(t, res, fail(checks.Error,
			`the apiserver cannot call the admission webhook "hasty.doctor.test"`, "context deadline exceeded", "timeoutSeconds 1"))
	})
	t.Run("webhook-with-side-effects", func(t *testing.T) {
		before, _ := deny.Calls()
		checktest.WantResults(t, run(t, inNamespace("side-effects", "")), fail(checks.Warning,
			`the admission webhook "audit.doctor.test" cannot be asked about the job pod in a dry run (its sideEffects are neither None nor NoneOnDryRun`,
			`400 BadRequest: admission webhook "audit.doctor.test" does not support dry run`,
			`the refusing validating webhook "audit.doctor.test" of doctor-test-side-effects`, "sideEffects Some",
			"sideEffects: None"))
		if after, _ := deny.Calls(); after != before {
			t.Errorf("the webhook with side effects was called %d times by a dry run", after-before)
		}
	})
	t.Run("priority-class-missing", func(t *testing.T) {
		checktest.WantResults(t, run(t, inNamespace("no-priority", "    priority_class_name = \"ci-high\"\n")), fail(checks.Error,
			`priority_class_name "ci-high" names no PriorityClass of the cluster, so the apiserver refuses every job pod: `+
				"`pods \"runner-dryrun-project-0-concurrent-0-\" is forbidden: no PriorityClass with name ci-high was found`.",
			"get priorityclasses"))
	})
	// Pod Security is job-identity's finding: this check says the steps
	// after it were not asked.
	t.Run("pod-security-is-job-identitys", func(t *testing.T) {
		checktest.WantResults(t, run(t, inNamespace("restricted", "")), checktest.ResultWant{Runner: 1, Status: checks.StatusSkipped,
			Reason: "the apiserver refuses the job pod at the PodSecurity admission plugin, job-identity's finding"})
	})
	// A runner without `create pods`: runner-rbac's finding; this check
	// could not ask.
	t.Run("no-rbac", func(t *testing.T) {
		now := time.Now()
		cert, key := env.MintClient("ci-no-rbac", nil, now.Add(-time.Hour), now.Add(12*time.Hour))
		root := testroot.New(t)
		root.GuideRunner(inNamespace("admits", ""), testpki.Kubeconfig("tenant-ci", env.URL, env.CAPEM, cert, key))
		checktest.WantResults(t, checktest.Check(t, Check, checktest.Root(root.Dir), apigatetest.With()),
			checktest.ResultWant{Runner: 1, Status: checks.StatusUnknown, Reason: `its RBAC lacks verb "create" on resource "pods" in API group ""`})
	})

	// Read-only: nothing the dry runs sent was stored.
	pods, err := env.Clientset().CoreV1().Pods("").List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 0 {
		t.Errorf("%d pods in the cluster after the dry runs, want none: %s", len(pods.Items), pods.Items[0].Name)
	}
}

// logFindings shows what an operator reads (go test -v).
func logFindings(t *testing.T, res []checks.CheckResult) {
	for _, r := range res {
		t.Logf("%s: %s %s", r.Check.ID, r.Status, r.Reason)
		for _, f := range r.Findings {
			t.Logf("  %s: %s", f.Severity, f.Cause)
			for _, e := range f.Evidence {
				t.Logf("    %s: %s", e.Source, e.Detail)
			}
			t.Logf("  fix:\n%s", f.Fix.String())
		}
	}
}
