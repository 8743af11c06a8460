// Package jobidentity checks that everything the job pod references exists
// in the runner namespace, and that the pod the runner builds passes the
// namespace's Pod Security level: a missing service account or a pod the
// level forbids is refused by the apiserver before any container starts.
package jobidentity

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"

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
	ID:       "job-identity",
	Title:    "The job pod's service account, pull secrets and security context are accepted in the runner namespace",
	Severity: checks.Error,
	Doc: checks.Doc{
		Cause: "The job pod names a service_account and image_pull_secrets that must exist in the runner namespace, " +
			"and carries pod_security_context and the *_container_security_context tables that the namespace's Pod " +
			"Security level (pod-security.kubernetes.io/enforce) must allow. A missing service account makes the " +
			"apiserver refuse the pod; a missing pull secret leaves the node without credentials for a private " +
			"image; a level the pod violates refuses it. (With resource_availability_check_max_attempts > 0 the " +
			"runner waits for the service account and secrets itself and then times out.)",
		// k8s plugin/pkg/admission/serviceaccount/admission.go (kubernetes v1.37.2): "error looking up service account %s/%s: %w";
		// k8s.io/pod-security-admission admission/admission.go, v0.37.2: "violates PodSecurity %q: %s";
		// executors/kubernetes/kubernetes.go, v19.3.0: "Timed out while waiting for %s/%s to be present in the cluster";
		// pkg/kubelet/kubelet.go (kubernetes v1.37.2): "Unable to retrieve some image pull secrets (%s); ..."
		Symptom: "ERROR: Job failed (system failure): prepare environment: setting up build pod: pods \"runner-…\" is forbidden: " +
			"error looking up service account gitlab-runner/ci: serviceaccount \"ci\" not found" + checks.PrepareHint + "; or … is forbidden: violates " +
			"PodSecurity \"restricted:latest\": allowPrivilegeEscalation != false (…); or Timed out while waiting for " +
			"ServiceAccount/ci to be present in the cluster",
		Fix: checks.Target(
			checks.Say("Create the service account [runners.kubernetes] service_account names (SA), in the runner's namespace, or correct the name in config.toml:"),
			checks.Sh("SA=ci\n"+checks.CatalogKubectl+` create serviceaccount -n "$RUNNER_NAMESPACE" "$SA"`),
			checks.Say("Create each pull secret image_pull_secrets names (SECRET), with the registry's address and a user and token it accepts (read asks for the token):"),
			checks.Sh("SECRET=registry\nREGISTRY=registry.example.com\nREGISTRY_USER=ci\nread -rs REGISTRY_TOKEN\n"+checks.CatalogKubectl+
				` create secret docker-registry -n "$RUNNER_NAMESPACE" "$SECRET" --docker-server="$REGISTRY" --docker-username="$REGISTRY_USER" --docker-password="$REGISTRY_TOKEN"`),
			checks.Say("Set the security context tables to what the namespace's Pod Security level demands, or label the namespace with a level the jobs can meet.")),
		Verify: checks.Target(checks.Sh(checks.CatalogKubectl + ` get serviceaccount,secret -n "$RUNNER_NAMESPACE"
` + checks.CatalogKubectl + ` label --dry-run=server --overwrite ns "$RUNNER_NAMESPACE" pod-security.kubernetes.io/enforce=restricted`)),
		Patterns: []string{
			// plugin/pkg/admission/serviceaccount/admission.go, kubernetes v1.37.2
			"is forbidden: error looking up service account */*: serviceaccount \"*\" not found",
			// k8s.io/pod-security-admission admission/admission.go, v0.37.2
			"is forbidden: violates PodSecurity \"*\": *",
			// executors/kubernetes/kubernetes.go, v19.3.0 (resourceCheckError)
			"Timed out while waiting for ServiceAccount/* to be present in the cluster",
			"Timed out while waiting for ImagePullSecret/* to be present in the cluster",
			// pkg/kubelet/kubelet.go, kubernetes v1.37.2, printed by the runner as a pod warning event
			"Unable to retrieve some image pull secrets (*); attempting to pull the image may not succeed.",
			// The apiserver's Forbidden (k8s.io/apiserver responsewriters/errors.go, v0.37.2) as a tool
			// in the job's script prints it: the job pod's service account (or a kubeconfig GitLab
			// gave the job) lacks a Role. kubectl (k8s.io/kubectl cmd/util/helpers.go: "Error from
			// server (%s): %s"; an old kubectl apply: "from server for: %q: %v", lachie83/k8s-kubectl#67),
			// helm's secrets storage driver (maddevsio/aws-eks-base#258), werf's lock manager
			// (werf/werf#4409), and the GitLab agent's CI job impersonation ("gitlab:ci_job:%d").
			"Error from server (Forbidden): *is forbidden: User \"",
			"from server for: \"*\": *is forbidden: User \"",
			"Error: query: failed to query with labels: *is forbidden: User \"",
			"Error: unable to create lock manager: *is forbidden: User \"",
			"is forbidden: User \"gitlab:ci_job:",
		},
		Ambiguous: []checks.Ambiguous{
			// k8s.io/apiserver responsewriters/errors.go, v0.37.2: "User %q cannot %s resource %q in
			// API group %q in the namespace %q" inside apimachinery's "%s %q is forbidden: %v": the same
			// text for every caller (job-identity.md). A line a terminal wrapped after "User"
			// (terraform, StatCan/aaw#2048) or its continuation keeps only part of it.
			{Pattern: "is forbidden: User", Or: []string{"runner-rbac", "owner-rbac", "dvp-rbac"}, Tell: "who made the call: a runner step before it (`prepare environment: setting up …:`, `Job failed (system failure):`, `Error cleaning up pod:`) is the runner's own identity (runner-rbac; owner-rbac for who may grant it); a tool's prefix on a line of the job's script (kubectl's `Error from server (Forbidden):`, helm's `Error:`, werf, terraform's `│`), a resource the runner never uses (configmaps, deployments without the autoscaler, a CRD) or a namespace other than the runner's is the job pod's service account (job-identity: grant it a Role in the namespace the line names); a fleeting plugin's virtualization.deckhouse.io resource is dvp-rbac"},
			{Pattern: "cannot * resource \"*\" in API group \"", Or: []string{"runner-rbac", "owner-rbac", "dvp-rbac"}, Tell: "who made the call: a runner step before it (`prepare environment: setting up …:`, `Job failed (system failure):`, `Error cleaning up pod:`) is the runner's own identity (runner-rbac; owner-rbac for who may grant it); a tool's prefix on a line of the job's script (kubectl's `Error from server (Forbidden):`, helm's `Error:`, werf, terraform's `│`), a resource the runner never uses (configmaps, deployments without the autoscaler, a CRD) or a namespace other than the runner's is the job pod's service account (job-identity: grant it a Role in the namespace the line names); a fleeting plugin's virtualization.deckhouse.io resource is dvp-rbac"},
		},
	},
	// The dry run (job-admission's fact) is the verdict on Pod Security and
	// the service account where it reached them; the model explains it.
	Requires: []checks.Node{kubefacts.AfterAPIAuth, kubefacts.APIClientFact, configfacts.RunnerEntryFact, configfacts.ConfigFact,
		checks.Optional(cluster.AdmissionFact)},
	Executors: []string{checks.Kubernetes},
	Network:   true,
	Run:       run,
}

