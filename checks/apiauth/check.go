// Package apiauth makes one authenticated call and classifies its failure.
package apiauth

import (
	"fmt"
	"strings"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts"
)

var Check = &checks.Check{
	ID:       "api-auth",
	Title:    "The cluster accepts the kubeconfig's credential",
	Severity: checks.Critical,
	Doc: checks.Doc{
		Cause: "The runner's first API call fails: the client certificate expired or was revoked (the front " +
			"answers 401 within a second of a revocation), the account no longer owns the cluster, or the " +
			"connection itself fails (TLS authority, hostname, refused, timeout) before any credential is read.",
		// The parenthesis is client-go's verb and resource for a 401 whose body is
		// no Status (k8s.io/apimachinery pkg/api/errors/errors.go, v0.37.2:
		// NewGenericServerResponse, "%s (%s %s)"); a Status body gives its message, Unauthorized.
		Symptom: "ERROR: Job failed (system failure): prepare environment: setting up credentials: the server has asked for the client to provide credentials (post secrets)" + checks.PrepareHint,
		Fix: checks.Target(
			checks.Say("For a refused credential: "+facts.GetKubeconfig+" Install it over the file the runner loads (CLUSTER.kubeconfig.yaml is the file getKubeconfig returned):"),
			checks.Sh(`sudo install -m 0600 -o "$RUNNER_USER" ./CLUSTER.kubeconfig.yaml "$RUNNER_KUBECONFIG"`),
			checks.Say("For a connection failure, fix what the finding names.")),
		Verify: checks.Target(checks.Say("Who the cluster says the runner's credential is:"), checks.Sh(checks.CatalogKubectl+" auth whoami")),
		Patterns: []string{
			// common/build.go ("prepare environment: %w. Check https://docs.gitlab.com/runner/shells/…")
			// around executors/kubernetes/kubernetes.go ("setting up credentials: %w", "setting up
			// build pod: %w", …), v19.3.0: the executor's first API call got no answer, as
			// docs/executors/kubernetes/troubleshooting.md quotes it ("setting up credentials: Post
			// https://…/secrets: net/http: TLS handshake timeout"). A 401 (Unauthorized) is
			// cert-expiry's Doc.Ambiguous, with this check among its causes.
			"prepare environment: setting up credentials: Post ",
			"prepare environment: setting up build pod: Post ",
			// k8s.io/apiserver pkg/endpoints/handlers/responsewriters/errors.go, v0.37.2
			// (ErrorNegotiated of apierrors.NewTimeoutError): the apiserver did not answer in time.
			"Timeout: request did not complete within requested timeout",
			// docs/executors/kubernetes/troubleshooting.md, v19.3.0: "prepare environment: waiting for pod
			// running: Get \"https://xx.xx.xx.x:443/api/v1/namespaces/…\": dial tcp xx.xx.xx.x:443 connect:
			// connection refused".
			"waiting for pod running: Get \"*\": dial tcp ",
		},
	},
	// kubeconfig-file is optional: a runner in a pod authenticates with its
	// service account and has no kubeconfig to examine.
	Requires:  []checks.Node{checks.Optional(checks.Ref("kubeconfig-file")), checks.Ref("cluster-override"), facts.IdentityFact, facts.ClientCertFact},
	Executors: []string{checks.Kubernetes},
	Network:   true,
	Run:       run,
}

func run(p *checks.Pass) error {
	id := facts.IdentityFact.Get(p)
	if id.Err == nil {
		return nil
	}
	cc := facts.ClientCertFact.Get(p)
	c := Classify(id.Err)
	f := checks.Finding{
		Cause:    strings.TrimSpace(fmt.Sprintf("%s %s (server %s)", c.Cause, c.Detail, id.Server)),
		Evidence: []checks.Evidence{{Source: "POST " + id.Server + "/apis/authentication.k8s.io/v1/selfsubjectreviews", Detail: c.Message}},
		Fix:      checks.Text(c.Fix),
	}
	if cc.Cert != nil {
		f.Evidence = append(f.Evidence, checks.Evidence{Source: cc.Source, Detail: facts.Describe(cc.Cert)})
	}
	if c.Kind == Unauthorized && cc.Cert != nil {
		now := p.Env.Now()
		if now.After(cc.Cert.NotAfter) || now.Before(cc.Cert.NotBefore) {
			f.Cause = fmt.Sprintf("%s answers 401 Unauthorized: the client certificate is outside its validity dates.", id.Server)
			f.CausedBy = "cert-expiry"
		} else {
			f.Cause = fmt.Sprintf("%s answers 401 Unauthorized to a certificate within its dates: it was revoked, or this account no longer owns the cluster. Download a new kubeconfig.", id.Server)
		}
	}
	p.Report(f)
	return nil
}
