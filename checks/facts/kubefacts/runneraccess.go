package kubefacts

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts/configfacts"
	"github.com/socialwebcomputer/doctor/runnerconfig"
)

// ciDebugServices is the job's CI_DEBUG_SERVICES as far as config.toml sets
// it: validate() in common/build_settings.go parses it with strconv.ParseBool
// (empty or unparsable: false), and debug_trace_disabled forces it off
// ("CI_DEBUG_SERVICES: usage is disabled on this Runner").
func ciDebugServices(r *runnerconfig.Runner) bool {
	if r == nil || r.DebugTraceDisabled {
		return false
	}
	raw, ok := runnerconfig.EnvironmentValue(r, "CI_DEBUG_SERVICES")
	if !ok {
		return false
	}
	v, err := strconv.ParseBool(raw)
	return err == nil && v
}

// The prefix a non-BuildError of the prepare stage gets in the job log
// (setTraceStatus and executePrepareScripts, common/build.go v19.3.0); the
// stage's error ends with checks.PrepareHint.
const jobFailed = "ERROR: Job failed (system failure): prepare environment: "

// NeededFor is every access the Kubernetes executor of this runner uses, following its settings and feature flags as the runner's RBAC table does.
//
// The rules follow the "Configure runner API permissions" table of
// docs/executors/kubernetes/_index.md at gitlab-runner v19.3.0 (generated from
// the "// kubeAPI:" annotations of executors/kubernetes), narrowed where the
// code at that tag is narrower than the table: pods/log for
// FF_USE_LEGACY_KUBERNETES_EXECUTION_STRATEGY=false only with
// CI_DEBUG_SERVICES (as the table's "Additional details" say), serviceaccounts
// get only when service_account is set and the resource check is on, and
// priorityclasses only when the runner manages its own class.
//
// The build pod's namespace is [runners.kubernetes] namespace, "default" when
// empty (the executor warns "Namespace is empty, therefore assuming
// 'default'."). With namespace_per_job each job runs in a new "ci-job-<id>"
// namespace that no RoleBinding can exist in beforehand, so the namespaced
// accesses are asked cluster-wide (Namespace ""), which only a
// ClusterRoleBinding satisfies. A job's KUBERNETES_NAMESPACE_OVERWRITE and
// its own variables (CI_DEBUG_SERVICES, FF_*) are not in config.toml and are
// not followed. r == nil or a runner without [runners.kubernetes] is treated
// as all defaults.
func NeededFor(r *runnerconfig.Runner) []Access {
	k := &runnerconfig.Kubernetes{}
	if r != nil && r.Kubernetes != nil {
		k = r.Kubernetes
	}
	ns := k.Namespace
	if ns == "" {
		ns = "default"
	}
	if k.NamespacePerJob {
		ns = ""
	}

	legacy, _ := runnerconfig.FeatureFlag(r, runnerconfig.FFUseLegacyKubernetesExecutionStrategy)
	honor, _ := runnerconfig.FeatureFlag(r, runnerconfig.FFKubernetesHonorEntrypoint)
	reachable, _ := runnerconfig.FeatureFlag(r, runnerconfig.FFWaitForPodToBeReachable)
	podEvents, _ := runnerconfig.FeatureFlag(r, runnerconfig.FFPrintPodEvents)
	attach := !legacy
	debugServices := attach && ciDebugServices(r)

	// setup names the failing step the way the job log shows it: the attach
	// strategy's ensurePodsConfigured wraps each step ("setting up build
	// pod: %w"), the legacy setupPodLegacy returns the bare API error.
	setup := func(step, forbidden string) string {
		if attach && step != "" {
			return jobFailed + step + ": " + forbidden + checks.PrepareHint
		}
		return jobFailed + forbidden + checks.PrepareHint
	}

	var b accessList

	// Row "pods | create, delete, get, list (using Informers), watch (using
	// Informers, FF_KUBERNETES_HONOR_ENTRYPOINT=true,
	// FF_USE_LEGACY_KUBERNETES_EXECUTION_STRATEGY=false)",
	// docs/executors/kubernetes/_index.md v19.3.0.
	b.add("create", "", "pods", ns, setup("setting up build pod", `pods is forbidden: User "…" cannot create resource "pods"`))
	b.add("get", "", "pods", ns, setup("", `waiting for pod running: pods "runner-…" is forbidden`)+
		`; each script step: couldn't get pod details: pods "runner-…" is forbidden`)
	b.add("delete", "", "pods", ns, `ERROR: Error cleaning up pod: pods "runner-…" is forbidden (the build pod is left behind after every job)`)
	informers := `WARNING: won't use informers: "<reason>", see: https://docs.gitlab.com/runner/executors/kubernetes/#informers (the job goes on polling the pod)`
	b.add("list", "", "pods", ns, informers)
	b.add("watch", "", "pods", ns, informers)
	if honor {
		// waitForRunningContainer (util.go) watches the pod before
		// captureContainerLogs streams the build container's log.
		b.add("watch", "", "pods", ns, setup("", `failed to open log stream for container build: pods is forbidden (watch)`))
	}
	if debugServices {
		b.add("watch", "", "pods", ns, `WARNING: failed to open log stream for container svc-…: pods is forbidden (watch); the service logs are missing`)
	}

	// Row "pods/attach | create, delete, get, patch
	// (FF_USE_LEGACY_KUBERNETES_EXECUTION_STRATEGY=false)", _index.md v19.3.0.
	if attach {
		for _, verb := range []string{"create", "delete", "get", "patch"} {
			b.add(verb, "", "pods/attach", ns, `every script step fails attaching to the build container: pods "runner-…" is forbidden (`+verb+` pods/attach; exec.go AttachOptions.Run)`)
		}
	}

	// Row "pods/exec | create, delete, get, patch", _index.md v19.3.0: the
	// legacy strategy runs every step through exec, the attach strategy
	// still execs the helper's log reader and the trapping scripts.
	for _, verb := range []string{"create", "delete", "get", "patch"} {
		b.add(verb, "", "pods/exec", ns, `the job fails at its first step: pods "runner-…" is forbidden (`+verb+` pods/exec; the API server authorizes the exec upgrade as one of these verbs)`)
	}

	// Row "pods/log | get (FF_KUBERNETES_HONOR_ENTRYPOINT=true,
	// FF_USE_LEGACY_KUBERNETES_EXECUTION_STRATEGY=false,
	// FF_WAIT_FOR_POD_TO_BE_REACHABLE=true), list
	// (FF_KUBERNETES_HONOR_ENTRYPOINT=true,
	// FF_USE_LEGACY_KUBERNETES_EXECUTION_STRATEGY=false)", _index.md
	// v19.3.0, with its note: the attach strategy reads pods/log only "when
	// the CI_DEBUG_SERVICES variable is set to true".
	if honor {
		msg := setup("", `failed to open log stream for container build: pods "runner-…" is forbidden`)
		b.add("get", "", "pods/log", ns, msg)
		b.add("list", "", "pods/log", ns, msg)
	}
	if debugServices {
		msg := `WARNING: failed to open log stream for container svc-…: pods "runner-…" is forbidden; CI_DEBUG_SERVICES shows no service logs`
		b.add("get", "", "pods/log", ns, msg)
		b.add("list", "", "pods/log", ns, msg)
	}
	if reachable {
		b.add("get", "", "pods/log", ns, setup("", "pod failed to become attachable timed out waiting for pod to become attachable"))
	}

	// Row "secrets | create, delete, get, update", _index.md v19.3.0: the
	// registry credentials of the job (setupCredentials), and the check of
	// image_pull_secrets.
	b.add("create", "", "secrets", ns, setup("setting up credentials", `secrets is forbidden: User "…" cannot create resource "secrets"`))
	b.add("get", "", "secrets", ns, `a credentials secret that already exists cannot be read back (secrets is forbidden)`)
	if len(k.ImagePullSecrets) > 0 && k.ResourceAvailabilityCheckMaxAttempts != 0 {
		b.add("get", "", "secrets", ns, setup("setting up build pod", "Timed out while waiting for ImagePullSecret/"+k.ImagePullSecrets[0]+" to be present in the cluster"))
	}
	b.add("update", "", "secrets", ns, setup("setting up build pod", `error setting ownerReferences: secrets "runner-…" is forbidden`))
	b.add("delete", "", "secrets", ns, `ERROR: Error cleaning up secrets: secrets "runner-…" is forbidden (left behind when ownerReferences were not set)`)

	// Row "serviceaccounts | get", _index.md v19.3.0: checkDependantResources
	// asks only for a set service_account, and only while
	// resource_availability_check_max_attempts is not 0 (a negative value
	// means the default, 5).
	if k.ServiceAccount != "" && k.ResourceAvailabilityCheckMaxAttempts != 0 {
		b.add("get", "", "serviceaccounts", ns, setup("setting up build pod", "Timed out while waiting for ServiceAccount/"+k.ServiceAccount+" to be present in the cluster"))
	}

	// Row "services | create, get", _index.md v19.3.0: only jobs whose image
	// or services declare ports get a proxy service (makePodProxyServices).
	b.add("create", "", "services", ns, `jobs with service ports: ERROR: error creating the proxy service "…": services is forbidden`)
	b.add("get", "", "services", ns, `jobs with service ports: a proxy service that already exists cannot be read back (services is forbidden)`)

	// Row "events | list (print_pod_warning_events=true), watch
	// (FF_PRINT_POD_EVENTS=true)", _index.md v19.3.0.
	if k.PrintPodWarningEvents == nil || *k.PrintPodWarningEvents {
		b.add("list", "", "events", ns, `the pod's warning events are not shown (only a debug line: Error retrieving events list: events is forbidden)`)
	}
	if podEvents {
		b.add("watch", "", "events", ns, jobFailed+`events is forbidden: User "…" cannot watch resource "events"`+checks.PrepareHint)
	}

	// Row "namespaces | create, delete (kubernetes.NamespacePerJob=true)",
	// _index.md v19.3.0; namespaces are cluster-scoped.
	if k.NamespacePerJob {
		b.add("create", "", "namespaces", "", setup("setting up build namespace", `failed to create namespace: namespaces is forbidden: User "…" cannot create resource "namespaces" in API group "" at the cluster scope`))
		b.add("delete", "", "namespaces", "", `ERROR: Error tearing down namespace: failed to delete namespace: namespaces "ci-job-…" is forbidden (one namespace left behind per job)`)
	}

	// Row "poddisruptionbudgets | create, get (pod_disruption_budget=true)",
	// _index.md v19.3.0; the Role YAML beside it puts them in apiGroups
	// ["policy"].
	if k.PodDisruptionBudget != nil && *k.PodDisruptionBudget {
		b.add("create", "policy", "poddisruptionbudgets", ns, setup("setting up build pod", `error creating PodDisruptionBudget: poddisruptionbudgets.policy is forbidden`))
		b.add("get", "policy", "poddisruptionbudgets", ns, setup("setting up build pod", `error creating PodDisruptionBudget: a budget that already exists cannot be read back (poddisruptionbudgets.policy is forbidden)`))
	}

	// Rows "apps/deployments | create, delete, get, list, update
	// (kubernetes.autoscaler)" and "scheduling.k8s.io/priorityclasses |
	// create, get (kubernetes.autoscaler)", _index.md v19.3.0. The pause pod
	// manager starts only with at least one [[runners.kubernetes.autoscaler.policy]]
	// (executors/kubernetes/autoscaler/provider.go ensureManager), uses the
	// configured namespace as it is (an empty one makes its list
	// cluster-wide and its other calls fail), and touches priority classes
	// only for its own "gitlab-runner-idle-capacity" class.
	if a := k.Autoscaler; a != nil && len(a.Policy) > 0 {
		dns := k.Namespace
		for _, verb := range []string{"create", "delete", "get", "list", "update"} {
			msg := `no pause pods: runner log "Failed to get pause pod deployment" / "Failed to apply desired deployment state": deployments.apps is forbidden`
			if verb == "list" || verb == "delete" {
				msg = `orphaned pause pod deployments stay: runner log "Failed to cleanup orphaned deployments": deployments.apps is forbidden`
			}
			b.add(verb, "apps", "deployments", dns, msg)
		}
		if pc := a.PausePodPriorityClassName; pc == "" || pc == "gitlab-runner-idle-capacity" {
			msg := `runner log "Failed to ensure PriorityClass exists": priorityclasses.scheduling.k8s.io is forbidden; without the class the pause pods are not created`
			b.add("get", "scheduling.k8s.io", "priorityclasses", "", msg)
			b.add("create", "scheduling.k8s.io", "priorityclasses", "", msg)
		}
	}

	return b.out
}