// lookup is one GET's outcome: found, 404, or an error.
type lookup struct {
	found bool
	err   error // nil when found or 404
}

type objects struct {
	namespace *corev1.Namespace
	nsErr     error
	sa        lookup
	secrets   map[string]lookup
}

func run(p *checks.Pass) error {
	e := configfacts.RunnerEntryFact.Get(p)
	k := e.Kube()
	if k.NamespacePerJob {
		return checks.Skip("namespace_per_job is set: each job's namespace is created for it")
	}
	ns := e.Namespace()
	api := kubefacts.APIClientFact.Get(p)
	sa, secrets := k.ServiceAccount, validNames(p, e, k.ImagePullSecrets)
	if sa != "" && invalidServiceAccount(p, e, sa) {
		sa = "" // no such object can exist: not asked for
	}
	ctx, cancel := context.WithTimeout(p.Context, p.Env.APITimeout())
	defer cancel()
	o := fetch(p, ctx, api, ns, sa, secrets)
	adm := cluster.AdmissionFact.Get(p) // nil when the dry run did not run
	var unknown []string

	if sa != "" {
		src, line := e.At("kubernetes", "service_account")
		switch {
		case o.sa.err != nil:
			unknown = append(unknown, rbac(o.sa.err, "get", "serviceaccounts", ns))
		case !o.sa.found:
			p.Report(checks.Finding{
				// The admission plugin's words (serviceaccount/admission.go, kubernetes v1.37.2).
				Cause: fmt.Sprintf("%s: service_account %q does not exist in %s: every job pod is refused with `error looking up service account %s/%s: serviceaccount %q not found`.",
					e.Label(), sa, ns, ns, sa, sa),
				Evidence: append([]checks.Evidence{{Source: src, Detail: line}, {Source: "GET /api/v1/namespaces/" + ns + "/serviceaccounts/" + sa, Detail: "404 Not Found"}},
					dryRunEvidence(adm, cluster.StageServiceAccount)...),
				Fix: checks.Steps{checks.Say(fmt.Sprintf("Create it, or set service_account in [runners.kubernetes] of %s to one that exists:", e.File.Path)),
					createServiceAccount(api.Kubectl(), ns, sa)},
			})
		}
	}
	for _, name := range secrets {
		l := o.secrets[name]
		switch {
		case l.err != nil:
			unknown = append(unknown, rbac(l.err, "get", "secrets", ns))
		case !l.found:
			src, line := e.At("kubernetes", "image_pull_secrets")
			p.Report(checks.Finding{
				Cause: fmt.Sprintf("%s: image_pull_secrets names %q, which does not exist in %s: nodes pull the job's images without those credentials, and a private image fails to pull.",
					e.Label(), name, ns),
				Evidence: []checks.Evidence{{Source: src, Detail: line}, {Source: "GET /api/v1/namespaces/" + ns + "/secrets/" + name + " (metadata only)", Detail: "404 Not Found"}},
				Fix: checks.Steps{checks.Say("Create it with the registry's address and a user and token it accepts (read asks for the token), or drop it from image_pull_secrets:"),
					createPullSecret(api.Kubectl(), ns, name)},
			})
		}
	}
	switch {
	case o.nsErr != nil && apierrors.IsNotFound(o.nsErr):
		// The namespace check reports a missing namespace.
	case o.nsErr != nil:
		unknown = append(unknown, rbac(o.nsErr, "get", "namespaces", ns))
	default:
		if err := podSecurity(p, e, o.namespace, adm); err != nil {
			return err
		}
	}
	if len(unknown) > 0 {
		return fmt.Errorf("%s", strings.Join(unknown, "; "))
	}
	return nil
}

