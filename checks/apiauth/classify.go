package apiauth

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"strings"
	"syscall"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/socialwebcomputer/doctor/checks/facts/kubefacts"
	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/internal/redact"
)

// Kind is a class of API failure, each with its own finding.
type Kind string

const (
	Unauthorized     Kind = "unauthorized"
	Forbidden        Kind = "forbidden"
	UnknownAuthority Kind = "tls-unknown-authority"
	HostnameMismatch Kind = "tls-hostname-mismatch"
	TLSRefused       Kind = "tls-handshake"
	Refused          Kind = "connection-refused"
	Timeout          Kind = "timeout"
	NoSuchHost       Kind = "dns"
	Other            Kind = "other"
)

// maxMessage is how much of an API error's text a finding quotes.
const maxMessage = 400

// Class is a classified failure: what to tell the operator.
type Class struct {
	Kind    Kind
	Cause   string
	Detail  string
	Fix     string
	Message string // the error text, redacted by Report
}

// Classify names an API failure: the 401 the front gives a dead certificate,
// and each connection failure apart, because each has its own fix.
func Classify(err error) Class {
	// client-go's error quotes the body of an answer it does not know
	// (an error on the server ("…") has prevented the request): a hostile
	// or broken front can send megabytes, or a secret.
	msg := redact.RemoteText(err.Error(), maxMessage)
	c := Class{Kind: Other, Message: msg, Cause: "The API call fails:", Detail: msg,
		Fix: "Fix what the error names; the runner gets the same error on every job."}
	var ua x509.UnknownAuthorityError
	var hn x509.HostnameError
	var dns *net.DNSError
	var cv *tls.CertificateVerificationError
	switch {
	case apierrors.IsUnauthorized(err):
		c.Kind, c.Cause, c.Detail = Unauthorized, "The server answers 401 Unauthorized:", "the credential is not accepted."
		c.Fix = renew
	case apierrors.IsForbidden(err):
		c.Kind, c.Cause, c.Detail = Forbidden, "The server answers 403 Forbidden to a self-review:", msg
		c.Fix = "The identity may not even review itself: the owner-group binding changed."
	case errors.As(err, &ua) || errors.As(err, &cv) && errors.As(cv.Err, &ua) || strings.Contains(msg, "certificate signed by unknown authority"):
		c.Kind, c.Cause = UnknownAuthority, "TLS fails: the server's certificate is signed by an authority the kubeconfig does not trust."
		c.Detail = "Its certificate-authority-data is not the CA that signed this server, or a proxy in between presents its own certificate."
		c.Fix = "Download the kubeconfig again (it carries the right CA); if a TLS-inspecting proxy sits in between, bypass it for this host."
	// The texts stand in for the types where only the message is left (a
	// bundle replays an error as its text): x509.HostnameError's own words.
	case errors.As(err, &hn) || strings.Contains(msg, "certificate is valid for") || strings.Contains(msg, "x509: cannot validate certificate for"):
		c.Kind, c.Cause = HostnameMismatch, "TLS fails: the server's certificate does not name the host in the kubeconfig's server URL."
		c.Detail = ""
		c.Fix = "Use the server URL getKubeconfig returned; do not point it at an address or another name."
	case strings.Contains(msg, "tls: ") && (strings.Contains(msg, "certificate required") || strings.Contains(msg, "bad certificate") || strings.Contains(msg, "handshake failure")):
		c.Kind, c.Cause = TLSRefused, "The front refuses the TLS handshake: it does not accept the client certificate."
		c.Detail = "The certificate front rejects certificates it does not admit (revoked, expired or foreign) before any HTTP."
		c.Fix = renew
	case errors.Is(err, syscall.ECONNREFUSED):
		c.Kind, c.Cause, c.Detail = Refused, "The connection is refused:", "nothing listens at the server's address and port."
		c.Fix = "Check the server URL in the kubeconfig and that the kcp front is up."
	case hostio.IsTimeout(err):
		c.Kind, c.Cause, c.Detail = Timeout, "The API call timed out:", "the server's address does not answer within the deadline (a firewall dropping packets, or a host that is down)."
		c.Fix = "Check the route from this host to the server (the guide's prerequisite: the runner host resolves and reaches the kcp front)."
	case errors.As(err, &dns) || strings.Contains(msg, ": no such host"):
		c.Kind, c.Cause, c.Detail = NoSuchHost, "The server's name does not resolve:", msg
		if dns != nil {
			c.Detail = dns.Error()
		}
		c.Fix = "Check DNS on this host for the kubeconfig's server name."
	}
	return c
}

// renew is the fix of a refused credential: a new kubeconfig, from where
// the guide says one comes.
const renew = kubefacts.GetKubeconfig + " Install it over the file the runner loads, mode 0600, owned by the runner's user; nothing else in the runner changes."
