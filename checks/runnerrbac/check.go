// Package runnerrbac checks each verb the Kubernetes executor needs in the
// runner namespace.
package runnerrbac

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/apiauth"
	"github.com/socialwebcomputer/doctor/checks/facts"
)

var Check = &checks.Check{
	ID:       "runner-rbac",
	Title:    "The runner may do what the Kubernetes executor does",
	Severity: checks.Error,
	Doc: checks.Doc{
		Cause: "The Kubernetes executor creates the build pod, its secrets and services, attaches and execs into it, " +
			"reads its log and events, and deletes it all. A credential without one of those verbs fails the job at " +
			"the step that needs it.",
		Symptom: "ERROR: Job failed (system failure): prepare environment: setting up build pod: pods is forbidden: User \"…\" cannot create resource \"pods\" in API group \"\" in the namespace \"gitlab-runner\"",
		Fix:     "Bind the runner's identity to a Role in the runner namespace with the missing verbs (the Deckhouse guide's code-runner Role lists them).",
		Verify:  "kubectl auth can-i create pods/exec -n gitlab-runner; kubectl auth can-i create secrets -n gitlab-runner",
	},
	Requires: []checks.Node{apiauth.Check, facts.APIClient, facts.Whoami, facts.Config},
	Network:  true,
	Run:      run,
}

// Needed is every access the Kubernetes executor uses, with the job error
// that its absence gives.
func Needed(ns string, perJob, autoscaler bool) []facts.Access {
	a := func(verb, res, when string) facts.Access {
		return facts.Access{Verb: verb, Resource: res, Namespace: ns, WhenMissing: when}
	}
	out := []facts.Access{
		a("create", "pods", "prepare environment: setting up build pod: pods is forbidden"),
		a("get", "pods", "waiting for pod running: pods \"runner-…\" is forbidden"),
		a("list", "pods", "the runner cannot find its build pods to clean up"),
		a("watch", "pods", "the runner cannot watch the build pod and falls back to polling, or fails waiting for it"),
		a("delete", "pods", "build pods are left behind after every job (cleanup: pods \"runner-…\" is forbidden)"),
		a("create", "pods/exec", "the job hangs or fails at the first script step: unable to upgrade connection: pods \"runner-…\" is forbidden"),
		a("create", "pods/attach", "the job fails attaching to the build container: pods \"runner-…\" is forbidden"),
		a("get", "pods/log", "the job's trace stays empty: pods \"runner-…\" is forbidden (get pods/log)"),
		a("create", "secrets", "prepare environment: setting up credentials: secrets is forbidden"),
		a("get", "secrets", "the runner cannot read back the job's registry credentials"),
		a("update", "secrets", "the runner cannot update the job's credentials secret"),
		a("delete", "secrets", "credential secrets are left behind after every job"),
		a("create", "services", "jobs with services: fails creating the service: services is forbidden"),
		a("get", "services", "jobs with services: fails reading the service back"),
		a("list", "events", "the runner cannot show why a pod is not starting (events is forbidden)"),
	}
	if perJob {
		out = append(out, facts.Access{Verb: "create", Resource: "namespaces", WhenMissing: "namespace_per_job: namespaces is forbidden, at every job"})
	}
	if autoscaler {
		out = append(out, facts.Access{Verb: "get", Group: "scheduling.k8s.io", Resource: "priorityclasses", WhenMissing: "pause pods: the runner cannot read the pause pods' PriorityClass"})
	}
	return out
}

func run(p *checks.Pass) error {
	api, id, cfg := facts.APIClient.Get(p), facts.Whoami.Get(p), facts.Config.Get(p)
	ns := facts.RunnerNamespace(cfg)
	perJob, autoscaler := false, false
	if r := facts.FirstKubernetesRunner(cfg); r != nil && r.Kubernetes != nil {
		perJob = r.Kubernetes.NamespacePerJob
		autoscaler = r.Kubernetes.Autoscaler != nil
	}
	want := Needed(ns, perJob, autoscaler)
	ctx, cancel := context.WithTimeout(p.Context, 15*time.Second)
	defer cancel()
	allowed, err := facts.Allowed(ctx, api, want)
	if err != nil {
		return fmt.Errorf("access review: %w", err)
	}
	var ev []checks.Evidence
	var missing []string
	for _, a := range want {
		if allowed[a] {
			continue
		}
		missing = append(missing, a.String())
		ev = append(ev, checks.Evidence{Source: "can-i " + a.String() + " -n " + ns, Detail: "no: " + a.WhenMissing + " (" + a.Forbidden(id.User) + ")"})
	}
	if len(missing) == 0 {
		return nil
	}
	p.Report(checks.Finding{
		Cause:    fmt.Sprintf("%s may not %s in namespace %q: jobs fail at the step that needs it.", orUnknown(id.User), strings.Join(missing, ", "), ns),
		Evidence: ev,
	})
	return nil
}

func orUnknown(user string) string {
	if user == "" {
		return "the kubeconfig's identity"
	}
	return user
}