// rbac words a refused read as what the identity lacks.
func rbac(err error, verb, resource, ns string) string {
	if apierrors.IsForbidden(err) {
		return kubefacts.LacksRBAC(kubefacts.Access{Verb: verb, Resource: resource, Namespace: ns}, err).Error()
	}
	return fmt.Sprintf("%s %s in %s: %v", verb, resource, ns, err)
}

func fetch(p *checks.Pass, ctx context.Context, api *kubefacts.APIClient, ns, sa string, secrets []string) *objects {
	o := &objects{secrets: map[string]lookup{}}
	core := api.Client.CoreV1()
	var mu sync.Mutex
	var wg sync.WaitGroup
	// The namespace check reads the same Namespace: one request for both.
	wg.Go(func() {
		o.namespace, _, o.nsErr = cluster.NamespaceObject(p, ctx, api, ns, cluster.AcrossNamespaces(p))
	})
	if sa != "" {
		wg.Go(func() {
			_, err := core.ServiceAccounts(ns).Get(ctx, sa, metav1.GetOptions{})
			o.sa = outcome(err)
		})
	}
	for _, name := range secrets {
		wg.Go(func() {
			// Metadata only: a Secret's data never crosses the wire.
			_, err := core.RESTClient().Get().Namespace(ns).Resource("secrets").Name(name).
				SetHeader("Accept", "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1").DoRaw(ctx)
			mu.Lock()
			o.secrets[name] = outcome(err)
			mu.Unlock()
		})
	}
	wg.Wait()
	return o
}

func outcome(err error) lookup {
	switch {
	case err == nil:
		return lookup{found: true}
	case apierrors.IsNotFound(err):
		return lookup{}
	}
	return lookup{err: err}
}

// dryRunEvidence is the dry run's refusal at stage, as the apiserver
// worded it: the verdict the model's finding explains.
func dryRunEvidence(adm *cluster.Admission, stage cluster.Stage) []checks.Evidence {
	if !adm.RefusedAt(stage) {
		return nil
	}
	r := adm.Refusal
	return []checks.Evidence{{Source: adm.Request + " (the runner's identity)", Detail: fmt.Sprintf("%d %s: %s", r.Code, r.Reason, r.Message)}}
}

// levelIn is the level a PodSecurity refusal names ("restricted:latest"),
// k8s.io/pod-security-admission admission/admission.go, v0.37.2:
// "violates PodSecurity %q: %s".
var levelIn = regexp.MustCompile(`violates PodSecurity "([^"]*)"`)

