package symptom

import (
	"net"
	"strings"
	"time"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/internal/text/lazyre"
)

// Parts is a cleaned line read by its structure: what printed it, the
// message without that producer's prefix, the Go error chain of the
// message (`op: op: cause`), the endpoint it names and the class of its
// innermost cause. checks.Sign entries match these instead of one
// version's sentence.
type Parts struct {
	// Body is the message without the producer's prefix (a journald or
	// syslog stamp, a timestamp, a docker compose service, klog's header,
	// a kubectl describe or k9s event row's columns).
	Body string
	// Prefix is the time its prefix gave, zero without one; a prefix
	// without a year (journald, syslog) takes the year of the current
	// time a certificate was judged at, if the line has one.
	Prefix time.Time
	// Kubectl: the body is kubectl's own wording of an API error
	// (k8s.io/kubectl pkg/cmd/util/helpers.go, v0.37.2, StandardErrorMessage:
	// "Unable to connect to the server: %v", "error: You must be logged in
	// to the server (%s)", "The connection to the server %s was refused -
	// did you specify the right host or port?").
	Kubectl bool
	// Chain is the body split at its Go error chain's ": " (outside
	// quotes and brackets); its last element is the innermost cause.
	Chain []string
	// Endpoint is the role of the endpoint the line names (checks.Endpoint*),
	// and Host and Port the endpoint, as far as the line says them.
	Endpoint   string
	Host, Port string
	// Causes are the classes of its cause (checks.Cause*) the line holds.
	Causes []string
	// Reasons are reasons the line states in another wording than the
	// one signs quote: an apiserver refusal's older "cannot create
	// secrets in the namespace" as `create resource "secrets"`.
	Reasons []string
	// CurrentTime is the "current time" crypto/x509 judged a certificate
	// at (verify.go: "current time %s is before|after %s").
	CurrentTime time.Time
	// Clock: two clocks on the line disagree by more than five minutes,
	// or the current time is before 2020 (a clock that was never set).
	Clock bool
}

var (
	// journald's short format and syslog's: "Dec 01 09:00:07 host unit[pid]: ".
	journaldPrefix = lazyre.MustCompile(`^([A-Z][a-z]{2} [ 0-9]?[0-9] [0-9]{2}:[0-9]{2}:[0-9]{2}) \S+ [^\s:]+(?:\[[0-9]+\])?: `)
	// RFC 3339 at the start: a runner's json/text record's time was
	// already taken; this is a timestamped job log ("2024-05-23T10:01:42.614532Z 01O ")
	// or another tool's.
	isoPrefix = lazyre.MustCompile(`^([0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?(?:Z|[+-][0-9]{2}:?[0-9]{2})?) (?:[0-9]{2}[OE]\+? )?`)
	// klog's header: "E1029 12:00:00.000000   12345 file.go:123] ".
	klogPrefix = lazyre.MustCompile(`^[IWEF][0-9]{4} [0-9:.]+\s+[0-9]+ [^\]]+\] `)
	// docker compose's service column: "runner_1  | ".
	composePrefix = lazyre.MustCompile(`^[A-Za-z0-9_.-]+\s+\| `)
	// A kubectl describe event row: "  Warning  FailedScheduling  3m (x5 over 10m)  default-scheduler  <message>".
	eventRow = lazyre.MustCompile(`^\s*(?:Warning|Normal)\s+[A-Za-z]+\s+(?:\S+(?: \(x[0-9]+ over \S+\))?\s+)?\S+\s{2,}(.+)$`)
	// Markdown a paste picked up: a heading's or a quote's marker.
	markdownPrefix = lazyre.MustCompile(`^(?:#{1,6} |> ?)`)

	currentTime = lazyre.MustCompile(`current time (\S+) is (?:before|after) `)
	// The endpoint a line names: a URL, a dial, a docker host, a lookup.
	urlRe    = lazyre.MustCompile(`(?i)\b(https?|tcp|wss?)://(\[[^\]]+\]|[^/\s"'\\:]+)(?::([0-9]+))?(/[^\s"'\\]*)?`)
	dialRe   = lazyre.MustCompile(`dial tcp (\[[^\]]+\]|[^\s:]+)?:([0-9]+)`)
	lookupRe = lazyre.MustCompile(`lookup (\S+) on (\S+?):([0-9]+)`)
	// An apiserver refusal, in both wordings: `cannot create resource "secrets" in API group ""`
	// (since 1.14) and `cannot create secrets in the namespace` (before).
	oldRBAC = lazyre.MustCompile(`is forbidden: User "[^"]*" cannot ([a-z]+) ([a-z0-9./-]+) in the namespace`)
)