// accessList keeps the accesses in order and joins the reasons of an access
// that several rules need.
type accessList struct {
	out []Access
}

func (l *accessList) add(verb, group, resource, ns, when string) {
	for i := range l.out {
		a := &l.out[i]
		if a.Verb == verb && a.Group == group && a.Resource == resource && a.Namespace == ns {
			if !strings.Contains(a.WhenMissing, when) {
				a.WhenMissing += "; " + when
			}
			return
		}
	}
	l.out = append(l.out, Access{Verb: verb, Group: group, Resource: resource, Namespace: ns, WhenMissing: when})
}

// withNamespace is the runner as it runs in ns: -n/--namespace replaces
// its [runners.kubernetes] namespace (namespace_per_job makes its own).
func withNamespace(r *runnerconfig.Runner, ns string) *runnerconfig.Runner {
	k := runnerconfig.Kubernetes{}
	if r.Kubernetes != nil {
		k = *r.Kubernetes
	}
	if k.NamespacePerJob || k.Namespace == ns {
		return r
	}
	rr := *r
	k.Namespace = ns
	rr.Kubernetes = &k
	return &rr
}

// RunnerAccessReview is what the runner namespace's access reviews
// answered: Allowed says, for each access the runner needs (Want,
// NeededFor), whether it is allowed.
type RunnerAccessReview struct {
	Want    []Access
	Allowed map[Access]bool
	Err     error
}