func podSecurity(p *checks.Pass, e *configfacts.RunnerEntry, ns *corev1.Namespace, adm *cluster.Admission) error {
	pod, err := jobpod.For(e.Runner, jobpod.Configured)
	if err != nil {
		return fmt.Errorf("%s: the job pod cannot be built: %w", e.Label(), err)
	}
	v := Evaluate(ns.Labels, pod)
	if v.Problem != "" {
		p.Report(checks.Finding{
			Severity: checks.Warning,
			Cause:    fmt.Sprintf("%s: namespace %s has an invalid Pod Security label (%s); the apiserver enforces restricted for it.", e.Label(), ns.Name, v.Problem),
			Evidence: []checks.Evidence{{Source: "GET /api/v1/namespaces/" + ns.Name, Detail: labels(ns.Labels)}},
		})
	}
	refused := adm.RefusedAt(cluster.StagePodSecurity)
	switch {
	case refused:
		// The apiserver's verdict, whatever the model says: an
		// AdmissionConfiguration's defaults can enforce a level no label
		// names.
		if m := levelIn.FindStringSubmatch(adm.Refusal.Message); m != nil && v.Allowed {
			v.Level = m[1]
		}
	case v.Allowed:
		return nil
	case adm.Reached(cluster.StagePodSecurity):
		// The dry run of the same pod passed Pod Security: an exemption
		// (a user, a namespace, a runtime class of the apiserver's
		// AdmissionConfiguration) the labels do not show. The apiserver's
		// verdict stands.
		return nil
	}
	src, _ := e.At("kubernetes")
	b, _ := json.Marshal(pod.Spec.SecurityContext)
	cause := fmt.Sprintf("%s: the job pod violates the Pod Security level of namespace %s, so every job pod is refused: `violates PodSecurity %q: %s`.",
		e.Label(), ns.Name, v.Level, v.Detail)
	if refused {
		cause = fmt.Sprintf("%s: the apiserver refuses every job pod in namespace %s at its Pod Security admission (a dry run of the pod the runner sends): `%s`.",
			e.Label(), ns.Name, adm.Refusal.Message)
	}
	ev := dryRunEvidence(adm, cluster.StagePodSecurity)
	if !v.Allowed {
		ev = append(ev, checks.Evidence{Source: "doctor's evaluation (k8s.io/pod-security-admission)", Detail: fmt.Sprintf("violates PodSecurity %q: %s", v.Level, v.Detail)})
	}
	p.Report(checks.Finding{
		Cause: cause,
		Evidence: append(ev,
			checks.Evidence{Source: "GET /api/v1/namespaces/" + ns.Name, Detail: labels(ns.Labels)},
			checks.Evidence{Source: src, Detail: "pod securityContext " + string(b) + "; " + containerContexts(pod)},
		),
		Fix: checks.Steps{checks.Say(fmt.Sprintf("Set what %s demands in [runners.kubernetes] of %s (%s), or label the namespace with a level the jobs meet:",
			v.Level, e.File.Path, demands(v.Level))),
			labelBaseline(kubefacts.APIClientFact.Get(p).Kubectl(), ns.Name)},
	})
	return nil
}

// invalidServiceAccount reports a service_account that is no service
// account's name: the apiserver refuses every pod that names it
// (pkg/apis/core/validation/validation.go, kubernetes v1.37.2:
// ValidatePodSpec checks serviceAccountName with
// ValidateServiceAccountName, a DNS-1123 subdomain). The name is the
// finding; no command carries it.
func invalidServiceAccount(p *checks.Pass, e *configfacts.RunnerEntry, name string) bool {
	err := fixcode.ObjectName(name)
	if err == nil {
		return false
	}
	src, line := e.At("kubernetes", "service_account")
	p.Report(checks.Finding{
		Cause: fmt.Sprintf("%s: config.toml's service_account %q is %v: the apiserver refuses every job pod that names it (`spec.serviceAccountName: Invalid value`).",
			e.Label(), name, err),
		Evidence: []checks.Evidence{{Source: src, Detail: line}},
		Fix: checks.Text(fmt.Sprintf("Set service_account in [runners.kubernetes] of %s to the name of a service account of the runner's namespace "+
			"(lower-case letters, digits, '-' and '.'), or remove it for the namespace's default.", e.File.Path)),
	})
	return true
}

