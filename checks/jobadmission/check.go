// Package jobadmission asks the apiserver whether it would admit the job pod
// a Kubernetes runner creates: the pod, built as the executor builds it, is
// sent as a create with dryRun=All with the runner's own identity
// (cluster.AdmissionFact). Every admission step runs on it (mutating and
// validating webhooks, ValidatingAdmissionPolicies, the Priority and
// RuntimeClass plugins, the pod's validation, Pod Security, LimitRanger,
// ResourceQuota) and nothing is persisted. This check reports the refusals
// no other check owns: a webhook that denies the pod, one that cannot be
// called, one that cannot be asked in a dry run, a policy, a missing
// PriorityClass or RuntimeClass, an invalid pod. Quota and LimitRange
// refusals are namespace-quota's findings, Pod Security and a missing
// service account job-identity's, a missing `create pods` runner-rbac's:
// each carries the dry run's words as its evidence.
package jobadmission

import (
	"fmt"
	"strings"
	"time"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts/cluster"
	"github.com/socialwebcomputer/doctor/checks/facts/configfacts"
	"github.com/socialwebcomputer/doctor/checks/facts/kubefacts"
	"github.com/socialwebcomputer/doctor/internal/fixcode"
)

// ID names the check.
const ID = "job-admission"

var Check = &checks.Check{
	ID:       ID,
	Title:    "The apiserver admits the job pod the runner would create (asked with a dry run)",
	Severity: checks.Error,
	Doc: checks.Doc{
		Cause: "Before a job's pod exists, the apiserver runs it through admission: mutating and validating admission " +
			"webhooks (Gatekeeper, Kyverno, a company's own policy), ValidatingAdmissionPolicies, the Priority and " +
			"RuntimeClass plugins, the pod's validation, Pod Security, LimitRanger and ResourceQuota. A webhook that " +
			"denies the pod refuses every job; so does a webhook whose failurePolicy is Fail while the apiserver cannot " +
			"call it (its service is down, its certificate or network is broken), or a priority_class_name or " +
			"runtime_class_name that names nothing. doctor sends the pod the runner would create (its namespace, " +
			"service account, pull secrets, resources, node selector, tolerations, security contexts, helper and " +
			"service containers, labels and annotations, and its name's prefix) with the runner's own identity as a " +
			"create with dryRun=All: the apiserver runs every step and stores nothing. A webhook whose sideEffects are " +
			"neither None nor NoneOnDryRun refuses every dry run: it cannot be asked this way, and doctor names it. " +
			"Quota and LimitRange refusals are namespace-quota's findings, Pod Security and a missing service account " +
			"job-identity's, a missing `create pods` runner-rbac's, each with the dry run's words as its evidence.",
		// executors/kubernetes/kubernetes.go, v19.3.0 ("setting up build pod: %w") around the
		// apiserver's refusal: k8s.io/apiserver pkg/admission/plugin/webhook/errors/statuserror.go,
		// v0.37.2 ("admission webhook %q denied the request: %s"); pkg/util/webhook/error.go
		// ("failed calling webhook %q: %v") inside apierrors.NewInternalError ("Internal error
		// occurred: %v"); validating/dispatcher.go ("failed to call webhook: %w").
		Symptom: "ERROR: Job failed (system failure): prepare environment: setting up build pod: admission webhook " +
			"\"validate.kyverno.svc-fail\" denied the request: …" + checks.PrepareHint + "; or … setting up build pod: " +
			"Internal error occurred: failed calling webhook \"mutate.kyverno.svc-fail\": failed to call webhook: Post " +
			"\"https://kyverno-svc.kyverno.svc:443/mutate/fail?timeout=10s\": context deadline exceeded",
		Fix: checks.Text("A webhook or policy that denies the pod says what it wants in its message: meet it in [runners.kubernetes] " +
			"(pod_labels, pod_annotations, the images, the security context tables, the resources), or have its owner exempt the " +
			"runner's namespace or pods (the webhook's namespaceSelector or objectSelector). A webhook that cannot be called: bring " +
			"its service back, or have its owner exclude the runner's namespace while it is down. A PriorityClass or RuntimeClass " +
			"that does not exist: create it, or correct priority_class_name or runtime_class_name. doctor run names the webhook, " +
			"its configuration and its endpoint."),
		Verify: checks.Steps{checks.Sh("doctor run --only job-admission")},
		Patterns: []string{
			// k8s.io/apiserver pkg/admission/plugin/webhook/errors/statuserror.go, v0.37.2, behind
			// "setting up build pod: %w" (executors/kubernetes/kubernetes.go, v19.3.0).
			`setting up build pod: admission webhook "*" denied the request`,
			// pkg/util/webhook/error.go, v0.37.2, inside apierrors.NewInternalError
			// (k8s.io/apimachinery pkg/api/errors/errors.go: "Internal error occurred: %v").
			`setting up build pod: Internal error occurred: failed calling webhook "*"`,
			// pkg/admission/plugin/policy/validating/dispatcher.go, v0.37.2 (with a binding's
			// name or without: `*` takes "NAME' with binding 'BINDING").
			`setting up build pod: ValidatingAdmissionPolicy '*' denied request: `,
			// plugin/pkg/admission/priority/admission.go, kubernetes v1.37.2.
			`is forbidden: no PriorityClass with name * was found`,
			// plugin/pkg/admission/runtimeclass/admission.go, kubernetes v1.37.2.
			`is forbidden: pod rejected: RuntimeClass "*" not found`,
		},
		Ambiguous: []checks.Ambiguous{
			// The same words for any object any client creates: a job's own kubectl or helm
			// ("Error from server (…): admission webhook …", k8s.io/kubectl cmd/util/helpers.go).
			{Pattern: `admission webhook "*" denied the request`, Or: []string{checks.NotACheck + "a policy denying an object a tool in the job's script creates (kubectl apply, helm)"},
				Tell: "`setting up build pod:` before it is the runner's job pod (job-admission); a tool's prefix (kubectl's `Error from server`, helm's `Error:`) is the job's own object, which the policy's message explains"},
			{Pattern: `failed calling webhook "*"`, Or: []string{checks.NotACheck + "a webhook down while a tool in the job's script creates an object (kubectl apply, helm)"},
				Tell: "`setting up build pod:` before it is the runner's job pod (job-admission: it names the webhook and its endpoint); a tool's prefix is the job's own object, refused by the same webhook"},
		},
	},
	Requires:  []checks.Node{cluster.AdmissionFact, kubefacts.APIClientFact, configfacts.RunnerEntryFact},
	Executors: []string{checks.Kubernetes},
	Network:   true,
	Run:       run,
}

