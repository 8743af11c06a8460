package e2e

import (
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/internal/redact"
	"github.com/socialwebcomputer/doctor/testkit/testenv"
	"github.com/socialwebcomputer/doctor/testkit/testroot"
)

// echoedToken is a bearer token no pattern knows for one: no prefix, no
// key that names it.
const echoedToken = "Q9xEchoTok4Lm7Zp2Wb8Kn3Rt"

// An apiserver front that echoes the request's Authorization header in
// every answer, in its body (the user name of the self-review, every
// error's message) and its headers: the token never reaches an output
// format, stderr at -v 8, the textfile or the bundle, nor any 12-character
// piece of it; the bundle holds its stand-in where the echo was.
func TestEchoedCredentialNeverLeaves(t *testing.T) {
	conf, ca := hostileTLS(t)
	echo := func(w io.Writer, r *http.Request) bool {
		auth := r.Header.Get("Authorization")
		var status, body string
		switch {
		case strings.HasSuffix(r.URL.Path, "/selfsubjectreviews"):
			status, body = "200 OK", fmt.Sprintf(`{"kind":"SelfSubjectReview","apiVersion":"authentication.k8s.io/v1","status":{"userInfo":`+
				`{"username":%q,"groups":["socialweb.computer:cluster-owners","system:authenticated"]}}}`, auth)
		case strings.HasSuffix(r.URL.Path, "/selfsubjectaccessreviews"):
			status, body = "200 OK", `{"kind":"SelfSubjectAccessReview","apiVersion":"authorization.k8s.io/v1","status":{"allowed":true}}`
		default:
			status, body = "403 Forbidden", fmt.Sprintf(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403,`+
				`"message":"you sent %s to %s"}`, strings.ReplaceAll(auth, `"`, ``), r.URL.Path)
		}
		fmt.Fprintf(w, "HTTP/1.1 %s\r\nContent-Type: application/json\r\nWarning: 299 - \"saw %s\"\r\nWww-Authenticate: Bearer realm=%q\r\nContent-Length: %d\r\n\r\n%s",
			status, auth, auth, len(body), body)
		return true
	}
	addr := testenv.HostileHTTP{TLS: conf, Honest: echo}.Serve(t)
	kubeconfig := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: c
  cluster:
    server: https://%s
    certificate-authority-data: %s
users:
- name: u
  user:
    token: %s
contexts:
- name: c
  context: {cluster: c, user: u}
current-context: c
`, addr, base64.StdEncoding.EncodeToString(ca.CertPEM), echoedToken)
	root := testroot.New(t)
	root.GuideRunner(testroot.GuideConfig, []byte(kubeconfig))
	outputs := secretRunOutputs(t, root.Dir, time.Now().UTC())
	echoed := false
	for name, out := range outputs {
		if piece := secretPiece(out, echoedToken); piece != "" {
			t.Errorf("%s: the echoed token is in it as %q:\n%s", name, piece, around(out, piece))
		}
		echoed = echoed || strings.HasSuffix(name, "tape.json") && strings.Contains(out, redact.StandIn("Bearer "+echoedToken))
	}
	if !echoed {
		t.Error("the bundle holds no stand-in of the echoed header: the echo was not received")
	}
}
