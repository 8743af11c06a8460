package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Each refusal built as the apiserver builds it (the constructors and the
// format strings of the files ClassifyRefusal quotes), and the stage it
// names. The live cases (checks/jobadmission's integration test) get the
// same answers from a real apiserver.
func TestClassifyRefusal(t *testing.T) {
	pods := corev1.Resource("pods")
	const name = "runner-abc-project-0-concurrent-0-"
	forbidden := func(format string, a ...any) error {
		// admission.NewForbidden: apierrors.NewForbidden(resource, name, err).
		return apierrors.NewForbidden(pods, name, fmt.Errorf(format, a...))
	}
	denied := &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: 403, Reason: metav1.StatusReasonForbidden,
		Message: `admission webhook "deny.example.com" denied the request: pods need a team label`}}
	for _, c := range []struct {
		name    string
		err     error
		stage   Stage
		webhook string
		timeout bool
	}{
		{"webhook denies", denied, StageWebhookDenied, "deny.example.com", false},
		{"webhook denies without a message", &apierrors.StatusError{ErrStatus: metav1.Status{Code: 400,
			Message: `admission webhook "deny.example.com" denied the request without explanation`}}, StageWebhookDenied, "deny.example.com", false},
		{"webhook refused", apierrors.NewInternalError(errors.New(`failed calling webhook "closed.example.com": failed to call webhook: Post "https://127.0.0.1:4/v?timeout=10s": dial tcp 127.0.0.1:4: connect: connection refused`)),
			StageWebhookFailed, "closed.example.com", false},
		{"webhook timed out", apierrors.NewInternalError(errors.New(`failed calling webhook "slow.example.com": failed to call webhook: Post "https://svc.ns.svc:443/v?timeout=7s": context deadline exceeded`)),
			StageWebhookFailed, "slow.example.com", true},
		{"webhook has side effects", apierrors.NewBadRequest(`admission webhook "audit.example.com" does not support dry run`), StageWebhookNoDryRun, "audit.example.com", false},
		{"policy with binding", &apierrors.StatusError{ErrStatus: metav1.Status{Code: 422, Reason: metav1.StatusReasonInvalid,
			Message: `ValidatingAdmissionPolicy 'team' with binding 'team-binding' denied request: no team`}}, StagePolicy, "team", false},
		{"policy", &apierrors.StatusError{ErrStatus: metav1.Status{Code: 403, Reason: metav1.StatusReasonForbidden,
			Message: `ValidatingAdmissionPolicy 'team' denied request: no team`}}, StagePolicy, "team", false},
		{"pod security", forbidden(`violates PodSecurity %q: %s`, "restricted:latest", `allowPrivilegeEscalation != false (containers "build" must set securityContext.allowPrivilegeEscalation=false)`), StagePodSecurity, "", false},
		{"quota exceeded", forbidden("exceeded quota: %s, requested: %s, used: %s, limited: %s", "compute", "limits.memory=21Gi", "limits.memory=0", "limits.memory=16Gi"), StageQuota, "", false},
		{"quota needs limits", forbidden("failed quota: %s: %v", "compute", "must specify limits.cpu for: build,helper,init-permissions"), StageQuota, "", false},
		{"quota without status", forbidden("status unknown for quota: %s, resources: %s", "compute", "limits.cpu"), StageQuota, "", false},
		{"limit range max", forbidden("maximum %s usage per %s is %s, but limit is %s", "memory", "Container", "8Gi", "20Gi"), StageLimitRange, "", false},
		{"limit range min, no request", forbidden("minimum %s usage per %s is %s.  No request is specified", "cpu", "Container", "100m"), StageLimitRange, "", false},
		{"limit range ratio", forbidden("%s max limit to request ratio per %s is %s, but provided ratio is %f", "cpu", "Container", "2", 4.0), StageLimitRange, "", false},
		{"service account", forbidden("error looking up service account %s/%s: %w", "gitlab-runner", "ci", apierrors.NewNotFound(corev1.Resource("serviceaccount"), "ci")), StageServiceAccount, "", false},
		{"priority class", forbidden("no PriorityClass with name %v was found", "ci-high"), StagePriorityClass, "", false},
		{"runtime class", forbidden("pod rejected: RuntimeClass %q not found", "gvisor"), StageRuntimeClass, "", false},
		{"namespace terminating", forbidden("unable to create new content in namespace %s because it is being terminated", "gitlab-runner"), StageNamespace, "", false},
		{"namespace missing", apierrors.NewNotFound(corev1.Resource("namespaces"), "gitlab-runner"), StageNamespace, "", false},
		{"rbac", apierrors.NewForbidden(pods, "", errors.New(`User "ci" cannot create resource "pods" in API group "" in the namespace "gitlab-runner"`)), StageRBAC, "", false},
		{"invalid", apierrors.NewInvalid(corev1.SchemeGroupVersion.WithKind("Pod").GroupKind(), name, nil), StageValidation, "", false},
		{"something else", apierrors.NewServiceUnavailable("etcd is down"), StageOther, "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := ClassifyRefusal(c.err)
			if r == nil {
				t.Fatalf("no refusal of %v", c.err)
			}
			if r.Stage != c.stage || r.Webhook != c.webhook || r.Timeout != c.timeout {
				t.Errorf("%q: stage %s webhook %q timeout %v, want %s %q %v", c.err, r.Stage, r.Webhook, r.Timeout, c.stage, c.webhook, c.timeout)
			}
			if r.Message == "" || strings.Contains(r.Message, "\n") {
				t.Errorf("message %q: want the apiserver's, on one line", r.Message)
			}
		})
	}
	for _, err := range []error{nil, context.DeadlineExceeded, errors.New("dial tcp 127.0.0.1:1: connect: connection refused"),
		apierrors.NewTimeoutError("request did not complete within requested timeout - context deadline exceeded", 0)} {
		if r := ClassifyRefusal(err); r != nil {
			t.Errorf("%v is no answer of the apiserver, got the refusal %+v", err, r)
		}
	}
}