// owners are the checks whose findings a refusal at their stage is.
var owners = map[cluster.Stage]string{
	cluster.StageQuota:          "namespace-quota",
	cluster.StageLimitRange:     "namespace-quota",
	cluster.StagePodSecurity:    "job-identity",
	cluster.StageServiceAccount: "job-identity",
	cluster.StageRBAC:           "runner-rbac",
	cluster.StageNamespace:      "namespace",
}

func run(p *checks.Pass) error {
	e, a := configfacts.RunnerEntryFact.Get(p), cluster.AdmissionFact.Get(p)
	ns := e.Namespace()
	switch {
	case a.Skipped != "":
		return checks.Skip("%s", a.Skipped)
	case a.ServerGaveUp:
		return fmt.Errorf("%s: the apiserver did not finish admitting the job pod within the %s doctor lets it take (%s): a step it waits on, "+
			"such as a slow webhook, did not answer; the runner waits as long as the webhook's timeoutSeconds: %w",
			e.Label(), cluster.DryRunTimeout(p.Env.APITimeout()), a.Request, a.Err)
	case a.Err != nil:
		return fmt.Errorf("%s: the dry run of the job pod (%s) got no answer: %w", e.Label(), a.Request, a.Err)
	case a.Admitted:
		return nil
	}
	r := a.Refusal
	switch r.Stage {
	case cluster.StageRBAC:
		// runner-rbac's finding: the runner cannot create pods at all.
		return kubefacts.LacksRBAC(kubefacts.Access{Verb: "create", Resource: "pods", Namespace: ns}, r.Err)
	case cluster.StageQuota:
		// The last step: every webhook and policy before it admitted the pod.
		return nil
	}
	if owner := owners[r.Stage]; owner != "" {
		return checks.Skip("the apiserver refuses the job pod at %s, %s's finding: the steps after it, among them the validating webhooks, were not asked",
			r.Stage.Name(), owner)
	}
	ev := []checks.Evidence{{Source: a.Request + " (the runner's identity)", Detail: refusalText(r)}}
	f := checks.Finding{}
	kubectl := kubefacts.APIClientFact.Get(p).Kubectl()
	switch r.Stage {
	case cluster.StageWebhookDenied:
		f.Cause = fmt.Sprintf("%s: the admission webhook %q denies the job pod the runner would create in %s, so every job fails with `setting up build pod: %s`.",
			e.Label(), r.Webhook, ns, r.Message)
		f.Fix = checks.Steps{checks.Say(fmt.Sprintf("The webhook's message says what it requires: meet it in [runners.kubernetes] of %s (pod_labels, pod_annotations, "+
			"the images, the security context tables, the resources), or have the webhook's owner exempt namespace %s or the runner's pods "+
			"(its namespaceSelector or objectSelector).", e.File.Path, ns))}
		f.Fix = append(f.Fix, configurationSteps(kubectl, a, r.Webhook)...)
	case cluster.StageWebhookFailed:
		f.Cause = fmt.Sprintf("%s: the apiserver cannot call the admission webhook %q, whose failurePolicy refuses the pod meanwhile: every job fails with `setting up build pod: %s`.",
			e.Label(), r.Webhook, r.Message)
		if r.Timeout {
			timeout := cluster.DryRunTimeout(p.Env.APITimeout())
			if slow := slower(a, r.Webhook, timeout); slow != "" {
				f.Severity = checks.Warning
				f.Cause = fmt.Sprintf("%s: the admission webhook %q did not answer the dry run within the %s doctor lets the apiserver wait; %s, so a job's pod may still be admitted, slowly: `%s`.",
					e.Label(), r.Webhook, timeout, slow, r.Message)
			}
		}
		f.Fix = append(checks.Steps{checks.Say(fmt.Sprintf("Bring the webhook's service back (its endpoint below), or have its owner exclude namespace %s "+
			"while it is down (its namespaceSelector); failurePolicy Ignore lets pods through unchecked while it cannot be called.", ns))},
			endpointSteps(kubectl, a, r.Webhook)...)
		f.Fix = append(f.Fix, configurationSteps(kubectl, a, r.Webhook)...)
	case cluster.StageWebhookNoDryRun:
		f.Severity = checks.Warning
		f.Cause = fmt.Sprintf("%s: the admission webhook %q cannot be asked about the job pod in a dry run (its sideEffects are neither None nor NoneOnDryRun, "+
			"so the apiserver refuses every dry run it would be sent): whether it admits the pod, and every step after it, shows only when a job runs.",
			e.Label(), r.Webhook)
		f.Fix = append(checks.Steps{checks.Say("If the webhook changes nothing outside the object it is sent, its owner declares it: sideEffects: None " +
			"(or NoneOnDryRun, when it skips its side effects on a dry run); then doctor can ask it.")},
			configurationSteps(kubectl, a, r.Webhook)...)
	case cluster.StagePolicy:
		f.Cause = fmt.Sprintf("%s: the ValidatingAdmissionPolicy %q denies the job pod the runner would create in %s, so every job fails with `setting up build pod: %s`.",
			e.Label(), r.Webhook, ns, r.Message)
		f.Fix = checks.Steps{checks.Say(fmt.Sprintf("The policy's message says what it requires: meet it in [runners.kubernetes] of %s, or have the policy's owner "+
			"exclude namespace %s from its binding. The policy and its bindings:", e.File.Path, ns))}
		if err := fixcode.ObjectName(r.Webhook); err == nil {
			f.Fix = append(f.Fix, checks.Commands(kubectl.Arg("get", "validatingadmissionpolicy", r.Webhook, "-o", "yaml"),
				kubectl.Arg("get", "validatingadmissionpolicybindings")))
		}
	case cluster.StagePriorityClass:
		name := e.Kube().PriorityClassName
		src, line := e.At("kubernetes", "priority_class_name")
		ev = append(ev, checks.Evidence{Source: src, Detail: line})
		f.Cause = fmt.Sprintf("%s: priority_class_name %q names no PriorityClass of the cluster, so the apiserver refuses every job pod: `%s`.", e.Label(), name, r.Message)
		f.Fix = checks.Steps{checks.Say(fmt.Sprintf("Set priority_class_name in [runners.kubernetes] of %s to one of the cluster's PriorityClasses, "+
			"or have an administrator create it:", e.File.Path)), checks.Commands(kubectl.Arg("get", "priorityclasses"))}
	case cluster.StageRuntimeClass:
		src, line := e.At("kubernetes", "runtime_class_name")
		ev = append(ev, checks.Evidence{Source: src, Detail: line})
		f.Cause = fmt.Sprintf("%s: the apiserver refuses every job pod for its runtime_class_name: `%s`.", e.Label(), r.Message)
		f.Fix = checks.Steps{checks.Say(fmt.Sprintf("Set runtime_class_name in [runners.kubernetes] of %s to one of the cluster's RuntimeClasses, "+
			"or remove it:", e.File.Path)), checks.Commands(kubectl.Arg("get", "runtimeclasses"))}
	case cluster.StageValidation:
		f.Cause = fmt.Sprintf("%s: the apiserver finds the job pod the runner would create invalid, so every job fails with `setting up build pod: %s`.", e.Label(), r.Message)
		f.Fix = checks.Text(fmt.Sprintf("Correct the setting of [runners.kubernetes] in %s that the field names: the runner sends the same pod with every job.", e.File.Path))
	default:
		f.Cause = fmt.Sprintf("%s: the apiserver refuses the job pod the runner would create in %s: `%s`.", e.Label(), ns, r.Message)
		f.Fix = checks.Text("The apiserver's message names what refuses the pod; every job fails the same way until it is changed.")
	}
	ev = append(ev, webhookEvidence(a, r)...)
	ev = append(ev, checks.Evidence{Source: e.File.Path, Detail: "the dry run's pod: " + a.Pod.Describe()})
	if len(a.Pod.Notes) > 0 {
		ev = append(ev, checks.Evidence{Source: "the dry run's pod", Detail: strings.Join(a.Pod.Notes, "; ")})
	}
	f.Evidence = ev
	p.Report(f)
	return nil
}

