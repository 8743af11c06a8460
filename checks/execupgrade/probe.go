package execupgrade

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"k8s.io/client-go/rest"

	"github.com/socialwebcomputer/doctor/checks/client/kube/keep"
	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/internal/redact"
)

// Protocol is one way of upgrading pods/exec: SPDY is what the runner's
// client-go remotecommand executor speaks; WebSocket is what kubectl ≥1.30
// speaks, and the apiserver translates it to SPDY for the kubelet.
type Protocol string

const (
	SPDY      Protocol = "SPDY/3.1"
	WebSocket Protocol = "WebSocket (v5.channel.k8s.io)"
)

// Probe is what one upgrade request got back.
type Probe struct {
	Protocol Protocol
	URL      string
	Status   int    // 0 when no response
	Server   string // the Server header: names the proxy that answered
	Body     string // the first bytes, for evidence
	Err      error
	Took     time.Duration
}

// Passed reports whether the upgrade request crossed every proxy and reached
// the apiserver's handler: a 404 JSON Status for the pod that does not
// exist, a 400 Status from the apiserver, or a 101 switch.
func (p Probe) Passed() bool {
	switch p.Status {
	case http.StatusSwitchingProtocols:
		return true
	case http.StatusNotFound, http.StatusBadRequest:
		return isStatusJSON(p.Body) && !strings.Contains(p.Body, "Upgrade request required")
	}
	return false
}

func (p Probe) String() string {
	switch {
	case p.Err != nil:
		return fmt.Sprintf("%s: %v (after %s)", p.Protocol, p.Err, p.Took.Round(time.Millisecond))
	case p.Server != "":
		return fmt.Sprintf("%s: %d %s, Server: %s: %s", p.Protocol, p.Status, http.StatusText(p.Status), p.Server, p.Body)
	}
	return fmt.Sprintf("%s: %d %s: %s", p.Protocol, p.Status, http.StatusText(p.Status), p.Body)
}

// ExecURL is the pods/exec URL under the server's base (the kcp mount path
// included), as client-go builds it.
func ExecURL(cfg *rest.Config, ns, pod string, command ...string) (*url.URL, error) {
	base, err := url.Parse(strings.TrimSuffix(cfg.Host, "/"))
	if err != nil {
		return nil, err
	}
	if base.Scheme == "" {
		base, err = url.Parse("https://" + strings.TrimSuffix(cfg.Host, "/"))
		if err != nil {
			return nil, err
		}
	}
	u := *base
	u.Path = strings.TrimSuffix(base.Path, "/") + "/api/v1/namespaces/" + ns + "/pods/" + pod + "/exec"
	q := url.Values{"stdout": {"true"}, "stderr": {"true"}}
	for _, c := range command {
		q.Add("command", c)
	}
	u.RawQuery = q.Encode()
	return &u, nil
}

// Upgrade sends one upgrade request the way the given protocol's client
// does, over HTTP/1.1 (as client-go's SPDY transport makes it: an HTTP/2
// hop makes the Upgrade header meaningless), with the kubeconfig's TLS
// identity. It reads a bounded amount of the answer and closes.
// who names the credential on a bundle's tape (kubefacts.APIClient.TapeKey).
func Upgrade(ctx context.Context, env *hostio.Env, cfg *rest.Config, who string, u *url.URL, proto Protocol) Probe {
	// A bundle keeps what the upgrade got back: analyze replays it.
	p, _ := hostio.ProbeErr(env, "exec-upgrade", string(proto)+" "+redact.StripUserinfo(u.String())+" as "+who,
		func() (Probe, error) { return upgrade(ctx, env, cfg, u, proto), nil })
	return p
}