// causeWords are the fragments each cause class is known by, in the
// wordings of Go's net, crypto/tls and crypto/x509, curl (git), client-go
// and the apiserver, old and new.
var causeWords = []struct {
	class string
	words []string
}{
	{checks.CauseTimeout, []string{"i/o timeout", "context deadline exceeded", "TLS handshake timeout", "Client.Timeout exceeded",
		"connection timed out", "Operation timed out", "request did not complete within requested timeout", "timeout awaiting response headers"}},
	{checks.CauseRefused, []string{"connection refused", "was refused - did you specify the right host or port?"}},
	{checks.CauseReset, []string{"connection reset by peer", "broken pipe", "unexpected EOF"}},
	{checks.CauseUnreachable, []string{"no route to host", "network is unreachable", "host is unreachable"}},
	{checks.CauseNoSuchHost, []string{"no such host", "server misbehaving", "Could not resolve host", "Couldn't resolve host",
		"Temporary failure in name resolution", "Name or service not known"}},
	{checks.CauseX509Authority, []string{"certificate signed by unknown authority", "unable to get local issuer certificate",
		"self-signed certificate in certificate chain", "self signed certificate in certificate chain", "server certificate verification failed"}},
	{checks.CauseX509Hostname, []string{"x509: certificate is valid for", "doesn't contain any IP SANs", "x509: cannot validate certificate for",
		"certificate is not valid for any names", "certificate relies on legacy Common Name field"}},
	{checks.CauseTLSRemote, []string{"remote error: tls: "}},
	{checks.CauseTLSMaterial, []string{"private key does not match public key", "private key type does not match public key type",
		"failed to find any PEM data", "PEM inputs may have been switched", "found a certificate rather than a key",
		"failed to parse private key", "unable to load root certificates", "specifying a root certificates file with the insecure flag is not allowed"}},
	{checks.CauseUnauthorized, []string{"401 Unauthorized", "the server has asked for the client to provide credentials",
		"You must be logged in to the server"}},
	{checks.CauseForbidden, []string{"403 Forbidden", "(Forbidden)", " is forbidden: "}},
}

// causeHints are fragments a line of cause class k holds: the class's
// words, and what causes() reads beside them.
func causeHints(k string) []string { return hintsOf[k] }

var hintsOf = func() map[string][]string {
	m := map[string][]string{}
	for _, k := range checks.SignCauses {
		m[k] = hintsFor(k)
	}
	return m
}()

func hintsFor(k string) []string {
	var out []string
	for _, cw := range causeWords {
		if cw.class == k {
			out = append(out, cw.words...)
		}
	}
	switch k {
	case checks.CauseX509Expired, checks.CauseX509NotYetValid:
		out = append(out, "current time ")
	case checks.CauseX509Validity:
		out = append(out, "certificate has expired")
	case checks.CauseReset:
		out = append(out, "EOF")
	case checks.CauseUnauthorized:
		out = append(out, "Unauthorized")
	}
	return out
}

// kubectlWords begin kubectl's own wordings of an API error.
var kubectlWords = []string{"Unable to connect to the server: ", "error: You must be logged in to the server", "The connection to the server "}

// apiSteps are the runner's steps that call the Kubernetes API
// (executors/kubernetes/kubernetes.go, gitlab-runner v19.3.0): a failure
// behind one without a URL is the apiserver's.
var apiSteps = []string{"setting up credentials: ", "setting up build pod: ", "waiting for pod running: ", "Error cleaning up pod: ",
	"Error cleaning up secrets: ", "setting up trapping scripts on emptyDir: ", "creating Kubernetes client: ", "getting Kubernetes config: "}

// gitlabSteps are the runner's requests to GitLab (network/gitlab.go,
// gitlab-runner v19.3.0) and git's to a repository.
var gitlabSteps = []string{"Checking for jobs...", "Verifying runner...", "Registering runner...", "Appending trace to coordinator...",
	"Submitting job to coordinator...", "Updating job...", "Uploading artifacts", "fatal: unable to access '"}