// refusalText is the refusal as the apiserver answered it.
func refusalText(r *cluster.Refusal) string {
	if r.Reason == "" {
		return fmt.Sprintf("%d: %s", r.Code, r.Message)
	}
	return fmt.Sprintf("%d %s: %s", r.Code, r.Reason, r.Message)
}

// webhookEvidence names the refusing webhook and every other the
// apiserver sends the runner's pods, as the configurations say, or why
// they could not be read.
func webhookEvidence(a *cluster.Admission, r *cluster.Refusal) []checks.Evidence {
	w := a.Webhooks
	if w == nil {
		return nil
	}
	var ev []checks.Evidence
	for _, err := range []error{w.ValidatingErr, w.MutatingErr} {
		if err != nil {
			ev = append(ev, checks.Evidence{Source: cluster.WebhooksSource, Detail: "not read: " + err.Error()})
			break
		}
	}
	shown := map[string]bool{}
	for _, h := range w.Named(r.Webhook) {
		shown[h.Configuration+"/"+h.Name] = true
		ev = append(ev, checks.Evidence{Source: cluster.WebhooksSource, Detail: "the refusing " + h.Describe()})
	}
	if a.NamespaceLabels == nil {
		return ev
	}
	var others []string
	for _, h := range w.Matching(a.NamespaceLabels, a.Pod.Pod.Labels) {
		if !shown[h.Configuration+"/"+h.Name] {
			others = append(others, h.Describe())
		}
	}
	if len(others) > 0 {
		if len(others) > 5 {
			others = append(others[:5:5], fmt.Sprintf("and %d more", len(others)-5))
		}
		ev = append(ev, checks.Evidence{Source: cluster.WebhooksSource,
			Detail: "other webhooks whose selectors take the runner's namespace and pods (their rules not weighed): " + strings.Join(others, "; ")})
	}
	return ev
}