func upgrade(ctx context.Context, env *hostio.Env, cfg *rest.Config, u *url.URL, proto Protocol) Probe {
	pr := Probe{Protocol: proto, URL: u.String()}
	start := time.Now()
	defer func() { pr.Took = time.Since(start) }()
	conn, err := dialHTTP1(ctx, env, cfg, u)
	if err != nil {
		pr.Err = err
		pr.Took = time.Since(start)
		return pr
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	req, err := upgradeRequest(ctx, cfg, u, proto)
	if err != nil {
		pr.Err = err
		return pr
	}
	if err := req.Write(conn); err != nil {
		pr.Err = fmt.Errorf("writing the request: %w", err)
		pr.Took = time.Since(start)
		return pr
	}
	pr = readAnswer(pr, conn, req)
	pr.Took = time.Since(start)
	return pr
}

// maxAnswer bounds what one upgrade answer may cost: the status line and
// headers, and the first bytes of the body.
const maxAnswer = 1 << 20

// readAnswer reads the answer to req from r, a bounded amount of it, and
// keeps what evidence needs. Every byte a proxy or apiserver sends passes
// through here, so the fuzz test drives it with arbitrary answers.
func readAnswer(pr Probe, r io.Reader, req *http.Request) Probe {
	// The request's own credential, wherever the answer echoes it, is
	// replaced before anything of the answer is kept.
	sec := keep.RequestSecrets(req)
	resp, err := http.ReadResponse(bufio.NewReader(io.LimitReader(r, maxAnswer)), req)
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		pr.Err = fmt.Errorf("the connection closed with no response (empty server response)")
		return pr
	case err != nil && hostio.IsTimeout(err):
		pr.Err = fmt.Errorf("reading the response: %w", err)
		return pr
	case err != nil:
		// net/http quotes the line it could not parse ("malformed HTTP
		// response %q"): the server's bytes, cut and redacted like the rest.
		pr.Err = fmt.Errorf("reading the response: %s", remoteText(sec.ReplaceString(err.Error()), 300))
		return pr
	}
	// What a remote server says is cut and redacted before it is kept:
	// the Server header names a proxy in a word or two, and a hostile one
	// could put anything there.
	pr.Status, pr.Server = resp.StatusCode, remoteText(sec.ReplaceString(resp.Header.Get("Server")), 80)
	if resp.StatusCode != http.StatusSwitchingProtocols {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		pr.Body = remoteText(string(sec.Replace(b)), 300)
	}
	resp.Body.Close()
	return pr
}

func upgradeRequest(ctx context.Context, cfg *rest.Config, u *url.URL, proto Protocol) (*http.Request, error) {
	method := http.MethodPost // the runner's SPDY executor posts
	if proto == WebSocket {
		method = http.MethodGet // a WebSocket handshake is a GET
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("User-Agent", "gitlab-runner-doctor")
	switch proto {
	case SPDY:
		req.Header.Set("Upgrade", "SPDY/3.1")
		for _, v := range []string{"v4.channel.k8s.io", "v3.channel.k8s.io", "v2.channel.k8s.io", "channel.k8s.io"} {
			req.Header.Add("X-Stream-Protocol-Version", v)
		}
	case WebSocket:
		key := make([]byte, 16)
		_, _ = rand.Read(key)
		req.Header.Set("Upgrade", "websocket")
		req.Header.Set("Sec-WebSocket-Version", "13")
		req.Header.Set("Sec-WebSocket-Key", base64.StdEncoding.EncodeToString(key))
		req.Header.Set("Sec-WebSocket-Protocol", "v5.channel.k8s.io, v4.channel.k8s.io")
	}
	if cfg.BearerToken != "" {
		req.Header.Set("Authorization", "Bearer "+cfg.BearerToken)
	}
	return req, nil
}

// dialHTTP1 opens the connection, TLS with ALPN http/1.1 only.
func dialHTTP1(ctx context.Context, env *hostio.Env, cfg *rest.Config, u *url.URL) (net.Conn, error) {
	host := u.Host
	if u.Port() == "" {
		if u.Scheme == "http" {
			host = net.JoinHostPort(u.Hostname(), "80")
		} else {
			host = net.JoinHostPort(u.Hostname(), "443")
		}
	}
	raw, err := env.Dial(ctx, "tcp", host)
	if err != nil {
		return nil, err
	}
	if u.Scheme == "http" {
		return raw, nil
	}
	tc, err := rest.TLSConfigFor(cfg)
	if err != nil {
		raw.Close()
		return nil, err
	}
	if tc == nil {
		tc = &tls.Config{}
	}
	tc = tc.Clone()
	tc.NextProtos = []string{"http/1.1"}
	if tc.ServerName == "" {
		tc.ServerName = u.Hostname()
	}
	conn := tls.Client(raw, tc)
	if err := conn.HandshakeContext(ctx); err != nil {
		raw.Close()
		return nil, fmt.Errorf("TLS handshake: %w", err)
	}
	return conn, nil
}

func isStatusJSON(body string) bool {
	var st struct {
		Kind string `json:"kind"`
	}
	return json.Unmarshal([]byte(body), &st) == nil && st.Kind == "Status"
}

// remoteText is text a server sent, made fit to print: one line without
// control characters, valid UTF-8, at most max runes, and redacted.
func remoteText(s string, max int) string { return redact.RemoteText(s, max) }