// A server's text is cut, kept on one line without control characters and
// redacted before a finding quotes it.
func TestRefusalMessageIsCutAndRedacted(t *testing.T) {
	long := `admission webhook "x" denied the request: ` + strings.Repeat("a", 5000) + "\n\x1b[31mtoken=glpat-abcdefghijklmnopqrst"
	r := ClassifyRefusal(&apierrors.StatusError{ErrStatus: metav1.Status{Code: 400, Message: long}})
	if len([]rune(r.Message)) > maxRefusal+1 || strings.ContainsAny(r.Message, "\n\x1b") {
		t.Errorf("message not cut to one line: %d runes", len([]rune(r.Message)))
	}
	secret := `admission webhook "x" denied the request: token=glpat-abcdefghijklmnopqrst`
	if r := ClassifyRefusal(&apierrors.StatusError{ErrStatus: metav1.Status{Code: 400, Message: secret}}); strings.Contains(r.Message, "glpat-abcdefghijklmnopqrst") {
		t.Errorf("a token in the webhook's message reached the finding: %q", r.Message)
	}
}

// Reached: a refused pod passed the stages the apiserver runs before the
// one that refused it, and says nothing of those after.
func TestReached(t *testing.T) {
	at := func(s Stage, validating bool) *Admission {
		return &Admission{Refusal: &Refusal{Stage: s, Validating: validating}}
	}
	for _, c := range []struct {
		a     *Admission
		stage Stage
		want  bool
	}{
		{&Admission{Admitted: true}, StageQuota, true},
		{at(StageQuota, false), StagePodSecurity, true},
		{at(StageQuota, false), StageLimitRange, true},
		{at(StageQuota, false), StageQuota, false},
		{at(StagePodSecurity, false), StageLimitRange, true},
		{at(StagePodSecurity, false), StageQuota, false},
		{at(StageLimitRange, false), StagePodSecurity, false},
		{at(StageWebhookDenied, false), StagePodSecurity, false}, // perhaps a mutating one
		{at(StageWebhookDenied, true), StagePodSecurity, true},   // the configurations say validating
		{at(StageWebhookDenied, true), StageQuota, false},
		{at(StageOther, false), StageServiceAccount, false},
		{&Admission{Err: context.DeadlineExceeded}, StageQuota, false},
		{nil, StageQuota, false},
	} {
		if got := c.a.Reached(c.stage); got != c.want {
			t.Errorf("%+v reached %s: %v, want %v", c.a, c.stage, got, c.want)
		}
	}
}

func TestWithoutGeneratedSuffix(t *testing.T) {
	const gen = "runner-abc-project-0-concurrent-0-"
	for in, want := range map[string]string{
		`pods "runner-abc-project-0-concurrent-0-8fwdk" is forbidden: exceeded quota: q`:    `pods "runner-abc-project-0-concurrent-0-" is forbidden: exceeded quota: q`,
		`pods "runner-abc-project-0-concurrent-0-" is forbidden: no PriorityClass`:          `pods "runner-abc-project-0-concurrent-0-" is forbidden: no PriorityClass`,
		`pods "other-8fwdk" is forbidden`:                                                   `pods "other-8fwdk" is forbidden`,
		`admission webhook "w" denied the request: runner-abc-project-0-concurrent-0-8fwdk`: `admission webhook "w" denied the request: runner-abc-project-0-concurrent-0-8fwdk`,
	} {
		if got := WithoutGeneratedSuffix(in, gen); got != want {
			t.Errorf("%q: got %q, want %q", in, got, want)
		}
	}
}