// slower says why a webhook that did not answer within doctor's bound may
// still answer a job's create: its own timeoutSeconds is longer. "" when the
// configurations say it is not, or were not read.
func slower(a *cluster.Admission, name string, bound time.Duration) string {
	if a.Webhooks == nil {
		return ""
	}
	for _, h := range a.Webhooks.Named(name) {
		if float64(h.TimeoutSeconds) > bound.Seconds() {
			return fmt.Sprintf("its timeoutSeconds is %d", h.TimeoutSeconds)
		}
	}
	return ""
}

// configurationSteps print the configuration of the named webhook: what
// it is sent, where, and what it does when it cannot be called.
func configurationSteps(kubectl fixcode.Cmd, a *cluster.Admission, name string) checks.Steps {
	if a.Webhooks == nil {
		return nil
	}
	var cmds []fixcode.Cmd
	for _, h := range a.Webhooks.Named(name) {
		if fixcode.ObjectName(h.Configuration) != nil {
			continue
		}
		cmds = append(cmds, kubectl.Arg("get", h.Kind+"webhookconfiguration", h.Configuration, "-o", "yaml"))
	}
	if len(cmds) == 0 {
		return nil
	}
	return checks.Steps{checks.Say("The webhook's configuration (its endpoint, failurePolicy, namespaceSelector and objectSelector):"), checks.Commands(cmds...)}
}

// endpointSteps look at the service a webhook is called at, when it is a
// service of the cluster.
func endpointSteps(kubectl fixcode.Cmd, a *cluster.Admission, name string) checks.Steps {
	if a.Webhooks == nil {
		return nil
	}
	for _, h := range a.Webhooks.Named(name) {
		svcNS, svc, ok := serviceOf(h.Endpoint)
		if !ok || fixcode.NamespaceName(svcNS) != nil || fixcode.ObjectName(svc) != nil {
			continue
		}
		return checks.Steps{checks.Say("Its service, and the pods behind it:"), checks.Commands(
			kubectl.Arg("get", "service", "-n", svcNS, svc),
			kubectl.Arg("get", "endpointslices", "-n", svcNS, "-l", "kubernetes.io/service-name="+svc))}
	}
	return nil
}

// serviceOf reads cluster.Webhook's "service NS/NAME:PORT/PATH".
func serviceOf(endpoint string) (ns, name string, ok bool) {
	rest, ok := strings.CutPrefix(endpoint, "service ")
	if !ok {
		return "", "", false
	}
	ns, rest, ok = strings.Cut(rest, "/")
	if !ok {
		return "", "", false
	}
	name, _, _ = strings.Cut(rest, ":")
	return ns, name, name != ""
}
