// Package runnerrbac checks each verb the Kubernetes executor needs in the
// runner namespace.
package runnerrbac

import (
	"fmt"
	"strings"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts/configfacts"
	"github.com/socialwebcomputer/doctor/checks/facts/kubefacts"
)

// runnerRequests are the requests of the runner's RBAC table (verb and
// resource as the apiserver words a refusal: "cannot %s resource %q").
var runnerRequests = []string{
	`create resource "pods"`, `delete resource "pods"`, `get resource "pods"`, `watch resource "pods"`,
	`create resource "pods/exec"`, `get resource "pods/exec"`, `create resource "pods/attach"`, `get resource "pods/attach"`,
	`patch resource "pods/attach"`, `get resource "pods/log"`, `create resource "secrets"`, `delete resource "secrets"`,
	`get resource "secrets"`, `update resource "secrets"`, `get resource "serviceaccounts"`, `create resource "services"`,
	`list resource "events"`, `watch resource "events"`,
}

var Check = &checks.Check{
	ID:       "runner-rbac",
	Title:    "The runner may do what the Kubernetes executor does",
	Severity: checks.Error,
	Doc: checks.Doc{
		Cause: "The Kubernetes executor creates the build pod, its secrets and services, attaches or execs into it, " +
			"reads its log and events, and deletes it all. Which verbs it needs follows its settings and feature " +
			"flags, as the RBAC table of the runner's Kubernetes executor docs gives them: pods/attach only with the " +
			"attach strategy (FF_USE_LEGACY_KUBERNETES_EXECUTION_STRATEGY false, the default); pods/log only with " +
			"FF_KUBERNETES_HONOR_ENTRYPOINT, FF_WAIT_FOR_POD_TO_BE_REACHABLE or CI_DEBUG_SERVICES; serviceaccounts " +
			"get when service_account is set; apps/deployments for pause pods; policy/poddisruptionbudgets with " +
			"pod_disruption_budget. A credential without one fails the job at the step that needs it.",
		Symptom: "ERROR: Job failed (system failure): prepare environment: setting up build pod: pods is forbidden: User \"…\" cannot create resource \"pods\" in API group \"\" in the namespace \"gitlab-runner\"" + checks.PrepareHint,
		Fix: checks.Text("An administrator of the runner's cluster grants the missing verbs with a Role and a RoleBinding in the runner namespace " +
			"(the Deckhouse guide's code-runner Role lists them); doctor run prints both for the runner's identity, behind a guard that refuses another cluster."),
		Verify: checks.Target(checks.Sh(checks.CatalogKubectl + ` auth can-i create pods/exec -n "$RUNNER_NAMESPACE"
` + checks.CatalogKubectl + ` auth can-i create secrets -n "$RUNNER_NAMESPACE"`)),
		Patterns: []string{
			// The runner's own calls: its step wrappers before the apiserver's Forbidden
			// (executors/kubernetes/kubernetes.go, v15.0.0 to v19.3.0: "setting up build pod: %w",
			// "setting up credentials: %w", …, inside common/build.go's "prepare environment: %w";
			// docs/install/kubernetes_troubleshooting.md, v19.3.0: "Job failed (system failure):
			// secrets is forbidden: User …"; "Error cleaning up pod: %v", kubernetes.go). The same
			// Forbidden printed by a tool in a job is job-identity's (its Doc.Ambiguous).
			"prepare environment: *is forbidden: User \"",
			"Job failed (system failure): *is forbidden: User \"",
			"Error cleaning up pod: *is forbidden: User \"",
		},
		Signs: []checks.Sign{
			// The apiserver's refusal of a request only the runner makes (its RBAC table,
			// docs/executors/kubernetes/_index.md "Configure runner API permissions", v19.3.0: pods,
			// pods/exec, pods/attach, pods/log, secrets, serviceaccounts, services, events), quoted
			// without the runner's step in front (docs/install/kubernetes.md, v13.12.0; a paste
			// wrapped over three lines, gitlab-runner commit 9f0e1be5), and in the apiserver's
			// wording before 1.14 ("cannot create secrets in the namespace"). The same refusal from
			// kubectl in a job (Error from server, from server for) is job-identity's.
			{Core: "is forbidden: User \"", Reason: runnerRequests, Unless: []string{"Error from server (", "from server for: "}},
		},
	},
	Requires:  []checks.Node{checks.Ref("api-auth"), kubefacts.RunnerAccessReviewFact, kubefacts.IdentityFact, configfacts.RunnerEntryFact},
	Executors: []string{checks.Kubernetes},
	Network:   true,
	Run:       run,
}

func run(p *checks.Pass) error {
	id, r, rev := kubefacts.IdentityFact.Get(p), configfacts.RunnerEntryFact.Get(p), kubefacts.RunnerAccessReviewFact.Get(p)
	ns := r.Namespace()
	want, allowed := rev.Want, rev.Allowed
	if rev.Err != nil {
		return fmt.Errorf("access review: %w", rev.Err)
	}
	var ev []checks.Evidence
	var missing []string
	var lacking []kubefacts.Access
	for _, a := range want {
		if allowed[a] {
			continue
		}
		missing = append(missing, a.String())
		lacking = append(lacking, a)
		ev = append(ev, checks.Evidence{Source: "can-i " + a.String() + " -n " + ns, Detail: "no: " + a.WhenMissing + " (" + a.Forbidden(id.User) + ")"})
	}
	if len(missing) == 0 {
		return nil
	}
	cause := fmt.Sprintf("%s may not %s in namespace %q: jobs fail at the step that needs it.", orUnknown(id.User), strings.Join(missing, ", "), ns)
	if own := serviceAccountNamespace(id.User); own != "" && own != ns {
		// A runner Deployment's Role lives in its own namespace (the
		// guide's pattern); a service account cannot read namespaces, so
		// whether ns exists at all is unknown to it.
		cause += fmt.Sprintf(" The runner's service account belongs to namespace %q, where a runner Deployment's Role lives: is %q, the namespace config.toml sends jobs to, missing or misspelt?", own, ns)
	}
	p.Report(checks.Finding{
		Cause:    cause,
		Evidence: ev,
		Fix:      grantFix(id.User, id.Server, ns, lacking),
	})
	return nil
}

// serviceAccountNamespace is the namespace of a service account's user
// name ("system:serviceaccount:NS:NAME"), "" for other users.
func serviceAccountNamespace(user string) string {
	rest, ok := strings.CutPrefix(user, "system:serviceaccount:")
	if !ok {
		return ""
	}
	ns, _, _ := strings.Cut(rest, ":")
	return ns
}

func orUnknown(user string) string {
	if user == "" {
		return "the kubeconfig's identity"
	}
	return user
}
