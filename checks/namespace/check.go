// Package namespace checks that the runner namespace exists and is usable.
package namespace

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts/cluster"
	"github.com/socialwebcomputer/doctor/checks/facts/configfacts"
	"github.com/socialwebcomputer/doctor/checks/facts/kubefacts"
	"github.com/socialwebcomputer/doctor/internal/fixcode"
)

var Check = &checks.Check{
	ID:       "namespace",
	Title:    "The runner namespace exists",
	Severity: checks.Error,
	Doc: checks.Doc{
		Cause: "The runner does not create its namespace: setupBuildNamespace returns at once unless namespace_per_job " +
			"= true, so with the default the configured namespace has to exist. The user applies it once; a " +
			"namespace being deleted (Terminating) refuses new pods just the same.",
		Symptom: "ERROR: Job failed (system failure): prepare environment: setting up build pod: namespaces \"gitlab-runner\" not found" + checks.PrepareHint,
		Fix:     checks.Target(checks.Say("Create the namespace in the runner's cluster:"), checks.Sh(checks.CatalogKubectl+` create namespace "$RUNNER_NAMESPACE"`)),
		Verify:  checks.Target(checks.Sh(checks.CatalogKubectl + ` get ns "$RUNNER_NAMESPACE"`)),
		Patterns: []string{
			// k8s.io/apimachinery pkg/api/errors/errors.go, v0.37.2: NewNotFound's "%s %q not found"
			// for the namespaces resource, behind executors/kubernetes/kubernetes.go's
			// "setting up build pod: %w" (v19.3.0).
			"namespaces \"*\" not found",
		},
	},
	Requires:  []checks.Node{kubefacts.AfterAPIAuth, kubefacts.APIClientFact, configfacts.RunnerEntryFact, configfacts.ConfigFact},
	Executors: []string{checks.Kubernetes},
	Network:   true,
	Run:       run,
}

func run(p *checks.Pass) error {
	r := configfacts.RunnerEntryFact.Get(p)
	if r.Kube().NamespacePerJob {
		return checks.Skip("namespace_per_job is set: the runner creates a namespace per job")
	}
	ns := r.Namespace()
	if err := fixcode.NamespaceName(ns); err != nil {
		// The apiserver would refuse it in the request's path; a fix
		// carrying it would carry whatever it holds.
		p.Report(checks.Finding{
			Cause: fmt.Sprintf("%s: config.toml's namespace %q is %v: the runner cannot create its job pods there, and every job fails at prepare.",
				r.Label(), ns, err),
			Evidence: []checks.Evidence{namespaceAt(r)},
			Fix:      checks.Text("Set [runners.kubernetes] namespace to the name of the runner's namespace: lower-case letters, digits and '-', at most 63 characters."),
		})
		return nil
	}
	ctx, cancel := context.WithTimeout(p.Context, p.Env.APITimeout())
	defer cancel()
	obj, src, err := cluster.NamespaceObject(p, ctx, kubefacts.APIClientFact.Get(p), ns, cluster.AcrossNamespaces(p))
	switch {
	case apierrors.IsNotFound(err):
		p.Report(checks.Finding{
			Cause:    fmt.Sprintf("%s: the namespace %q does not exist: every job fails with `namespaces %q not found`. The runner does not create it.", r.Label(), ns, ns),
			Evidence: []checks.Evidence{{Source: src, Detail: "404: " + err.Error()}},
			Fix: checks.Steps{checks.Say("Create it in the runner's cluster:"),
				checks.Commands(createNamespace(p, ns))},
		})
	case apierrors.IsForbidden(err):
		// The authorizer files GET /api/v1/namespaces/<ns> under that
		// namespace: a Role there can grant it.
		return kubefacts.LacksRBAC(kubefacts.Access{Verb: "get", Resource: "namespaces", Namespace: ns}, err)
	case err != nil:
		return fmt.Errorf("%s: %w", src, err)
	case obj.Status.Phase == corev1.NamespaceTerminating:
		p.Report(checks.Finding{
			Cause:    fmt.Sprintf("%s: the namespace %q is Terminating: new job pods are refused until it is gone, then every job fails with `namespaces %q not found`.", r.Label(), ns, ns),
			Evidence: []checks.Evidence{{Source: src, Detail: fmt.Sprintf("status.phase=Terminating since %s", obj.DeletionTimestamp)}},
			Fix: checks.Steps{
				checks.Say("Wait for the deletion to finish (or clear its stuck finalizers); what still holds it:"),
				checks.Commands(kubefacts.APIClientFact.Get(p).Kubectl().Arg("get", "namespace", ns, "-o", "jsonpath={.status.conditions}")),
				checks.Say("Then create it again:"),
				checks.Commands(createNamespace(p, ns)),
			},
		})
	}
	return nil
}

// createNamespace is the command that creates namespace ns with kubectl,
// a command aimed at the runner's cluster.
func createNamespace(p *checks.Pass, ns string) fixcode.Cmd {
	return kubefacts.APIClientFact.Get(p).Kubectl().Arg("create", "namespace", ns)
}

// namespaceAt is the evidence of where config.toml sets the namespace.
func namespaceAt(r *configfacts.RunnerEntry) checks.Evidence {
	src, text := r.At("kubernetes", "namespace")
	if text == "" {
		return checks.Evidence{Source: "--namespace", Detail: "given to doctor"}
	}
	return checks.Evidence{Source: src, Detail: text}
}