// Parse reads a cleaned line's parts.
func Parse(line string) Parts {
	p := Parts{Body: line}
	p.Body, p.Prefix = stripPrefix(line)
	for _, w := range kubectlWords {
		if strings.HasPrefix(p.Body, w) {
			p.Kubectl = true
		}
	}
	p.Chain = errorChain(p.Body)
	p.Endpoint, p.Host, p.Port = endpoint(p.Body)
	p.Causes = causes(p.Body, p.Chain)
	if p.Endpoint == checks.EndpointNone && len(p.Chain) > 0 && p.Chain[len(p.Chain)-1] == "Unauthorized" {
		// A Status message alone: client-go's error for a 401 whose
		// body is the apiserver's Status (k8s.io/apiserver
		// endpoints/filters/authentication.go, v0.37.2: "Unauthorized").
		p.Endpoint = checks.EndpointAPIServer
	}
	if m := oldRBAC().FindStringSubmatch(p.Body); m != nil {
		p.Reasons = append(p.Reasons, m[1]+` resource "`+m[2]+`"`)
	}
	if m := currentTime().FindStringSubmatch(p.Body); m != nil {
		if t, err := time.Parse(time.RFC3339, m[1]); err == nil {
			p.CurrentTime = t
			if t.Year() < 2020 {
				p.Clock = true
			}
			if !p.Prefix.IsZero() {
				at := p.Prefix
				if at.Year() == 0 {
					at = at.AddDate(t.Year(), 0, 0)
				}
				if d := at.Sub(t); d > 5*time.Minute || d < -5*time.Minute {
					p.Clock = true
				}
			}
		}
	}
	return p
}

// stripPrefix removes what printed the line, keeping the time it gave.
func stripPrefix(line string) (string, time.Time) {
	var at time.Time
	body := strings.TrimLeft(line, " \t")
	for range 4 {
		before := body
		if m := journaldPrefix().FindStringSubmatch(body); m != nil {
			if t, err := time.Parse("Jan _2 15:04:05", strings.Replace(m[1], "  ", " ", 1)); err == nil {
				at = t
			} else if t, err := time.Parse("Jan 02 15:04:05", m[1]); err == nil {
				at = t
			}
			body = body[len(m[0]):]
		}
		if m := isoPrefix().FindStringSubmatch(body); m != nil {
			for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05", "2006-01-02T15:04:05"} {
				if t, err := time.Parse(layout, m[1]); err == nil {
					at = t
					break
				}
			}
			body = body[len(m[0]):]
		}
		if m := klogPrefix().FindString(body); m != "" {
			body = body[len(m):]
		}
		if m := composePrefix().FindString(body); m != "" {
			body = body[len(m):]
		}
		if m := markdownPrefix().FindString(body); m != "" {
			body = body[len(m):]
		}
		if m := eventRow().FindStringSubmatch(body); m != nil {
			body = m[1]
		}
		body = strings.TrimLeft(body, " \t")
		if body == before {
			break
		}
	}
	return body, at
}

// errorChain splits a message at its Go error chain's ": " separators,
// outside quotes, brackets and parentheses: fmt.Errorf("%s: %w") nests
// each op before its cause.
func errorChain(s string) []string {
	var out []string
	depth, quote, start := 0, byte(0), 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '(' || c == '[' || c == '{':
			depth++
		case (c == ')' || c == ']' || c == '}') && depth > 0:
			depth--
		case depth == 0 && c == ':' && i+1 < len(s) && s[i+1] == ' ':
			out = append(out, strings.TrimSpace(s[start:i]))
			start = i + 2
		}
	}
	return append(out, strings.TrimSpace(s[start:]))
}

