package namespacequota

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/socialwebcomputer/doctor/checks/facts/cluster"
	"github.com/socialwebcomputer/doctor/runnerconfig/jobpod"
)

// The apiserver's admission, in the order it runs for a pod create:
// LimitRanger fills defaults and enforces min/max
// (plugin/pkg/admission/limitranger/admission.go, kubernetes v1.37.2),
// then ResourceQuota demands an explicit value for every quota'd compute
// resource and refuses what would pass hard
// (k8s.io/apiserver pkg/admission/plugin/resourcequota/controller.go and
// pkg/quota/v1/evaluator/core/pods.go, v0.37.2).

// Refusal is one reason the apiserver would refuse the job pod, in its own
// words, and where the limit comes from.
type Refusal struct {
	Object  string // "resourcequota gitlab-runner/compute", "limitrange gitlab-runner/limits"
	Message string // as the apiserver words it
	Always  bool   // the pod can never fit, however empty the namespace
}

// ApplyDefaults is LimitRanger's defaulting of each container from the
// Container items' default and defaultRequest.
func ApplyDefaults(pod *corev1.Pod, ranges []corev1.LimitRange) {
	for _, lr := range ranges {
		for _, item := range lr.Spec.Limits {
			if item.Type != corev1.LimitTypeContainer {
				continue
			}
			for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
				for i := range cs {
					r := &cs[i].Resources
					if r.Limits == nil {
						r.Limits = corev1.ResourceList{}
					}
					if r.Requests == nil {
						r.Requests = corev1.ResourceList{}
					}
					for k, v := range item.Default {
						if _, ok := r.Limits[k]; !ok {
							r.Limits[k] = v.DeepCopy()
						}
					}
					for k, v := range item.DefaultRequest {
						if _, ok := r.Requests[k]; !ok {
							r.Requests[k] = v.DeepCopy()
						}
					}
				}
			}
		}
	}
}

// LimitRangeRefusals are the min and max LimitRanger enforces per
// Container and per Pod, worded as minConstraint/maxConstraint word them.
func LimitRangeRefusals(pod *corev1.Pod, ranges []corev1.LimitRange) []Refusal {
	var out []Refusal
	for _, lr := range ranges {
		obj := "limitrange " + lr.Namespace + "/" + lr.Name
		for _, item := range lr.Spec.Limits {
			switch item.Type {
			case corev1.LimitTypeContainer:
				for _, c := range jobpod.AllContainers(pod) {
					req := jobpod.EffectiveRequests(c)
					for _, msg := range bounds("Container", item, req, c.Resources.Limits) {
						out = append(out, Refusal{Object: obj, Message: msg + " (container " + c.Name + ")", Always: true})
					}
				}
			case corev1.LimitTypePod:
				for _, msg := range bounds("Pod", item, jobpod.Sum(pod, false), jobpod.Sum(pod, true)) {
					out = append(out, Refusal{Object: obj, Message: msg, Always: true})
				}
			}
		}
	}
	return out
}

func bounds(kind string, item corev1.LimitRangeItem, req, lim corev1.ResourceList) []string {
	var out []string
	for _, name := range sortedNames(item.Min) {
		min := item.Min[name]
		r, hasReq := req[name]
		l, hasLim := lim[name]
		switch {
		case !hasReq:
			out = append(out, fmt.Sprintf("minimum %s usage per %s is %s.  No request is specified", name, kind, min.String()))
		case r.Cmp(min) < 0:
			out = append(out, fmt.Sprintf("minimum %s usage per %s is %s, but request is %s", name, kind, min.String(), r.String()))
		case hasLim && l.Cmp(min) < 0:
			out = append(out, fmt.Sprintf("minimum %s usage per %s is %s, but limit is %s", name, kind, min.String(), l.String()))
		}
	}
	for _, name := range sortedNames(item.Max) {
		max := item.Max[name]
		r, hasReq := req[name]
		l, hasLim := lim[name]
		switch {
		case !hasLim:
			out = append(out, fmt.Sprintf("maximum %s usage per %s is %s.  No limit is specified", name, kind, max.String()))
		case l.Cmp(max) > 0:
			out = append(out, fmt.Sprintf("maximum %s usage per %s is %s, but limit is %s", name, kind, max.String(), l.String()))
		case hasReq && r.Cmp(max) > 0:
			out = append(out, fmt.Sprintf("maximum %s usage per %s is %s, but request is %s", name, kind, max.String(), r.String()))
		}
	}
	return out
}

// validationSet are the resources a quota makes every container state
// (pods.go validationSet, kubernetes v1.37.2).
var validationSet = map[corev1.ResourceName]bool{
	corev1.ResourceCPU: true, corev1.ResourceMemory: true,
	corev1.ResourceRequestsCPU: true, corev1.ResourceRequestsMemory: true,
	corev1.ResourceLimitsCPU: true, corev1.ResourceLimitsMemory: true,
}

