// Package apiauth makes one authenticated call and classifies its failure.
package apiauth

import (
	"fmt"
	"strings"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts/kubefacts"
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
			checks.Say("For a refused credential: "+kubefacts.GetKubeconfig+" Install it over the file the runner loads (CLUSTER.kubeconfig.yaml is the file getKubeconfig returned):"),
			checks.Sh(`sudo install -m 0600 -o "$RUNNER_USER" ./CLUSTER.kubeconfig.yaml "$RUNNER_KUBECONFIG"`),
			checks.Say("For a connection failure, fix what the finding names.")),
		Verify: checks.Target(checks.Say("Who the cluster says the runner's credential is:"), checks.Sh(checks.CatalogKubectl+" auth whoami")),
		Patterns: []string{
			// k8s.io/apiserver pkg/endpoints/handlers/responsewriters/errors.go, v0.37.2
			// (ErrorNegotiated of apierrors.NewTimeoutError): the apiserver did not answer in time.
			"Timeout: request did not complete within requested timeout",
		},
		Signs: []checks.Sign{
			// The executor's calls to the API fail before any answer, or at TLS, whichever step
			// wraps them (executors/kubernetes/kubernetes.go, v19.3.0: "setting up credentials: %w",
			// "setting up build pod: %w", "waiting for pod running: %w", "Error cleaning up pod: %v",
			// inside common/build.go's "prepare environment: %w"), whichever Go quotes the URL
			// (`Post https://…` before go1.14, `Post "https://…"` after) and whichever way the
			// network says it (docs/executors/kubernetes/troubleshooting.md, v19.3.0: "dial tcp
			// xx.xx.xx.x:443 connect: connection refused"; docs/configuring_runner_operator.md:
			// "net/http: TLS handshake timeout"). An expired certificate is clock-skew's sign, with
			// this check among its causes; a 401 is cert-expiry's; the client's own TLS material is
			// kubeconfig-file's.
			{Endpoints: []string{checks.EndpointAPIServer}, Causes: apiConnection},
			// kubectl's words for the same (k8s.io/kubectl pkg/cmd/util/helpers.go, v0.37.2:
			// "Unable to connect to the server: %v", "The connection to the server %s was refused -
			// did you specify the right host or port?"): kubectl's own kubeconfig, doctor why says.
			{Kubectl: true, Endpoints: []string{checks.EndpointAPIServer}, Causes: apiConnection},
			// A timeout with no endpoint behind the prepare stage (docs/executors/kubernetes.md,
			// v14.10.0: "Job failed (system failure): prepare environment: context deadline
			// exceeded", the API client's timeout): the Kubernetes executor's prepare stage is API
			// calls; another executor's is its own backend.
			{Core: "prepare environment: ", Endpoints: []string{checks.EndpointNone}, Causes: []string{checks.CauseTimeout},
				Or:   []string{checks.NotACheck + "another executor's backend (a Docker daemon, an instance) that did not answer in time"},
				Tell: "the runner's executor: the Kubernetes executor's prepare stage is calls to the API, which api-auth makes and times"},
		},
	},
	// kubeconfig-file is optional: a runner in a pod authenticates with its
	// service account and has no kubeconfig to examine.
	Requires:  []checks.Node{checks.Optional(checks.Ref("kubeconfig-file")), checks.Ref("cluster-override"), kubefacts.IdentityFact, kubefacts.ClientCertFact},
	Executors: []string{checks.Kubernetes},
	Network:   true,
	Run:       run,
}

// apiConnection are the failures of a call to the API before any answer:
// the network's, or TLS's verification of the apiserver.
var apiConnection = []string{checks.CauseTimeout, checks.CauseRefused, checks.CauseReset, checks.CauseUnreachable,
	checks.CauseNoSuchHost, checks.CauseX509Authority, checks.CauseX509Hostname, checks.CauseTLSRemote}

func run(p *checks.Pass) error {
	id := kubefacts.IdentityFact.Get(p)
	if id.Err == nil {
		return nil
	}
	cc := kubefacts.ClientCertFact.Get(p)
	c := Classify(id.Err)
	f := checks.Finding{
		Cause:    strings.TrimSpace(fmt.Sprintf("%s %s (server %s)", c.Cause, c.Detail, id.Server)),
		Evidence: []checks.Evidence{{Source: "POST " + id.Server + "/apis/authentication.k8s.io/v1/selfsubjectreviews", Detail: c.Message}},
		Fix:      checks.Text(c.Fix),
	}
	if cc.Cert != nil {
		f.Evidence = append(f.Evidence, checks.Evidence{Source: cc.Source, Detail: kubefacts.Describe(cc.Cert)})
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
