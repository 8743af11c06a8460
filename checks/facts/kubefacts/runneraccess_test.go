package kubefacts

import (
	"slices"
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/runnerconfig"
)

func ptr[T any](v T) *T { return &v }

// keys renders accesses as "verb resource[.group]@namespace", sorted.
func keys(t *testing.T, r *runnerconfig.Runner) []string {
	t.Helper()
	var out []string
	seen := map[string]bool{}
	for _, a := range NeededFor(r) {
		k := a.String() + "@" + a.Namespace
		if seen[k] {
			t.Errorf("%s listed twice", k)
		}
		seen[k] = true
		if a.WhenMissing == "" {
			t.Errorf("%s has no WhenMissing", k)
		}
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func at(ns string, accesses ...string) []string {
	out := make([]string, len(accesses))
	for i, a := range accesses {
		out[i] = a + "@" + ns
	}
	return out
}

var (
	basePods = []string{
		"create pods", "get pods", "delete pods", "list pods", "watch pods",
		"create pods/exec", "delete pods/exec", "get pods/exec", "patch pods/exec",
		"create secrets", "get secrets", "update secrets", "delete secrets",
		"create services", "get services",
	}
	attachVerbs = []string{"create pods/attach", "delete pods/attach", "get pods/attach", "patch pods/attach"}
	eventsList  = []string{"list events"}
	podLogBoth  = []string{"get pods/log", "list pods/log"}
)

func join(parts ...[]string) []string {
	var out []string
	for _, p := range parts {
		out = append(out, p...)
	}
	slices.Sort(out)
	return out
}

func k8s(k runnerconfig.Kubernetes, mut ...func(*runnerconfig.Runner)) *runnerconfig.Runner {
	r := &runnerconfig.Runner{Executor: "kubernetes", Kubernetes: &k}
	for _, m := range mut {
		m(r)
	}
	return r
}

func flags(kv map[string]bool) func(*runnerconfig.Runner) {
	return func(r *runnerconfig.Runner) { r.FeatureFlags = kv }
}

func env(e ...string) func(*runnerconfig.Runner) {
	return func(r *runnerconfig.Runner) { r.Environment = e }
}

func TestNeededFor(t *testing.T) {
	const ns = "gitlab-runner"
	nsK := runnerconfig.Kubernetes{Namespace: ns}
	policy := []runnerconfig.AutoscalerPolicy{{IdleCount: 2}}
	pauseDeploy := []string{"create deployments.apps", "delete deployments.apps", "get deployments.apps", "list deployments.apps", "update deployments.apps"}
	priorityClasses := at("", "create priorityclasses.scheduling.k8s.io", "get priorityclasses.scheduling.k8s.io")

	tests := []struct {
		name string
		r    *runnerconfig.Runner
		want []string
	}{
		{"nil runner: defaults in namespace default", nil,
			join(at("default", basePods...), at("default", attachVerbs...), at("default", eventsList...))},
		{"no [runners.kubernetes]", &runnerconfig.Runner{Executor: "kubernetes"},
			join(at("default", basePods...), at("default", attachVerbs...), at("default", eventsList...))},
		{"defaults: attach strategy, warning events", k8s(nsK),
			join(at(ns, basePods...), at(ns, attachVerbs...), at(ns, eventsList...))},

		{"legacy strategy from [runners.feature_flags]: no pods/attach",
			k8s(nsK, flags(map[string]bool{runnerconfig.FFUseLegacyKubernetesExecutionStrategy: true})),
			join(at(ns, basePods...), at(ns, eventsList...))},
		{"legacy strategy from environment: no pods/attach",
			k8s(nsK, env("FF_USE_LEGACY_KUBERNETES_EXECUTION_STRATEGY=true")),
			join(at(ns, basePods...), at(ns, eventsList...))},
		{"[runners.feature_flags] false beats environment true",
			k8s(nsK, flags(map[string]bool{runnerconfig.FFUseLegacyKubernetesExecutionStrategy: false}), env("FF_USE_LEGACY_KUBERNETES_EXECUTION_STRATEGY=true")),
			join(at(ns, basePods...), at(ns, attachVerbs...), at(ns, eventsList...))},
		{"unparsable environment value keeps the default (attach)",
			k8s(nsK, env("FF_USE_LEGACY_KUBERNETES_EXECUTION_STRATEGY=yes")),
			join(at(ns, basePods...), at(ns, attachVerbs...), at(ns, eventsList...))},

		{"honor entrypoint: pods/log get and list",
			k8s(nsK, flags(map[string]bool{runnerconfig.FFKubernetesHonorEntrypoint: true})),
			join(at(ns, basePods...), at(ns, attachVerbs...), at(ns, eventsList...), at(ns, podLogBoth...))},
		{"honor entrypoint with legacy strategy: pods/log, no pods/attach",
			k8s(nsK, flags(map[string]bool{runnerconfig.FFKubernetesHonorEntrypoint: true, runnerconfig.FFUseLegacyKubernetesExecutionStrategy: true})),
			join(at(ns, basePods...), at(ns, eventsList...), at(ns, podLogBoth...))},
		{"wait for pod reachable: pods/log get only",
			k8s(nsK, env("FF_WAIT_FOR_POD_TO_BE_REACHABLE=1")),
			join(at(ns, basePods...), at(ns, attachVerbs...), at(ns, eventsList...), at(ns, "get pods/log"))},
		{"wait for pod reachable with legacy strategy: still pods/log get",
			k8s(nsK, flags(map[string]bool{runnerconfig.FFWaitForPodToBeReachable: true, runnerconfig.FFUseLegacyKubernetesExecutionStrategy: true})),
			join(at(ns, basePods...), at(ns, eventsList...), at(ns, "get pods/log"))},

		{"CI_DEBUG_SERVICES in environment, attach strategy: pods/log get and list",
			k8s(nsK, env("CI_DEBUG_SERVICES=true")),
			join(at(ns, basePods...), at(ns, attachVerbs...), at(ns, eventsList...), at(ns, podLogBoth...))},
		{"CI_DEBUG_SERVICES with legacy strategy: no pods/log",
			k8s(nsK, env("CI_DEBUG_SERVICES=true", "FF_USE_LEGACY_KUBERNETES_EXECUTION_STRATEGY=true")),
			join(at(ns, basePods...), at(ns, eventsList...))},
		{"CI_DEBUG_SERVICES with debug_trace_disabled: no pods/log",
			k8s(nsK, env("CI_DEBUG_SERVICES=true"), func(r *runnerconfig.Runner) { r.DebugTraceDisabled = true }),
			join(at(ns, basePods...), at(ns, attachVerbs...), at(ns, eventsList...))},
		{"CI_DEBUG_SERVICES=false: no pods/log",
			k8s(nsK, env("CI_DEBUG_SERVICES=false")),
			join(at(ns, basePods...), at(ns, attachVerbs...), at(ns, eventsList...))},

		{"service_account with the resource check on: serviceaccounts get",
			k8s(runnerconfig.Kubernetes{Namespace: ns, ServiceAccount: "builder", ResourceAvailabilityCheckMaxAttempts: 5}),
			join(at(ns, basePods...), at(ns, attachVerbs...), at(ns, eventsList...), at(ns, "get serviceaccounts"))},
		{"service_account with a negative attempt count (default 5): serviceaccounts get",
			k8s(runnerconfig.Kubernetes{Namespace: ns, ServiceAccount: "builder", ResourceAvailabilityCheckMaxAttempts: -1}),
			join(at(ns, basePods...), at(ns, attachVerbs...), at(ns, eventsList...), at(ns, "get serviceaccounts"))},
		{"service_account with the resource check off (0): no serviceaccounts",
			k8s(runnerconfig.Kubernetes{Namespace: ns, ServiceAccount: "builder"}),
			join(at(ns, basePods...), at(ns, attachVerbs...), at(ns, eventsList...))},
		{"resource check on without service_account: no serviceaccounts",
			k8s(runnerconfig.Kubernetes{Namespace: ns, ResourceAvailabilityCheckMaxAttempts: 5}),
			join(at(ns, basePods...), at(ns, attachVerbs...), at(ns, eventsList...))},

		{"namespace_per_job: cluster-wide job access and namespaces create/delete",
			k8s(runnerconfig.Kubernetes{Namespace: ns, NamespacePerJob: true}),
			join(at("", basePods...), at("", attachVerbs...), at("", eventsList...), at("", "create namespaces", "delete namespaces"))},

		{"pause pods: deployments in the namespace, own priority class",
			k8s(runnerconfig.Kubernetes{Namespace: ns, Autoscaler: &runnerconfig.KubernetesAutoscaler{Policy: policy}}),
			join(at(ns, basePods...), at(ns, attachVerbs...), at(ns, eventsList...), at(ns, pauseDeploy...), priorityClasses)},
		{"pause pods naming the default class: priority classes too",
			k8s(runnerconfig.Kubernetes{Namespace: ns, Autoscaler: &runnerconfig.KubernetesAutoscaler{Policy: policy, PausePodPriorityClassName: "gitlab-runner-idle-capacity"}}),
			join(at(ns, basePods...), at(ns, attachVerbs...), at(ns, eventsList...), at(ns, pauseDeploy...), priorityClasses)},
		{"pause pods with a custom priority class: no priority classes",
			k8s(runnerconfig.Kubernetes{Namespace: ns, Autoscaler: &runnerconfig.KubernetesAutoscaler{Policy: policy, PausePodPriorityClassName: "pause-pods"}}),
			join(at(ns, basePods...), at(ns, attachVerbs...), at(ns, eventsList...), at(ns, pauseDeploy...))},
		{"[runners.kubernetes.autoscaler] without a policy: no pause pods",
			k8s(runnerconfig.Kubernetes{Namespace: ns, Autoscaler: &runnerconfig.KubernetesAutoscaler{MaxPausePods: 3}}),
			join(at(ns, basePods...), at(ns, attachVerbs...), at(ns, eventsList...))},
		{"pause pods with an empty namespace: deployments at cluster scope, pods in default",
			k8s(runnerconfig.Kubernetes{Autoscaler: &runnerconfig.KubernetesAutoscaler{Policy: policy}}),
			join(at("default", basePods...), at("default", attachVerbs...), at("default", eventsList...), at("", pauseDeploy...), priorityClasses)},

		{"pod_disruption_budget = true: poddisruptionbudgets.policy create and get",
			k8s(runnerconfig.Kubernetes{Namespace: ns, PodDisruptionBudget: ptr(true)}),
			join(at(ns, basePods...), at(ns, attachVerbs...), at(ns, eventsList...), at(ns, "create poddisruptionbudgets.policy", "get poddisruptionbudgets.policy"))},
		{"pod_disruption_budget = false: none",
			k8s(runnerconfig.Kubernetes{Namespace: ns, PodDisruptionBudget: ptr(false)}),
			join(at(ns, basePods...), at(ns, attachVerbs...), at(ns, eventsList...))},

		{"print_pod_warning_events = false: no events list",
			k8s(runnerconfig.Kubernetes{Namespace: ns, PrintPodWarningEvents: ptr(false)}),
			join(at(ns, basePods...), at(ns, attachVerbs...))},
		{"FF_PRINT_POD_EVENTS: events watch",
			k8s(nsK, flags(map[string]bool{runnerconfig.FFPrintPodEvents: true})),
			join(at(ns, basePods...), at(ns, attachVerbs...), at(ns, "list events", "watch events"))},

		{"everything at once",
			k8s(runnerconfig.Kubernetes{
				Namespace: ns, NamespacePerJob: true, ServiceAccount: "builder", ResourceAvailabilityCheckMaxAttempts: 5,
				PodDisruptionBudget: ptr(true), Autoscaler: &runnerconfig.KubernetesAutoscaler{Policy: policy},
			}, flags(map[string]bool{runnerconfig.FFKubernetesHonorEntrypoint: true, runnerconfig.FFWaitForPodToBeReachable: true, runnerconfig.FFPrintPodEvents: true}), env("CI_DEBUG_SERVICES=true")),
			join(at("", basePods...), at("", attachVerbs...), at("", "list events", "watch events"), at("", podLogBoth...),
				at("", "get serviceaccounts", "create namespaces", "delete namespaces",
					"create poddisruptionbudgets.policy", "get poddisruptionbudgets.policy"),
				at(ns, pauseDeploy...), priorityClasses)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := keys(t, tc.r)
			if !slices.Equal(got, tc.want) {
				t.Errorf("got\n  %s\nwant\n  %s\nmissing %v, extra %v", strings.Join(got, "\n  "), strings.Join(tc.want, "\n  "),
					diff(tc.want, got), diff(got, tc.want))
			}
		})
	}
}

func diff(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

func whenMissing(t *testing.T, r *runnerconfig.Runner, key string) string {
	t.Helper()
	for _, a := range NeededFor(r) {
		if a.String()+"@"+a.Namespace == key {
			return a.WhenMissing
		}
	}
	t.Fatalf("%s not needed", key)
	return ""
}

func TestNeededForWhenMissingFollowsTheStrategy(t *testing.T) {
	attach := k8s(runnerconfig.Kubernetes{Namespace: "ci"})
	legacy := k8s(runnerconfig.Kubernetes{Namespace: "ci"}, flags(map[string]bool{runnerconfig.FFUseLegacyKubernetesExecutionStrategy: true}))

	a := whenMissing(t, attach, "create pods@ci")
	if !strings.HasPrefix(a, "ERROR: Job failed (system failure): prepare environment: setting up build pod: pods is forbidden") ||
		!strings.HasSuffix(a, ". Check https://docs.gitlab.com/runner/shells/#shell-profile-loading for more information") {
		t.Errorf("attach create pods: %q", a)
	}
	l := whenMissing(t, legacy, "create pods@ci")
	if !strings.HasPrefix(l, "ERROR: Job failed (system failure): prepare environment: pods is forbidden") {
		t.Errorf("legacy create pods: %q", l)
	}
	if s := whenMissing(t, attach, "create secrets@ci"); !strings.Contains(s, "prepare environment: setting up credentials: secrets is forbidden") {
		t.Errorf("attach create secrets: %q", s)
	}
}

func TestNeededForJoinsReasons(t *testing.T) {
	r := k8s(runnerconfig.Kubernetes{Namespace: "ci"}, flags(map[string]bool{runnerconfig.FFKubernetesHonorEntrypoint: true}))
	w := whenMissing(t, r, "watch pods@ci")
	if !strings.Contains(w, "won't use informers") || !strings.Contains(w, "failed to open log stream for container build") {
		t.Errorf("watch pods with honor entrypoint: %q", w)
	}
	sa := whenMissing(t, k8s(runnerconfig.Kubernetes{Namespace: "ci", ServiceAccount: "builder", ResourceAvailabilityCheckMaxAttempts: 5}), "get serviceaccounts@ci")
	if !strings.Contains(sa, "Timed out while waiting for ServiceAccount/builder to be present in the cluster") {
		t.Errorf("get serviceaccounts: %q", sa)
	}
}
