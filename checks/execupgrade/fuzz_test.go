package execupgrade

import (
	"bytes"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"k8s.io/client-go/rest"
)

// Secrets a hostile proxy plants in its answer: a bearer token in the
// Server header and a runner token in the body. Neither, nor any
// 12-character piece of either, may reach the probe's evidence.
const (
	plantedBearer = "brSECRETq8w7e6r5t4y3u2"
	plantedToken  = "glrt-tkSECRETz9x8c7v6b5n4"
)

// FuzzReadAnswer feeds readAnswer the answer to an upgrade request: raw
// bytes as they came, or a status line, a Server header and a body with
// secrets planted. No panic; the Server header, the body and the error
// are each one bounded line of printable, valid UTF-8; planted secrets
// never survive; Passed and String hold on anything.
func FuzzReadAnswer(f *testing.F) {
	f.Add("101 Switching Protocols", []byte("Caddy"), []byte(""), false)
	f.Add("502 Bad Gateway", []byte("Caddy"), []byte("unexpected EOF"), false)
	f.Add("404 Not Found", []byte(""), []byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`), false)
	f.Add("400 Bad Request", []byte("nginx"), []byte(`{"kind":"Status","message":"Upgrade request required"}`), false)
	f.Add("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", []byte{}, []byte{}, true)
	f.Add("HTTP/1.1 glrt-", []byte("tkSECRETz9x8c7v6b5n4"), []byte("\r\n\r\n"), true)
	f.Add("HTTP/1.1 401 Unauthorized\r\nServer: \x1b[2J\x1b]0;pwned\x07", []byte(strings.Repeat("A", 5000)), []byte("\r\n\r\n"), true)
	f.Add("garbage", []byte("\x00\xff"), []byte("\r\n"), true)
	u, _ := url.Parse("https://127.0.0.1:6443/api/v1/namespaces/gitlab-runner/pods/x/exec?stdout=true")
	cfg := &rest.Config{Host: "https://127.0.0.1:6443", BearerToken: "not-planted"}
	f.Fuzz(func(t *testing.T, status string, server, body []byte, raw bool) {
		var in []byte
		if raw {
			in = append(append([]byte(status), server...), body...)
		} else {
			in = fmt.Appendf(nil, "HTTP/1.1 %s\r\nServer: %s Bearer %s\r\nContent-Length: %d\r\n\r\n%s %s",
				status, server, plantedBearer, len(body)+1+len(plantedToken), body, plantedToken)
		}
		for _, proto := range []Protocol{SPDY, WebSocket} {
			req, err := upgradeRequest(t.Context(), cfg, u, proto)
			if err != nil {
				t.Fatal(err)
			}
			pr := readAnswer(Probe{Protocol: proto, URL: u.String()}, bytes.NewReader(in), req)
			printable(t, "Server", pr.Server, 81)
			printable(t, "Body", pr.Body, 301)
			if pr.Err != nil {
				printable(t, "Err", pr.Err.Error(), 400)
			}
			_ = pr.Passed()
			line := pr.String()
			if len(line) > 2048 {
				t.Fatalf("evidence of %d bytes", len(line))
			}
			if !plantedOnlyInRecognisableForm(in) {
				continue
			}
			for _, s := range []string{plantedBearer, strings.TrimPrefix(plantedToken, "glrt-")} {
				for i := 0; i+12 <= len(s); i++ {
					if strings.Contains(line, s[i:i+12]) {
						t.Fatalf("planted secret piece %q survived: %q", s[i:i+12], line)
					}
				}
			}
		}
	})
}

func printable(t *testing.T, what, s string, maxRunes int) {
	t.Helper()
	if !utf8.ValidString(s) || utf8.RuneCountInString(s) > maxRunes {
		t.Fatalf("%s is not one bounded line: %d runes, %q", what, utf8.RuneCountInString(s), s)
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			t.Fatalf("%s keeps control character %U: %q", what, r, s)
		}
	}
}

// plantedOnlyInRecognisableForm says whether every piece of a planted
// secret in the answer sits inside a form a redactor can know: the runner
// token with its glrt- prefix, or the bearer after "Bearer ". A raw answer
// the fuzzer wrote may carry "0tkSECRETz9x80" as a bare status line (CI
// found that); bare, it is any server's text, which no redactor can tell
// from a secret, so the property is asserted only where the secret is
// recognisable.
func plantedOnlyInRecognisableForm(in []byte) bool {
	rest := strings.ReplaceAll(string(in), plantedToken, "")
	rest = strings.ReplaceAll(rest, "Bearer "+plantedBearer, "")
	for _, s := range []string{plantedBearer, strings.TrimPrefix(plantedToken, "glrt-")} {
		for i := 0; i+12 <= len(s); i++ {
			if strings.Contains(rest, s[i:i+12]) {
				return false
			}
		}
	}
	return true
}