// containerUsage is podComputeUsageHelper for one container.
func containerUsage(req, lim corev1.ResourceList) map[corev1.ResourceName]resource.Quantity {
	out := map[corev1.ResourceName]resource.Quantity{}
	if q, ok := req[corev1.ResourceCPU]; ok {
		out[corev1.ResourceCPU], out[corev1.ResourceRequestsCPU] = q, q
	}
	if q, ok := lim[corev1.ResourceCPU]; ok {
		out[corev1.ResourceLimitsCPU] = q
	}
	if q, ok := req[corev1.ResourceMemory]; ok {
		out[corev1.ResourceMemory], out[corev1.ResourceRequestsMemory] = q, q
	}
	if q, ok := lim[corev1.ResourceMemory]; ok {
		out[corev1.ResourceLimitsMemory] = q
	}
	if q, ok := req[corev1.ResourceEphemeralStorage]; ok {
		out[corev1.ResourceEphemeralStorage], out[corev1.ResourceRequestsEphemeralStorage] = q, q
	}
	if q, ok := lim[corev1.ResourceEphemeralStorage]; ok {
		out[corev1.ResourceLimitsEphemeralStorage] = q
	}
	return out
}

// Usage is what one job pod adds to a quota (PodUsageFunc): one pod, and
// its compute requests and limits.
func Usage(pod *corev1.Pod) map[corev1.ResourceName]resource.Quantity {
	out := containerUsage(jobpod.Sum(pod, false), jobpod.Sum(pod, true))
	out[corev1.ResourcePods] = resource.MustParse("1")
	out["count/pods"] = resource.MustParse("1")
	return out
}

// QuotaRefusals are "failed quota: … must specify …" and "exceeded quota:
// …", worded as the apiserver words them.
func QuotaRefusals(pod *corev1.Pod, quotas []corev1.ResourceQuota) []Refusal {
	var out []Refusal
	use := Usage(pod)
	for i := range quotas {
		q := &quotas[i]
		obj := "resourcequota " + q.Namespace + "/" + q.Name
		if len(q.Spec.Scopes) > 0 || q.Spec.ScopeSelector != nil {
			// A scoped quota (Terminating, BestEffort, PriorityClass) covers
			// some pods only; weighing the scope is not done here.
			continue
		}
		hard := cluster.Hard(q)
		if msg := mustSpecify(pod, hard); msg != "" {
			out = append(out, Refusal{Object: obj, Message: fmt.Sprintf("failed quota: %s: %s", q.Name, msg), Always: true})
		}
		var requested, used, limited []string
		always := false
		for _, name := range sortedNames(hard) {
			want, ok := use[name]
			if !ok {
				continue
			}
			h := hard[name]
			u := q.Status.Used[name]
			total := u.DeepCopy()
			total.Add(want)
			if total.Cmp(h) > 0 {
				requested = append(requested, string(name)+"="+want.String())
				used = append(used, string(name)+"="+qty(u))
				limited = append(limited, string(name)+"="+h.String())
				always = always || want.Cmp(h) > 0
			}
		}
		if len(requested) > 0 {
			out = append(out, Refusal{Object: obj, Always: always, Message: fmt.Sprintf("exceeded quota: %s, requested: %s, used: %s, limited: %s",
				q.Name, strings.Join(requested, ","), strings.Join(used, ","), strings.Join(limited, ","))})
		}
	}
	return out
}

// mustSpecify is the pod evaluator's Constraints: every container states
// each quota'd compute resource, or the pod is refused.
func mustSpecify(pod *corev1.Pod, hard corev1.ResourceList) string {
	if pod.Spec.Resources != nil && (len(pod.Spec.Resources.Requests) > 0 || len(pod.Spec.Resources.Limits) > 0) {
		return "" // pod-level resources replace the per-container demand
	}
	missing := map[corev1.ResourceName][]string{}
	for name := range hard {
		if !validationSet[name] {
			continue
		}
		for _, c := range jobpod.AllContainers(pod) {
			if _, ok := containerUsage(jobpod.EffectiveRequests(c), c.Resources.Limits)[name]; !ok {
				missing[name] = append(missing[name], c.Name)
			}
		}
	}
	if len(missing) == 0 {
		return ""
	}
	var parts []string
	for _, name := range sortedNames(toList(missing)) {
		cs := missing[name]
		sort.Strings(cs)
		parts = append(parts, fmt.Sprintf("%s for: %s", name, strings.Join(cs, ",")))
	}
	return "must specify " + strings.Join(parts, "; ")
}

func toList(m map[corev1.ResourceName][]string) corev1.ResourceList {
	out := corev1.ResourceList{}
	for k := range m {
		out[k] = resource.Quantity{}
	}
	return out
}

func sortedNames(l corev1.ResourceList) []corev1.ResourceName {
	out := make([]corev1.ResourceName, 0, len(l))
	for k := range l {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func qty(q resource.Quantity) string {
	if q.IsZero() {
		return "0"
	}
	return q.String()
}

// Room is how many more job pods like pod the tightest unscoped quota
// admits now, and which quota and resource bind; ok is false when no quota
// counts what the pod asks.
func Room(pod *corev1.Pod, quotas []corev1.ResourceQuota) (n int64, quota string, res corev1.ResourceName, ok bool) {
	use := Usage(pod)
	for i := range quotas {
		q := &quotas[i]
		if len(q.Spec.Scopes) > 0 || q.Spec.ScopeSelector != nil {
			continue // as QuotaRefusals: a scope covers some pods only
		}
		hard := cluster.Hard(q)
		for _, name := range sortedNames(hard) {
			want, asked := use[name]
			if !asked || want.Sign() <= 0 {
				continue
			}
			h, u := hard[name], q.Status.Used[name]
			left := h.MilliValue() - u.MilliValue()
			k := int64(0)
			if left > 0 {
				k = left / want.MilliValue()
			}
			if !ok || k < n {
				n, quota, res, ok = k, q.Name, name, true
			}
		}
	}
	return n, quota, res, ok
}
