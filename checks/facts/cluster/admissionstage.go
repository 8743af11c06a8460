package cluster

import (
	"errors"
	"net/http"
	"regexp"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/socialwebcomputer/doctor/internal/redact"
)

// Stage is the step of the apiserver's handling of a pod create that
// refused it. The apiserver runs, for a create (k8s.io/apiserver
// pkg/endpoints/handlers/create.go, v0.37.2): the mutating admission
// plugins in their order (kubernetes v1.37.2 pkg/kubeapiserver/options/
// plugins.go AllOrderedPlugins: NamespaceLifecycle, LimitRanger's
// defaults, ServiceAccount, Priority, RuntimeClass, …, the mutating
// webhooks), then the object's validation (the registry's BeforeCreate),
// then the validating plugins in the same order (LimitRanger's min and
// max, PodSecurity, …, ValidatingAdmissionPolicy, the validating webhooks,
// ResourceQuota last). The first that refuses ends it.
type Stage string

const (
	// StageRBAC: the identity may not create pods (runner-rbac's finding).
	StageRBAC Stage = "rbac"
	// StageNamespace: NamespaceLifecycle (the namespace is missing or
	// being deleted: the namespace check's finding).
	StageNamespace Stage = "namespace"
	// StageServiceAccount: the ServiceAccount plugin (job-identity's).
	StageServiceAccount Stage = "service-account"
	// StagePriorityClass: the Priority plugin.
	StagePriorityClass Stage = "priority-class"
	// StageRuntimeClass: the RuntimeClass plugin.
	StageRuntimeClass Stage = "runtime-class"
	// StageWebhookDenied: a webhook answered allowed: false.
	StageWebhookDenied Stage = "webhook-denied"
	// StageWebhookFailed: a webhook with failurePolicy Fail could not be
	// called, or answered nothing valid.
	StageWebhookFailed Stage = "webhook-failed"
	// StageWebhookNoDryRun: a webhook whose sideEffects are neither None
	// nor NoneOnDryRun: the apiserver refuses a dry run it would send it.
	StageWebhookNoDryRun Stage = "webhook-no-dry-run"
	// StageValidation: the pod is invalid (422).
	StageValidation Stage = "validation"
	// StageLimitRange: LimitRanger's min, max and ratios (namespace-quota's).
	StageLimitRange Stage = "limit-range"
	// StagePodSecurity: the PodSecurity plugin (job-identity's).
	StagePodSecurity Stage = "pod-security"
	// StagePolicy: a ValidatingAdmissionPolicy.
	StagePolicy Stage = "admission-policy"
	// StageQuota: ResourceQuota, the last step (namespace-quota's).
	StageQuota Stage = "resource-quota"
	// StageOther: a refusal none of these words.
	StageOther Stage = "other"
)

// Name is the stage as a finding names it.
func (s Stage) Name() string {
	switch s {
	case StageRBAC:
		return "authorization (RBAC)"
	case StageNamespace:
		return "the NamespaceLifecycle admission plugin"
	case StageServiceAccount:
		return "the ServiceAccount admission plugin"
	case StagePriorityClass:
		return "the Priority admission plugin"
	case StageRuntimeClass:
		return "the RuntimeClass admission plugin"
	case StageWebhookDenied, StageWebhookFailed, StageWebhookNoDryRun:
		return "an admission webhook"
	case StageValidation:
		return "the pod's validation"
	case StageLimitRange:
		return "the LimitRanger admission plugin"
	case StagePodSecurity:
		return "the PodSecurity admission plugin"
	case StagePolicy:
		return "a ValidatingAdmissionPolicy"
	case StageQuota:
		return "the ResourceQuota admission plugin"
	}
	return "the apiserver"
}

// rank orders the stages as the apiserver runs them; a webhook's rank is
// that of the earliest it can be (a mutating one), unless the
// configurations say it is validating.
func (s Stage) rank(validatingWebhook bool) int {
	switch s {
	case StageRBAC:
		return 0
	case StageNamespace:
		return 1
	case StageServiceAccount, StagePriorityClass, StageRuntimeClass:
		return 2
	case StageWebhookDenied, StageWebhookFailed, StageWebhookNoDryRun:
		if validatingWebhook {
			return 8
		}
		return 3
	case StageValidation:
		return 4
	case StageLimitRange:
		return 5
	case StagePodSecurity:
		return 6
	case StagePolicy:
		return 7
	case StageQuota:
		return 9
	}
	return 0 // another refusal: nothing is known to have passed
}

// Refusal is the apiserver's refusal of the job pod, in its own words.
type Refusal struct {
	Stage Stage
	// Webhook is the webhook's name (the webhook stages), or the
	// ValidatingAdmissionPolicy's.
	Webhook string
	// Message is the apiserver's message, cut to one line and redacted.
	Message string
	// Code and Reason are the Status's (403 Forbidden, 422 Invalid, ...).
	Code   int32
	Reason metav1.StatusReason
	// Timeout says a webhook was not called in time (context deadline
	// exceeded, Client.Timeout), which a longer wait may not have had.
	Timeout bool
	// Validating says the configurations name the webhook as a validating
	// one only (set by the check that read them).
	Validating bool
	// Err is the refusal itself, for apierrors' tests.
	Err error
}

// maxRefusal is how much of the apiserver's message a finding quotes: a
// webhook's message is the webhook's text, of any length.
const maxRefusal = 600

