// Package namespacequota weighs the job pod the runner asks for against the
// runner namespace's ResourceQuota and LimitRange: the apiserver refuses a
// pod that passes a quota, that a quota needs limits on and does not get
// them, or that falls outside a LimitRange.
package namespacequota

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts/cluster"
	"github.com/socialwebcomputer/doctor/checks/facts/configfacts"
	"github.com/socialwebcomputer/doctor/checks/facts/kubefacts"
	"github.com/socialwebcomputer/doctor/internal/fixcode"
	"github.com/socialwebcomputer/doctor/runnerconfig/jobpod"
)

var Check = &checks.Check{
	ID:       "namespace-quota",
	Title:    "The job pod fits the runner namespace's ResourceQuota and LimitRange",
	Severity: checks.Error,
	Doc: checks.Doc{
		Cause: "The apiserver admits a job pod (build, helper, the init-permissions init container and every service " +
			"together) only within the runner namespace's ResourceQuota and LimitRange. A quota that is used up, or " +
			"smaller than one job pod, refuses it; a quota on cpu or memory refuses any container that does not state " +
			"that resource (the runner sets no request or limit the config does not give, and helper and service " +
			"containers have their own keys); a LimitRange refuses a container outside its min or max. A quota with room for " +
			"fewer job pods than the runner runs at once (concurrent, limit) refuses the jobs beyond it. doctor asks the apiserver " +
			"itself with a dry run of the pod (job-admission) and quotes its refusal; its own arithmetic explains it, and weighs " +
			"what one dry run cannot: the most a job may ask, and concurrent jobs. Secrets the " +
			"runner leaked (runner-… without an owner pod) still count toward a count/secrets quota.",
		// executors/kubernetes/kubernetes.go, v19.3.0 ("setting up build pod: %w"), wrapping the apiserver's
		// refusal: k8s.io/apiserver pkg/admission/plugin/resourcequota/controller.go, v0.37.2 ("exceeded quota: %s,
		// requested: %s, used: %s, limited: %s", "failed quota: %s: %v"), pkg/quota/v1/evaluator/core/pods.go,
		// kubernetes v1.37.2 ("must specify %s"), plugin/pkg/admission/limitranger/admission.go ("maximum %s usage per %s is %s, but limit is %s").
		Symptom: "ERROR: Job failed (system failure): prepare environment: setting up build pod: pods \"runner-…\" is forbidden: " +
			"exceeded quota: compute, requested: limits.memory=21Gi, used: limits.memory=0, limited: limits.memory=16Gi" + checks.PrepareHint + "; or " +
			"… is forbidden: failed quota: compute: must specify limits.cpu for: build,helper,init-permissions; or " +
			"… is forbidden: maximum memory usage per Container is 8Gi, but limit is 20Gi",
		Fix: checks.Text("Make the job pod fit: give cpu/memory requests and limits for build, helper (helper_*) and services " +
			"(service_*) in [runners.kubernetes], within the LimitRange and with their sum below the quota; or raise the " +
			"quota; delete leaked runner-… Secrets."),
		Verify: checks.Target(checks.Sh(checks.CatalogKubectl + ` describe resourcequota,limitrange -n "$RUNNER_NAMESPACE"`)),
		Patterns: []string{
			// k8s.io/apiserver resourcequota/controller.go, v0.37.2, as the runner prints it
			// ("setting up build pod: %w", executors/kubernetes/kubernetes.go, v19.3.0)
			// Any object the runner creates, not the pod alone: a quota on secrets refuses
			// "setting up credentials: secrets …", one on namespaces "setting up build namespace: …".
			"is forbidden: exceeded quota: *, requested: *, used: *, limited: *",
			"is forbidden: failed quota: *: must specify *",
			// plugin/pkg/admission/limitranger/admission.go, kubernetes v1.37.2
			"is forbidden: maximum * usage per Container is *, but limit is *",
			"is forbidden: minimum * usage per Container is *, but request is *",
			"is forbidden: maximum * usage per Pod is *, but limit is *",
		},
	},
	// The dry run (job-admission's fact) is the verdict where it reached
	// the quota and the LimitRange; the model explains it, and stays where
	// the dry run cannot say (the most a job may ask, leaked objects).
	Requires: []checks.Node{cluster.NamespaceQuotaObjectsFact, cluster.ListsFact, kubefacts.APIClientFact, configfacts.RunnerEntryFact,
		checks.Optional(cluster.AdmissionFact)},
	Executors: []string{checks.Kubernetes},
	Network:   true,
	Run:       run,
}