// validNames are the image_pull_secrets that can be Secrets' names; each
// other one is reported: no Secret can have it, so the kubelet pulls
// without it (the apiserver takes any name there: validateImagePullSecrets,
// pkg/apis/core/validation/validation.go, kubernetes v1.37.2, checks only
// that nothing but the name is set). The name is the finding; no command
// carries it.
func validNames(p *checks.Pass, e *configfacts.RunnerEntry, names []string) []string {
	var out []string
	for _, name := range names {
		err := fixcode.ObjectName(name)
		if err == nil {
			out = append(out, name)
			continue
		}
		src, line := e.At("kubernetes", "image_pull_secrets")
		p.Report(checks.Finding{
			Cause: fmt.Sprintf("%s: config.toml's image_pull_secrets names %q, which is %v: no Secret can have it, so nodes pull the job's images without those credentials, and a private image fails to pull.",
				e.Label(), name, err),
			Evidence: []checks.Evidence{{Source: src, Detail: line}},
			Fix: checks.Text(fmt.Sprintf("Correct the name in image_pull_secrets of [runners.kubernetes] in %s to a Secret of the runner's namespace "+
				"(lower-case letters, digits, '-' and '.'), or drop it.", e.File.Path)),
		})
	}
	return out
}

// createServiceAccount is the command that creates service account name
// in namespace ns with kubectl, a command aimed at the runner's cluster.
func createServiceAccount(kubectl fixcode.Cmd, ns, name string) checks.Step {
	if err := names(ns, name); err != nil {
		return checks.Withheld(err)
	}
	return checks.Commands(kubectl.Arg("create", "serviceaccount", "-n", ns, name))
}

// createPullSecret is the commands that create pull secret name in
// namespace ns: the registry and its user as variables the operator
// corrects, the token read from the terminal (read -rs: not echoed, not
// in the shell's history, never in the block).
func createPullSecret(kubectl fixcode.Cmd, ns, name string) checks.Step {
	if err := names(ns, name); err != nil {
		return checks.Withheld(err)
	}
	return checks.Script(fixcode.Lines(
		fixcode.Raw("REGISTRY=registry.example.com"),
		fixcode.Raw("REGISTRY_USER=ci"),
		fixcode.Raw("read -rs REGISTRY_TOKEN"),
		fixcode.Run(kubectl.Arg("create", "secret", "docker-registry", "-n", ns, name).Words(
			fixcode.Join(fixcode.Data("--docker-server="), fixcode.Var("REGISTRY")),
			fixcode.Join(fixcode.Data("--docker-username="), fixcode.Var("REGISTRY_USER")),
			fixcode.Join(fixcode.Data("--docker-password="), fixcode.Var("REGISTRY_TOKEN")))),
	))
}

// labelBaseline is the command that sets namespace ns's Pod Security
// enforce level to baseline.
func labelBaseline(kubectl fixcode.Cmd, ns string) checks.Step {
	if err := fixcode.NamespaceName(ns); err != nil {
		return checks.Withheld(fmt.Errorf("the namespace's name is %w", err))
	}
	return checks.Commands(kubectl.Arg("label", "--overwrite", "ns", ns, "pod-security.kubernetes.io/enforce=baseline"))
}

// names is nil when ns is a namespace's name and name an object's: a
// command names them, else it is not printed.
func names(ns, name string) error {
	if err := fixcode.NamespaceName(ns); err != nil {
		return fmt.Errorf("the runner's namespace is %w", err)
	}
	if err := fixcode.ObjectName(name); err != nil {
		return fmt.Errorf("the object's name is %w", err)
	}
	return nil
}

func demands(level string) string {
	if strings.HasPrefix(level, "restricted") {
		return "allow_privilege_escalation = false; pod_security_context run_as_non_root = true and seccomp_profile type = \"RuntimeDefault\"; " +
			"capabilities drop = [\"ALL\"] in each *_container_security_context; no privileged, no host_path"
	}
	return "no privileged, no cap_add beyond the default set, no host_path"
}

func labels(l map[string]string) string {
	var parts []string
	for _, k := range []string{"pod-security.kubernetes.io/enforce", "pod-security.kubernetes.io/enforce-version"} {
		if v, ok := l[k]; ok {
			parts = append(parts, k+"="+v)
		}
	}
	if len(parts) == 0 {
		return "no pod-security.kubernetes.io/enforce label"
	}
	return strings.Join(parts, ", ")
}

func containerContexts(pod *corev1.Pod) string {
	var parts []string
	for _, c := range jobpod.AllContainers(pod) {
		b, _ := json.Marshal(c.SecurityContext)
		parts = append(parts, c.Name+" "+string(b))
	}
	return strings.Join(parts, "; ")
}