// The apiserver's wordings, quoted from its source:
var (
	// k8s.io/apiserver pkg/admission/plugin/webhook/errors/statuserror.go, v0.37.2:
	// "admission webhook %q denied the request", "admission webhook %q does not support dry run".
	webhookDenied   = regexp.MustCompile(`admission webhook "([^"]*)" denied the request`)
	webhookNoDryRun = regexp.MustCompile(`admission webhook "([^"]*)" does not support dry run`)
	// k8s.io/apiserver pkg/util/webhook/error.go, v0.37.2: "failed calling webhook %q: %v",
	// "failed calling webhook %q; no further details available".
	webhookFailed = regexp.MustCompile(`failed calling webhook "([^"]*)"`)
	// k8s.io/apiserver pkg/admission/plugin/policy/validating/dispatcher.go, v0.37.2:
	// "ValidatingAdmissionPolicy '%s' with binding '%s' denied request: %s",
	// "ValidatingAdmissionPolicy '%s' denied request: %s".
	policyDenied = regexp.MustCompile(`ValidatingAdmissionPolicy '([^']*)'( with binding '[^']*')? denied request`)
)

// ClassifyRefusal names the stage that refused the pod from the
// apiserver's answer; nil when err is no answer of the apiserver (a
// timeout, a connection that failed): then nothing was decided.
func ClassifyRefusal(err error) *Refusal {
	var st apierrors.APIStatus
	if err == nil || !errors.As(err, &st) {
		return nil
	}
	if apierrors.IsTimeout(err) {
		// k8s.io/apiserver pkg/server/filters/timeout.go, v0.37.2: "request did not
		// complete within requested timeout - %s" (504): the apiserver gave up
		// on its own handling, a step it waited on (a slow webhook) undecided.
		return nil
	}
	s := st.Status()
	r := &Refusal{Message: redact.RemoteText(s.Message, maxRefusal), Code: s.Code, Reason: s.Reason, Err: err}
	msg := s.Message
	switch {
	case webhookNoDryRun.MatchString(msg):
		r.Stage, r.Webhook = StageWebhookNoDryRun, webhookNoDryRun.FindStringSubmatch(msg)[1]
	case webhookDenied.MatchString(msg):
		r.Stage, r.Webhook = StageWebhookDenied, webhookDenied.FindStringSubmatch(msg)[1]
	case webhookFailed.MatchString(msg):
		r.Stage, r.Webhook = StageWebhookFailed, webhookFailed.FindStringSubmatch(msg)[1]
		r.Timeout = strings.Contains(msg, "context deadline exceeded") || strings.Contains(msg, "Client.Timeout") || strings.Contains(msg, "i/o timeout")
	case policyDenied.MatchString(msg):
		r.Stage, r.Webhook = StagePolicy, policyDenied.FindStringSubmatch(msg)[1]
	// k8s.io/pod-security-admission admission/admission.go, v0.37.2: "violates PodSecurity %q: %s".
	case strings.Contains(msg, "violates PodSecurity "):
		r.Stage = StagePodSecurity
	// k8s.io/apiserver pkg/admission/plugin/resourcequota/controller.go, v0.37.2:
	// "exceeded quota: %s, requested: %s, used: %s, limited: %s", "failed quota: %s: %v",
	// "status unknown for quota: %s, resources: %s".
	case strings.Contains(msg, "exceeded quota: ") || strings.Contains(msg, "failed quota: ") || strings.Contains(msg, "status unknown for quota: "):
		r.Stage = StageQuota
	// plugin/pkg/admission/limitranger/admission.go, kubernetes v1.37.2: "minimum %s usage per %s
	// is %s, but request is %s", "maximum %s usage per %s is %s, but limit is %s", "%s max limit
	// to request ratio per %s is %s, but provided ratio is %f".
	case strings.Contains(msg, " usage per Container is ") || strings.Contains(msg, " usage per Pod is ") ||
		strings.Contains(msg, " max limit to request ratio per "):
		r.Stage = StageLimitRange
	// plugin/pkg/admission/serviceaccount/admission.go, kubernetes v1.37.2: "error looking up
	// service account %s/%s: %w".
	case strings.Contains(msg, "error looking up service account ") || strings.Contains(msg, "no service account specified for pod "):
		r.Stage = StageServiceAccount
	// plugin/pkg/admission/priority/admission.go, kubernetes v1.37.2: "no PriorityClass with name
	// %v was found", "failed to resolve PriorityClass with name %s: %w".
	case strings.Contains(msg, "PriorityClass with name "):
		r.Stage = StagePriorityClass
	// plugin/pkg/admission/runtimeclass/admission.go, kubernetes v1.37.2: "pod rejected:
	// RuntimeClass %q not found", "pod rejected: Pod's Overhead doesn't match RuntimeClass's …".
	case strings.Contains(msg, "pod rejected: RuntimeClass ") || strings.Contains(msg, "RuntimeClass's defined Overhead"):
		r.Stage = StageRuntimeClass
	// k8s.io/apiserver pkg/admission/plugin/namespace/lifecycle/admission.go, v0.37.2: "unable to
	// create new content in namespace %s because it is being terminated"; a NotFound of the namespace.
	case strings.Contains(msg, "because it is being terminated") ||
		apierrors.IsNotFound(err) && s.Details != nil && s.Details.Kind == "namespaces":
		r.Stage = StageNamespace
	// k8s.io/apiserver pkg/endpoints/handlers/responsewriters/errors.go, v0.37.2 (forbidden):
	// "User %q cannot %s resource %q in API group %q in the namespace %q".
	case apierrors.IsForbidden(err) && strings.Contains(msg, `cannot create resource "pods"`):
		r.Stage = StageRBAC
	case apierrors.IsInvalid(err) || s.Code == http.StatusUnprocessableEntity:
		r.Stage = StageValidation
	default:
		r.Stage = StageOther
	}
	return r
}