// LeakAge is how old an ownerless runner-… Secret must be to count as
// leaked: the runner creates it before the pod and sets the owner after.
const LeakAge = time.Hour

func run(p *checks.Pass) error {
	e := configfacts.RunnerEntryFact.Get(p)
	if e.Kube().NamespacePerJob {
		return checks.Skip("namespace_per_job is set: each job's namespace is created for it, with no quota of its own")
	}
	ns := e.Namespace()
	o := cluster.NamespaceQuotaObjectsFact.Get(p)
	if err := forbidden(o.QuotaErr, "resourcequotas", ns); err != nil {
		return err
	}
	if err := forbidden(o.LRErr, "limitranges", ns); err != nil {
		return err
	}
	adm := cluster.AdmissionFact.Get(p) // nil when the dry run did not run
	for _, ask := range []jobpod.Ask{jobpod.Configured, jobpod.MostAllowed} {
		pod, err := jobpod.For(e.Runner, ask)
		if err != nil {
			return fmt.Errorf("%s: the job pod cannot be built: %w", e.Label(), err)
		}
		ApplyDefaults(pod, o.Ranges)
		refusals := append(LimitRangeRefusals(pod, o.Ranges), QuotaRefusals(pod, o.Quotas)...)
		if ask == jobpod.Configured {
			if adm.RefusedAt(cluster.StageLimitRange) || adm.RefusedAt(cluster.StageQuota) {
				reportDryRun(p, e, ns, pod, adm, refusals)
				break
			}
			refusals = notPassed(adm, refusals)
		}
		if len(refusals) == 0 {
			if ask == jobpod.Configured {
				concurrency(p, e, ns, pod, o.Quotas)
			}
			continue
		}
		report(p, e, ns, pod, refusals, ask, adm)
		break // the most a job may ask is reported only when what every job asks fits
	}
	leaked(p, e.Label(), ns, o, cluster.ListsFact.Get(p))
	if err := forbidden(o.SecErr, "secrets", ns); err != nil {
		return err
	}
	return forbidden(o.CMErr, "configmaps", ns)
}

// notPassed drops the model's refusals of the stages the dry run of the
// same pod passed: the apiserver admitted it there (a scope, an exemption
// or a rule the model does not weigh), and its verdict stands.
func notPassed(adm *cluster.Admission, refusals []Refusal) []Refusal {
	var out []Refusal
	for _, r := range refusals {
		if adm.Reached(r.Stage()) {
			continue
		}
		out = append(out, r)
	}
	return out
}

// Stage is the admission step that weighs the refusal.
func (r Refusal) Stage() cluster.Stage {
	if strings.HasPrefix(r.Object, "limitrange ") {
		return cluster.StageLimitRange
	}
	return cluster.StageQuota
}

// reportDryRun reports the apiserver's refusal of the dry run at the
// LimitRange or the quota, in its words; the model's refusals explain it
// (which container, which numbers).
func reportDryRun(p *checks.Pass, e *configfacts.RunnerEntry, ns string, pod *corev1.Pod, adm *cluster.Admission, refusals []Refusal) {
	r := adm.Refusal
	ev := []checks.Evidence{{Source: adm.Request + " (the runner's identity)", Detail: fmt.Sprintf("%d %s: %s", r.Code, r.Reason, r.Message)}}
	always, explained := false, false
	for _, m := range refusals {
		if m.Stage() != r.Stage {
			continue
		}
		explained = true
		always = always || m.Always
		ev = append(ev, checks.Evidence{Source: "GET " + m.Object, Detail: m.Message})
	}
	if !explained {
		ev = append(ev, checks.Evidence{Source: "doctor's model of " + r.Stage.Name(), Detail: "finds no refusal (a scoped quota, or a rule it does not weigh): the apiserver's answer is the verdict"})
	}
	ev = append(ev, checks.Evidence{Source: e.File.Path, Detail: "the job pod: " + describe(pod)})
	cause := fmt.Sprintf("%s: the apiserver refuses every job pod in %s at %s (a dry run of the pod the runner sends): %s", e.Label(), ns, r.Stage.Name(), r.Message)
	if explained && !always {
		cause += " (the namespace's quota is used up now; an emptier namespace would admit it)"
	}
	p.Report(checks.Finding{Cause: cause + ".", Evidence: ev})
}