// endpoint is the role of the endpoint the line names. The words of a
// role (error dialing backend, the Docker daemon, kubectl's "the server")
// first; then the URL the line names, by its path (a line that names one
// talks about that host, whichever step it failed in: the apiserver's call
// to a webhook is the webhook's); then, without a URL, the runner's step
// (an API step, a request to GitLab); then a dialled host of no known
// role.
func endpoint(s string) (role, host, port string) {
	host, port = endpointHost(s)
	url := urlRe().FindStringSubmatch(s)
	switch {
	case strings.Contains(s, "error dialing backend") || port == "10250":
		return checks.EndpointKubelet, host, port
	case strings.Contains(s, "docker.sock") || strings.Contains(s, "Docker daemon") || strings.Contains(s, "docker API at") || dockerPath().MatchString(s):
		if port == "2376" {
			return checks.EndpointDockerTLS, host, port
		}
		return checks.EndpointDocker, host, port
	case containsAny(s, kubectlWords) || strings.Contains(s, "Error from server"):
		return checks.EndpointAPIServer, host, port
	case url != nil:
		switch path := url[4]; {
		case strings.HasPrefix(path, "/api/v4/") || strings.Contains(path, ".git/") || strings.HasSuffix(path, ".git"):
			return checks.EndpointGitLab, host, port
		case hasAPIPath(s):
			return checks.EndpointAPIServer, host, port
		case path == "" || path == "/":
			// A server named alone: the step says what it is.
			if containsAny(s, gitlabSteps) {
				return checks.EndpointGitLab, host, port
			}
			if containsAny(s, apiSteps) {
				return checks.EndpointAPIServer, host, port
			}
		}
		return checks.EndpointOther, host, port
	case containsAny(s, gitlabSteps):
		return checks.EndpointGitLab, host, port
	case containsAny(s, apiSteps):
		return checks.EndpointAPIServer, host, port
	case port == "53" || lookupRe().MatchString(s):
		return checks.EndpointDNS, host, port
	case port == "6443":
		return checks.EndpointAPIServer, host, port
	case host != "":
		return checks.EndpointOther, host, port
	}
	return checks.EndpointNone, "", ""
}

// dockerPath is the Docker Engine API's versioned path ("/v1.41/images/create").
var dockerPath = lazyre.MustCompile(`https?://[^\s"']+/v1\.[0-9]+/`)

// hasAPIPath says the line names a Kubernetes API path: /api/v1/…,
// /apis/<group>/…, /version, not GitLab's /api/v4/.
var apiPath = lazyre.MustCompile(`https?://[^\s"']+/(?:api/v1(?:/|\b)|apis/[a-z0-9.-]+/|version\b)`)

func hasAPIPath(s string) bool { return apiPath().MatchString(s) }

// endpointHost is the first host:port the line names: a dial (the address
// really dialled) before a URL.
func endpointHost(s string) (string, string) {
	if m := dialRe().FindStringSubmatch(s); m != nil {
		return strings.Trim(m[1], "[]"), m[2]
	}
	if m := lookupRe().FindStringSubmatch(s); m != nil {
		return m[2], m[3]
	}
	if m := urlRe().FindStringSubmatch(s); m != nil {
		host, port := strings.Trim(m[2], "[]"), m[3]
		if port == "" {
			switch strings.ToLower(m[1]) {
			case "https", "wss":
				port = "443"
			case "http", "ws":
				port = "80"
			}
		}
		if net.ParseIP(host) == nil && strings.ContainsAny(host, "#<>") {
			host = "" // a placeholder the docs wrote (###.##.##.##, <host>)
		}
		return host, port
	}
	return "", ""
}

// causes are the classes of cause the line holds, the innermost cause's
// first.
func causes(body string, chain []string) []string {
	var out []string
	add := func(c string) {
		for _, o := range out {
			if o == c {
				return
			}
		}
		out = append(out, c)
	}
	inner := ""
	if len(chain) > 0 {
		inner = chain[len(chain)-1]
	}
	for _, text := range []string{inner, body} {
		for _, cw := range causeWords {
			if containsAny(text, cw.words) {
				add(cw.class)
			}
		}
		switch {
		case strings.Contains(text, "current time ") && strings.Contains(text, " is after "):
			add(checks.CauseX509Expired)
		case strings.Contains(text, "current time ") && strings.Contains(text, " is before "):
			add(checks.CauseX509NotYetValid)
		case strings.Contains(text, "certificate has expired or is not yet valid") || strings.Contains(text, "SSL certificate problem: certificate has expired"):
			add(checks.CauseX509Validity)
		}
		if strings.HasSuffix(text, ": EOF") || text == "EOF" {
			add(checks.CauseReset)
		}
	}
	if inner == "Unauthorized" {
		add(checks.CauseUnauthorized)
	}
	return out
}

func containsAny(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}
