package kubeletreach

import (
	"errors"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

type kind int

const (
	reachable     kind = iota
	inconclusive       // the read says nothing about the kubelet (403, pod gone, container waiting)
	noCertificate      // the kubelet's TLS alert: no serving certificate (kubelet-serving)
	refused            // nothing listens at the address, or a firewall rejects
	unreachable        // packets dropped: NAT, a firewall that drops, no route
)

type verdict struct {
	kind  kind
	words string
}

// classify reads the apiserver's answer to a log read. The apiserver's
// own text carries the dial error to the kubelet: "dial tcp ...: connect:
// connection refused", "... i/o timeout", "remote error: tls: internal error".
func classify(err error) verdict {
	if err == nil {
		return verdict{reachable, "reachable"}
	}
	msg := err.Error()
	var late *noAnswer
	switch {
	case strings.Contains(msg, "tls: internal error"):
		return verdict{noCertificate, "its kubelet answers TLS with `remote error: tls: internal error`, as a kubelet without a serving certificate does, " +
			"and jobs there fail with `error dialing backend: remote error: tls: internal error`"}
	case strings.Contains(msg, "connection refused"):
		return verdict{refused, "the connection is refused (nothing listens there, or a firewall rejects), " +
			"and jobs there fail with `error dialing backend: dial tcp <node>:10250: connect: connection refused`"}
	case strings.Contains(msg, "i/o timeout"), strings.Contains(msg, "connection timed out"), strings.Contains(msg, "no route to host"),
		strings.Contains(msg, "TLS handshake timeout"):
		return verdict{unreachable, "the dial goes unanswered (a provider's NAT or a firewall that drops), " +
			"and jobs there fail with `error dialing backend: dial tcp <node>:10250: i/o timeout`"}
	case errors.As(err, &late):
		return verdict{unreachable, "the apiserver gave no answer " + strings.TrimPrefix(late.Error(), "no answer ") +
			", as when its dial to the kubelet goes unanswered (a provider's NAT or a firewall that drops); jobs there fail with " +
			"`error dialing backend: dial tcp <node>:10250: i/o timeout`"}
	case apierrors.IsForbidden(err):
		return verdict{inconclusive, "the identity may not get pods/log there"}
	case apierrors.IsNotFound(err):
		return verdict{inconclusive, "the pod is gone"}
	}
	// A 400 may be the kubelet's (a container still waiting) or the
	// apiserver's own refusal before any dial: it proves nothing either way.
	return verdict{inconclusive, msg}
}