func report(p *checks.Pass, e *configfacts.RunnerEntry, ns string, pod *corev1.Pod, refusals []Refusal, ask jobpod.Ask, adm *cluster.Admission) {
	ev := []checks.Evidence{}
	for _, r := range refusals {
		ev = append(ev, checks.Evidence{Source: "GET " + r.Object, Detail: r.Message})
	}
	ev = append(ev, checks.Evidence{Source: e.File.Path, Detail: "the job pod: " + describe(pod)})
	if ask == jobpod.Configured {
		ev = append(ev, dryRunNote(adm))
	}
	first := refusals[0]
	var cause string
	if ask == jobpod.Configured {
		cause = fmt.Sprintf("%s: the apiserver refuses every job pod in %s: %s", e.Label(), ns, first.Message)
		if !first.Always {
			cause += " (the namespace's quota is used up now; an emptier namespace would admit it)"
		}
	} else {
		cause = fmt.Sprintf("%s: a job that raises its resources to the *_overwrite_max_allowed values is refused in %s: %s", e.Label(), ns, first.Message)
	}
	sev := checks.Default
	if ask == jobpod.MostAllowed {
		sev = checks.Warning
	}
	p.Report(checks.Finding{Severity: sev, Cause: cause + ".", Evidence: ev})
}

// concurrency reports a quota that admits a job pod now but fewer than the
// runner runs at once: what a dry run of one pod cannot see. The runner
// runs up to concurrent jobs (1 when unset), and at most its own limit.
func concurrency(p *checks.Pass, e *configfacts.RunnerEntry, ns string, pod *corev1.Pod, quotas []corev1.ResourceQuota) {
	jobs, how := 1, "concurrent unset: 1"
	if c := e.File.Config; c != nil && c.Concurrent > 0 {
		jobs, how = c.Concurrent, fmt.Sprintf("concurrent = %d", c.Concurrent)
	}
	if l := e.Runner.Limit; l > 0 && l < jobs {
		jobs, how = l, fmt.Sprintf("%s, limit = %d", how, l)
	}
	room, quota, res, ok := Room(pod, quotas)
	if !ok || room >= int64(jobs) || room == 0 {
		return // room 0 is a refusal, which the dry run and the model report
	}
	var q *corev1.ResourceQuota
	for i := range quotas {
		if quotas[i].Name == quota {
			q = &quotas[i]
		}
	}
	h, u, want := cluster.Hard(q)[res], q.Status.Used[res], Usage(pod)[res]
	src, line := e.File.Path, how
	if s, l := e.File.AtRunner(e.Pos, "limit"); e.Runner.Limit > 0 {
		src, line = s, l
	}
	p.Report(checks.Finding{
		Severity: checks.Warning,
		Cause: fmt.Sprintf("%s: quota %s in %s admits %d more job pod(s) now, and the runner runs up to %d jobs at once (%s): "+
			"the next is refused with `exceeded quota: %s, requested: %s=%s, …` until one ends. A dry run of one pod cannot see this.",
			e.Label(), quota, ns, room, jobs, how, quota, res, want.String()),
		Evidence: []checks.Evidence{
			{Source: "GET resourcequota " + q.Namespace + "/" + quota, Detail: fmt.Sprintf("%s: %s of %s used; each job pod asks %s", res, qty(u), h.String(), want.String())},
			{Source: src, Detail: line},
			{Source: e.File.Path, Detail: "the job pod: " + describe(pod)},
		},
	})
}

// dryRunNote says why the model's verdict stands without the apiserver's.
func dryRunNote(adm *cluster.Admission) checks.Evidence {
	src := "the dry run of the job pod"
	switch {
	case adm == nil:
		return checks.Evidence{Source: src, Detail: "not sent: only doctor's model weighs the pod"}
	case adm.Skipped != "":
		return checks.Evidence{Source: src, Detail: "not sent: " + adm.Skipped}
	case adm.Err != nil:
		return checks.Evidence{Source: adm.Request, Detail: "no answer (" + adm.Err.Error() + "): only doctor's model weighs the pod"}
	case adm.Refusal != nil:
		return checks.Evidence{Source: adm.Request, Detail: "refused earlier, at " + adm.Refusal.Stage.Name() + " (job-admission or job-identity says why): the quota was not asked"}
	}
	return checks.Evidence{Source: adm.Request, Detail: "admitted"}
}

