package jobidentity

import (
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	psaapi "k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
)

// Verdict is the namespace's enforce level applied to the job pod, with
// the apiserver's own evaluator (k8s.io/pod-security-admission v0.37.2,
// the module the apiserver's PodSecurity admission uses).
type Verdict struct {
	Level   string // "restricted:latest"
	Allowed bool
	Detail  string // ForbiddenDetail(), as in "violates PodSecurity %q: %s"
	Problem string // an invalid label, evaluated as restricted
}

// evaluator is built on first use, not at start-up: it costs tens of
// milliseconds, every run would pay them before its first request, and
// only a namespace that enforces a level needs it.
var evaluator = sync.OnceValue(func() policy.Evaluator {
	e, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		panic(fmt.Sprintf("pod-security-admission evaluator: %v", err))
	}
	return e
})

// Evaluate reads the enforce labels as the admission does
// (api.PolicyToEvaluate, with the apiserver's default of privileged where
// no AdmissionConfiguration says otherwise) and evaluates the pod.
func Evaluate(nsLabels map[string]string, pod *corev1.Pod) Verdict {
	defaults := psaapi.Policy{Enforce: psaapi.LevelVersion{Level: psaapi.LevelPrivileged, Version: psaapi.LatestVersion()}}
	pol, errs := psaapi.PolicyToEvaluate(nsLabels, defaults)
	v := Verdict{Level: pol.Enforce.String()}
	if len(errs) > 0 {
		v.Problem = errs.ToAggregate().Error()
	}
	if pol.Enforce.Level == psaapi.LevelPrivileged {
		v.Allowed = true
		return v
	}
	res := policy.AggregateCheckResults(evaluator().EvaluatePod(pol.Enforce, &pod.ObjectMeta, &pod.Spec))
	v.Allowed, v.Detail = res.Allowed, res.ForbiddenDetail()
	return v
}
