package checks

import (
	"fmt"
	"slices"
)

// Sign is a symptom known by its parts rather than by one version's
// sentence: doctor why parses a line (cmd/doctor/app/symptom: the producer's
// prefix removed, a message wrapped over several lines or table rows
// joined, its Go error chain, the endpoint it names, its innermost cause)
// and a Sign says which parts make it this check's. The same failure reads
// differently in the runner's job log, its journal, kubectl, a kubelet
// event or an older Go's wording; its core and its reason do not.
type Sign struct {
	// Core is a fragment the line must hold, as a Doc.Patterns entry
	// (`*` any text); "" when the parts alone say it.
	Core string
	// Reason are fragments of which one must follow Core (anywhere in the
	// line when Core is ""): the word that tells this cause from the
	// others of the same message ("container not found" after "unable to
	// upgrade connection: "; `create resource "secrets"` after "is
	// forbidden: User"). doctor why also reads a refusal of the
	// apiserver's older wording ("cannot create secrets in the namespace")
	// as the newer one.
	Reason []string
	// Unless are fragments that rule the sign out: another producer of
	// the same words ("Error from server (" before a Forbidden is a
	// job's kubectl, not the runner).
	Unless []string
	// Endpoints are the roles the endpoint the line names may have (Endpoint*
	// constants); empty: any.
	Endpoints []string
	// Causes are the classes its innermost cause may have (Cause*
	// constants); empty: any.
	Causes []string
	// Kubectl: the line is kubectl's own wording of an API error (Unable
	// to connect to the server, You must be logged in, The connection to
	// the server … was refused). A Sign without it never matches such a
	// line: kubectl was run with its own kubeconfig, in a job or a shell,
	// and says nothing of the runner's unless the operator says so.
	Kubectl bool
	// Clock: the line also carries clock evidence: a time of another
	// clock (its prefix's) more than five minutes from the "current time"
	// a certificate was judged at, or a current time before 2020 (a clock
	// that was never set).
	Clock bool
	// Fallback: the sign names its check only when no other check's
	// pattern or sign matches the line: the cause when the reason is
	// none of the others'.
	Fallback bool
	// Or and Tell make the sign ambiguous, as an Ambiguous entry.
	Or   []string
	Tell string
}

// The roles of an endpoint a line names.
const (
	// EndpointAPIServer: the Kubernetes API: an /api/ or /apis/ path, the
	// runner's API steps (setting up credentials, waiting for pod running,
	// Error cleaning up pod), kubectl's "the server", a Status message.
	EndpointAPIServer = "apiserver"
	// EndpointKubelet: port 10250, or "error dialing backend" (the
	// apiserver's connection to a kubelet).
	EndpointKubelet = "kubelet"
	// EndpointDocker: a Docker daemon's socket, or tcp:// on 2375.
	EndpointDocker = "docker"
	// EndpointDockerTLS: a Docker daemon over TLS (tcp:// on 2376), as
	// docker+machine and docker-autoscaler instances serve it.
	EndpointDockerTLS = "docker-tls"
	// EndpointGitLab: GitLab's API (/api/v4/), the runner's requests to it
	// (Checking for jobs, Verifying runner, Registering runner), and git
	// over https to a repository.
	EndpointGitLab = "gitlab"
	// EndpointDNS: a lookup's server (port 53).
	EndpointDNS = "dns"
	// EndpointOther: a host of none of these roles (object storage, a
	// registry, an SSH server).
	EndpointOther = "other"
	// EndpointNone: the line names no endpoint.
	EndpointNone = "none"
)

// The classes of a line's innermost cause.
const (
	CauseTimeout     = "timeout"     // i/o timeout, context deadline exceeded, TLS handshake timeout, timed out
	CauseRefused     = "refused"     // connection refused
	CauseReset       = "reset"       // connection reset by peer, broken pipe, EOF
	CauseUnreachable = "unreachable" // no route to host, network is unreachable
	CauseNoSuchHost  = "no-such-host"
	// CauseX509Authority: the peer's chain does not reach a trusted root.
	CauseX509Authority = "x509-authority"
	// CauseX509Expired: "current time … is after" the certificate's end.
	CauseX509Expired = "x509-expired"
	// CauseX509NotYetValid: "current time … is before" its start.
	CauseX509NotYetValid = "x509-not-yet-valid"
	// CauseX509Validity: "has expired or is not yet valid" without the
	// times (Go before 1.15), or curl's "certificate has expired".
	CauseX509Validity = "x509-validity"
	CauseX509Hostname = "x509-hostname" // certificate is valid for …, no IP SANs
	// CauseTLSRemote: the peer refused the handshake ("remote error:
	// tls: …").
	CauseTLSRemote = "tls-remote"
	// CauseTLSMaterial: the client refused its own TLS material (a key
	// that is not its certificate's, PEM of the wrong type, a CA that
	// does not load, insecure beside a CA).
	CauseTLSMaterial  = "tls-material"
	CauseUnauthorized = "unauthorized" // 401, Unauthorized, provide credentials
	CauseForbidden    = "forbidden"    // 403
)