// describe lists each container's requests and limits.
func describe(pod *corev1.Pod) string {
	var parts []string
	for _, c := range jobpod.AllContainers(pod) {
		parts = append(parts, fmt.Sprintf("%s requests %s limits %s", c.Name, rl(jobpod.EffectiveRequests(c)), rl(c.Resources.Limits)))
	}
	return strings.Join(parts, "; ")
}

func rl(l corev1.ResourceList) string {
	if len(l) == 0 {
		return "none"
	}
	var parts []string
	for _, n := range sortedNames(l) {
		q := l[n]
		parts = append(parts, string(n)+"="+q.String())
	}
	return strings.Join(parts, ",")
}

// forbidden turns a refused list into "could not check", naming the RBAC
// the identity lacks; other errors are returned as they are.
func forbidden(err error, resource, ns string) error {
	switch {
	case err == nil:
		return nil
	case apierrors.IsForbidden(err):
		return kubefacts.LacksRBAC(kubefacts.Access{Verb: "list", Resource: resource, Namespace: ns}, err)
	}
	return fmt.Errorf("listing %s in %s: %w", resource, ns, err)
}

// leaked reports ownerless runner-… Secrets and ConfigMaps where a quota
// counts them.
func leaked(p *checks.Pass, label, ns string, o *cluster.NamespaceQuotaObjects, l *cluster.Lists) {
	pods := map[string]bool{}
	for _, pod := range l.RunnerPods {
		pods[string(pod.UID)] = true
	}
	for _, kind := range []struct {
		resource string
		items    []metav1.PartialObjectMetadata
		err      error
	}{{"secrets", o.Secrets, o.SecErr}, {"configmaps", o.Configs, o.CMErr}} {
		hard, used, name := cluster.QuotaOn(o.Quotas, kind.resource)
		if name == "" || kind.err != nil {
			continue
		}
		var names []string
		for _, it := range kind.items {
			if IsLeaked(it, pods, p.Env.Now()) {
				names = append(names, it.Name)
			}
		}
		if len(names) == 0 {
			continue
		}
		sev := checks.Warning
		if used >= hard {
			sev = checks.Error
		}
		shown := names
		if len(shown) > 5 {
			shown = append(shown[:5:5], fmt.Sprintf("and %d more", len(names)-5))
		}
		p.Report(checks.Finding{
			Severity: sev,
			Cause: fmt.Sprintf("%s: %d runner-… %s in %s have no owner pod (leaked by jobs that ended badly) and count toward quota %s (%d of %d used).",
				label, len(names), kind.resource, ns, name, used, hard),
			Evidence: []checks.Evidence{{Source: "GET /api/v1/namespaces/" + ns + "/" + kind.resource + " (metadata only)", Detail: strings.Join(shown, ", ")}},
			Fix:      checks.Steps{checks.Say("Delete the leaked ones (the first 20 here):"), deleteLeaked(kubefacts.APIClientFact.Get(p).Kubectl(), kind.resource, ns, names[:min(len(names), 20)])},
		})
	}
}

// IsLeaked tells a runner-… object no live pod owns, older than LeakAge.
func IsLeaked(o metav1.PartialObjectMetadata, pods map[string]bool, now time.Time) bool {
	if !strings.HasPrefix(o.Name, "runner-") || !strings.Contains(o.Name, "-project-") {
		return false
	}
	if cluster.Age(o.CreationTimestamp.Time, now) < LeakAge {
		return false
	}
	for _, ref := range o.OwnerReferences {
		if ref.Kind == "Pod" && pods[string(ref.UID)] {
			return false
		}
	}
	return true
}

// deleteLeaked is the command that deletes the named objects of resource
// (secrets, configmaps) in namespace ns with kubectl, a command aimed at
// the runner's cluster. The names are the apiserver's, each one word; a
// namespace or a name that is not one gets no command.
func deleteLeaked(kubectl fixcode.Cmd, resource, ns string, names []string) checks.Step {
	if err := fixcode.NamespaceName(ns); err != nil {
		return checks.Withheld(fmt.Errorf("the runner's namespace is %w", err))
	}
	for _, n := range names {
		if err := fixcode.ObjectName(n); err != nil {
			return checks.Withheld(fmt.Errorf("a leaked object's name is %w", err))
		}
	}
	return checks.Commands(kubectl.Arg("delete", resource, "-n", ns).Arg(names...))
}