// RunnerAccessReviewFact asks the access reviews of what the runner needs: it needs no
// answer of the self-review (the identity only words the finding), so,
// gated on api-auth rather than behind it, its rules review leaves with the
// self-review, in the same round trip.
var RunnerAccessReviewFact = &checks.Fact[*RunnerAccessReview]{
	ID:       "runner-access-review",
	Doc:      "the access reviews of the verbs a runner's jobs need in its namespace, asked once per target and namespace",
	Requires: []checks.Node{AfterAPIAuth, APIClientFact, configfacts.RunnerEntryFact, checks.Optional(OwnerAccessReviewFact)},
	Network:  true,
	Compute: func(p *checks.Pass) (*RunnerAccessReview, error) {
		api, r := APIClientFact.Get(p), configfacts.RunnerEntryFact.Get(p)
		rev := &RunnerAccessReview{Want: NeededFor(withNamespace(r.Runner, r.Namespace()))}
		if OwnerAccessReviewFact.Get(p).AllowsEverything() {
			// Cluster-admin, as the owner's review already answered: every
			// namespace allows it all, and no namespace is asked again.
			rev.Allowed = map[Access]bool{}
			for _, a := range rev.Want {
				rev.Allowed[a] = true
			}
			return rev, nil
		}
		ctx, cancel := context.WithTimeout(p.Context, 15*time.Second)
		defer cancel()
		rev.Allowed, rev.Err = Allowed(p, ctx, api, rev.Want)
		return rev, nil
	},
}
