// No build tag: the hostile servers need no apiserver.

package testenv

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"path"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
)

// ObjectFlood is an apiserver front that authenticates the runner, allows
// every access review, and answers every list with Items empty objects
// (and a rules review with Items empty rules): a few bytes each on the
// wire, well under every byte bound, and a corev1.Pod of 1,240 bytes each
// for a client that decodes them. Protobuf answers in the apiserver's
// protobuf envelope, else JSON. A named object is not found.
type ObjectFlood struct {
	Items    int
	Protobuf bool
}

// listKinds are the list kinds of the resources doctor lists.
var listKinds = map[string][2]string{
	"pods": {"v1", "PodList"}, "nodes": {"v1", "NodeList"}, "events": {"v1", "EventList"}, "namespaces": {"v1", "NamespaceList"},
	"resourcequotas": {"v1", "ResourceQuotaList"}, "limitranges": {"v1", "LimitRangeList"},
	"daemonsets": {"apps/v1", "DaemonSetList"}, "priorityclasses": {"scheduling.k8s.io/v1", "PriorityClassList"},
	"certificatesigningrequests": {"certificates.k8s.io/v1", "CertificateSigningRequestList"},
	"secrets":                    {"meta.k8s.io/v1", "PartialObjectMetadataList"}, "configmaps": {"meta.k8s.io/v1", "PartialObjectMetadataList"},
}

// Answer is a HostileHTTP.Honest: it answers every request.
func (f ObjectFlood) Answer(w io.Writer, r *http.Request) bool {
	resource := path.Base(r.URL.Path)
	switch {
	case strings.HasSuffix(r.URL.Path, "/selfsubjectreviews"):
		HonestJSON(w, `{"kind":"SelfSubjectReview","apiVersion":"authentication.k8s.io/v1","status":{"userInfo":`+
			`{"username":"did:plc:hostile","groups":["socialweb.computer:cluster-owners","system:authenticated"]}}}`)
	case strings.HasSuffix(r.URL.Path, "/selfsubjectaccessreviews"):
		HonestJSON(w, `{"kind":"SelfSubjectAccessReview","apiVersion":"authorization.k8s.io/v1","status":{"allowed":true}}`)
	case strings.HasSuffix(r.URL.Path, "/selfsubjectrulesreviews"):
		f.write(w, "authorization.k8s.io/v1", "SelfSubjectRulesReview", "status", "resourceRules", 2, 2)
	case r.Method == http.MethodGet && listKinds[resource] != [2]string{}:
		k := listKinds[resource]
		f.write(w, k[0], k[1], "", "items", 0, 2)
	default:
		body := fmt.Sprintf(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404,"message":"%s not found"}`, resource)
		fmt.Fprintf(w, "HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	}
	return true
}

// FloodJSON is the JSON list of n empty items of a kind: what ObjectFlood
// answers, and what a bundle that recorded such answers whole holds.
func FloodJSON(apiVersion, kind string, n int) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"kind":%q,"apiVersion":%q,"metadata":{},"items":[`, kind, apiVersion)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("{}")
	}
	b.WriteString("]}")
	return b.Bytes()
}

// write answers an object whose repeated field (field number num in
// protobuf, under the message at wrapper number wrap; 0 for none) holds
// f.Items empty messages.
func (f ObjectFlood) write(w io.Writer, apiVersion, kind, jsonWrap, jsonField string, wrap, num protowire.Number) {
	if !f.Protobuf {
		var body []byte
		if jsonWrap == "" {
			body = FloodJSON(apiVersion, kind, f.Items)
		} else {
			items := bytes.TrimSuffix(bytes.SplitN(FloodJSON(apiVersion, kind, f.Items), []byte(`"items":`), 2)[1], []byte("}"))
			body = fmt.Appendf(nil, `{"kind":%q,"apiVersion":%q,%q:{%q:%s}}`, kind, apiVersion, jsonWrap, jsonField, items)
		}
		fmt.Fprintf(w, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", len(body))
		_, _ = w.Write(body)
		return
	}
	var raw []byte
	for range f.Items {
		raw = protowire.AppendTag(raw, num, protowire.BytesType)
		raw = protowire.AppendVarint(raw, 0)
	}
	if wrap != 0 {
		raw = protowire.AppendBytes(protowire.AppendTag(nil, wrap, protowire.BytesType), raw)
	}
	var tm, unk []byte
	tm = protowire.AppendString(protowire.AppendTag(tm, 1, protowire.BytesType), apiVersion)
	tm = protowire.AppendString(protowire.AppendTag(tm, 2, protowire.BytesType), kind)
	unk = protowire.AppendBytes(protowire.AppendTag(unk, 1, protowire.BytesType), tm)
	unk = protowire.AppendBytes(protowire.AppendTag(unk, 2, protowire.BytesType), raw)
	body := append([]byte{0x6b, 0x38, 0x73, 0x00}, unk...)
	fmt.Fprintf(w, "HTTP/1.1 200 OK\r\nContent-Type: application/vnd.kubernetes.protobuf\r\nContent-Length: %d\r\n\r\n", len(body))
	_, _ = w.Write(body)
}