// SignEndpoints and SignCauses are the vocabulary Validate allows.
var (
	SignEndpoints = []string{EndpointAPIServer, EndpointKubelet, EndpointDocker, EndpointDockerTLS, EndpointGitLab, EndpointDNS, EndpointOther, EndpointNone}
	SignCauses    = []string{CauseTimeout, CauseRefused, CauseReset, CauseUnreachable, CauseNoSuchHost, CauseX509Authority, CauseX509Expired,
		CauseX509NotYetValid, CauseX509Validity, CauseX509Hostname, CauseTLSRemote, CauseTLSMaterial, CauseUnauthorized, CauseForbidden}
)

// validateSign proves a sign says something: a core, a reason or parts
// from the vocabulary, and for an ambiguous one its other causes and what
// tells them apart.
func validateSign(c *Check, s Sign, catalog map[string]*Check, complete bool) []error {
	var errs []error
	if s.Core != "" {
		if _, err := PatternParts(s.Core); err != nil {
			errs = append(errs, fmt.Errorf("check %q: sign %w", c.ID, err))
		}
	}
	if s.Core == "" && len(s.Reason) == 0 && len(s.Endpoints) == 0 && len(s.Causes) == 0 {
		errs = append(errs, fmt.Errorf("check %q: a sign with neither core, reason, endpoint nor cause matches every line", c.ID))
	}
	for _, e := range s.Endpoints {
		if !slices.Contains(SignEndpoints, e) {
			errs = append(errs, fmt.Errorf("check %q: sign endpoint %q is none of %v", c.ID, e, SignEndpoints))
		}
	}
	for _, k := range s.Causes {
		if !slices.Contains(SignCauses, k) {
			errs = append(errs, fmt.Errorf("check %q: sign cause %q is none of %v", c.ID, k, SignCauses))
		}
	}
	if s.Fallback && len(s.Or) > 0 {
		errs = append(errs, fmt.Errorf("check %q: a fallback sign is its check's alone", c.ID))
	}
	if len(s.Or) > 0 || s.Tell != "" {
		errs = append(errs, validateAmbiguous(c, Ambiguous{Pattern: signLabel(s), Or: s.Or, Tell: s.Tell}, catalog, complete)...)
	}
	return errs
}

// signLabel is a sign as a pattern text, for messages: its core, or its
// parts.
func signLabel(s Sign) string {
	if s.Core != "" {
		return s.Core
	}
	return fmt.Sprintf("endpoint %v, cause %v, reason %v", s.Endpoints, s.Causes, s.Reason)
}

// String is the sign as docs/checks.md lists it.
func (s Sign) String() string {
	var parts []string
	if s.Core != "" {
		parts = append(parts, "`"+s.Core+"`")
	}
	if len(s.Reason) > 0 {
		parts = append(parts, fmt.Sprintf("with reason %s", quoteList(s.Reason)))
	}
	if len(s.Endpoints) > 0 {
		parts = append(parts, "naming "+orList(words(s.Endpoints, endpointWords)))
	}
	if len(s.Causes) > 0 {
		parts = append(parts, "failing with "+orList(words(s.Causes, causeWords)))
	}
	if s.Kubectl {
		parts = append(parts, "as kubectl words it")
	}
	if s.Clock {
		parts = append(parts, "with clock evidence on the line")
	}
	if s.Fallback {
		parts = append(parts, "when no other check explains its reason")
	}
	out := ""
	for i, p := range parts {
		if i > 0 {
			out += ", "
		}
		out += p
	}
	return out
}

var endpointWords = map[string]string{
	EndpointAPIServer: "the Kubernetes API", EndpointKubelet: "a kubelet (:10250, error dialing backend)",
	EndpointDocker: "a Docker daemon (its socket, :2375)", EndpointDockerTLS: "a Docker daemon over TLS (:2376)",
	EndpointGitLab: "GitLab (/api/v4/, its runner requests, git)", EndpointDNS: "a DNS server", EndpointOther: "another server",
	EndpointNone: "no endpoint",
}

var causeWords = map[string]string{
	CauseTimeout: "a timeout", CauseRefused: "a refused connection", CauseReset: "a reset connection or EOF",
	CauseUnreachable: "an unreachable host", CauseNoSuchHost: "a name that does not resolve",
	CauseX509Authority: "an unknown certificate authority", CauseX509Expired: "a certificate past its end",
	CauseX509NotYetValid: "a certificate before its start", CauseX509Validity: "an expired or not yet valid certificate",
	CauseX509Hostname: "a certificate for another name", CauseTLSRemote: "the peer's TLS alert",
	CauseTLSMaterial: "the client's own TLS material refused", CauseUnauthorized: "401 Unauthorized", CauseForbidden: "403 Forbidden",
}

func words(xs []string, m map[string]string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = m[x]
	}
	return out
}

func quoteList(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = "`" + x + "`"
	}
	return orList(q)
}

func orList(xs []string) string {
	switch len(xs) {
	case 0:
		return ""
	case 1:
		return xs[0]
	}
	out := ""
	for i, x := range xs {
		switch {
		case i == 0:
		case i == len(xs)-1:
			out += " or "
		default:
			out += ", "
		}
		out += x
	}
	return out
}
