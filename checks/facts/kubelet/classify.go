package kubelet

import (
	"errors"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// Kind is what a log read says of the kubelet behind it.
type Kind int

const (
	Reachable     Kind = iota
	Inconclusive       // the read says nothing about the kubelet (403, pod gone, container waiting)
	NoCertificate      // the kubelet's TLS alert: no serving certificate (kubelet-serving)
	Refused            // nothing listens at the address, or a firewall rejects
	Unreachable        // packets dropped: NAT, a firewall that drops, no route
)

// Verdict is a read's Kind and the words a finding gives it.
type Verdict struct {
	Kind  Kind
	Words string
}

// Classify reads the apiserver's answer to a log read. The apiserver's
// own text carries the dial error to the kubelet: "dial tcp ...: connect:
// connection refused", "... i/o timeout", "remote error: tls: internal error".
func Classify(err error) Verdict {
	if err == nil {
		return Verdict{Reachable, "reachable"}
	}
	msg := err.Error()
	var late *noAnswer
	switch {
	case strings.Contains(msg, "tls: internal error"):
		return Verdict{NoCertificate, "its kubelet answers TLS with `remote error: tls: internal error`, as a kubelet without a serving certificate does, " +
			"and jobs there fail with `error dialing backend: remote error: tls: internal error`"}
	case strings.Contains(msg, "connection refused"):
		return Verdict{Refused, "the connection is refused (nothing listens there, or a firewall rejects), " +
			"and jobs there fail with `error dialing backend: dial tcp <node>:10250: connect: connection refused`"}
	case strings.Contains(msg, "i/o timeout"), strings.Contains(msg, "connection timed out"), strings.Contains(msg, "no route to host"),
		strings.Contains(msg, "TLS handshake timeout"):
		return Verdict{Unreachable, "the dial goes unanswered (a provider's NAT or a firewall that drops), " +
			"and jobs there fail with `error dialing backend: dial tcp <node>:10250: i/o timeout`"}
	case errors.As(err, &late):
		return Verdict{Unreachable, "the apiserver gave no answer " + strings.TrimPrefix(late.Error(), "no answer ") +
			", as when its dial to the kubelet goes unanswered (a provider's NAT or a firewall that drops); jobs there fail with " +
			"`error dialing backend: dial tcp <node>:10250: i/o timeout`"}
	case apierrors.IsForbidden(err):
		return Verdict{Inconclusive, "the identity may not get pods/log there"}
	case apierrors.IsNotFound(err):
		return Verdict{Inconclusive, "the pod is gone"}
	}
	// A 400 may be the kubelet's (a container still waiting) or the
	// apiserver's own refusal before any dial: it proves nothing either way.
	return Verdict{Inconclusive, msg}
}
