package execupgrade

import (
	"bytes"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"k8s.io/client-go/rest"
)

// An upgrade answer that echoes the bearer token doctor sent, in shapes no
// pattern knows for a token (a Server header, a Status message, a status
// line it cannot parse), keeps its stand-in, never the token.
func TestReflectedTokenIsNotKept(t *testing.T) {
	const token = "Q7mRsEchoReflected11xyz" // no prefix, no key name: no pattern finds it
	u, _ := url.Parse("https://127.0.0.1:6443/api/v1/namespaces/ci/pods/x/exec?stdout=true")
	cfg := &rest.Config{Host: "https://127.0.0.1:6443", BearerToken: token}
	body := fmt.Sprintf(`{"kind":"Status","apiVersion":"v1","status":"Failure","code":404,"message":"pods \"x\" not found for %s"}`, token)
	for _, answer := range []string{
		fmt.Sprintf("HTTP/1.1 404 Not Found\r\nServer: echo/%s\r\nContent-Length: %d\r\n\r\n%s", token, len(body), body),
		fmt.Sprintf("HTTP/1.1 4%s\r\n\r\n", token),
	} {
		req, err := upgradeRequest(t.Context(), cfg, u, SPDY)
		if err != nil {
			t.Fatal(err)
		}
		pr := readAnswer(Probe{Protocol: SPDY, URL: u.String()}, bytes.NewReader([]byte(answer)), req)
		if line := pr.String(); strings.Contains(line, token[:12]) || strings.Contains(line, token[len(token)-12:]) {
			t.Errorf("the token is kept: %s", line)
		}
	}
}
