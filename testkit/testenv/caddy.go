//go:build integration

package testenv

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Caddy is a running caddy process.
type Caddy struct {
	Port    int    // the port startCaddy waited for
	URL     string // set by StartFront: the front's base URL
	LogPath string // caddy's log (e.g. "http2: invalid Upgrade request header")
}

// startCaddy runs the real caddy binary (`caddy run --adapter caddyfile`) on
// the given site blocks and waits until 127.0.0.1:port accepts connections.
// sites must hold only site blocks: startCaddy puts in front of them the
// global options that keep Caddy on loopback and away from the network
// (no admin endpoint, no ACME, no trust-store install, no OCSP), with its
// storage in a temp dir. Caddy stops at cleanup. It fails when Caddy
// exits or does not listen in time.
func startCaddy(t testing.TB, sites string, port int) (*Caddy, error) {
	t.Helper()
	bin := Bin(t, "caddy")
	dir := t.TempDir()
	global := fmt.Sprintf(`{
	admin off
	persist_config off
	default_bind 127.0.0.1
	auto_https disable_redirects
	local_certs
	skip_install_trust
	ocsp_stapling off
	storage file_system %s
}

`, filepath.Join(dir, "data"))
	file := filepath.Join(dir, "Caddyfile")
	if err := os.WriteFile(file, []byte(global+sites), 0o600); err != nil {
		return nil, fmt.Errorf("testenv: %w", err)
	}
	// XDG dirs: caddy's default config/data locations, kept out of $HOME.
	p := startProcess(t, "caddy", dir, []string{"XDG_CONFIG_HOME=" + dir, "XDG_DATA_HOME=" + dir},
		bin, "run", "--config", file, "--adapter", "caddyfile")
	if err := waitListening(p, port, 30*time.Second); err != nil {
		p.stop()
		return nil, fmt.Errorf("testenv: caddy: %w\nCaddyfile:\n%s", err, global+sites)
	}
	return &Caddy{Port: port, LogPath: p.logPath}, nil
}

// FrontOptions chooses how StartFront's Caddy reverse-proxies the apiserver.
type FrontOptions struct {
	// HTTP11 puts `versions 1.1` in the upstream transport: the working
	// front. Without it Caddy speaks HTTP/2 to the apiserver and answers
	// every SPDY upgrade (exec, the runner) with 502, while GETs still work:
	// the guide's failure.
	HTTP11 bool
	// RequireClientCert serves https://localhost:<port> and demands a client
	// certificate from the env's CA, as the kcp front does; otherwise the
	// front is plain http://127.0.0.1:<port>. Clients must use the name
	// localhost: client_auth is tied to SNI, and the bare IP sends none.
	RequireClientCert bool
	// UpstreamCertPEM/UpstreamKeyPEM is the identity the front presents to
	// the apiserver; the admin when nil.
	UpstreamCertPEM, UpstreamKeyPEM []byte
}

// StartFront runs Caddy as a reverse proxy in front of the env's apiserver
// and returns it with URL set.
func (e *Env) StartFront(t testing.TB, o FrontOptions) *Caddy {
	t.Helper()
	var c *Caddy
	err := retryPortRace(t, func() (err error) {
		c, err = e.startFront(t, o, FreePort(t))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// startFront is one attempt of StartFront, on the given port.
func (e *Env) startFront(t testing.TB, o FrontOptions, port int) (*Caddy, error) {
	t.Helper()
	certPEM, keyPEM := o.UpstreamCertPEM, o.UpstreamKeyPEM
	if certPEM == nil {
		certPEM, keyPEM = e.AdminCertPEM()
	}
	name := fmt.Sprintf("front-%d", port)
	certFile := e.WriteFile(name+"-upstream.crt", certPEM)
	keyFile := e.WriteFile(name+"-upstream.key", keyPEM)
	versions := ""
	if o.HTTP11 {
		versions = "versions 1.1"
	}
	site, tlsBlock := fmt.Sprintf("http://127.0.0.1:%d", port), ""
	if o.RequireClientCert {
		servCrt, servKey := e.MintServing("localhost", "127.0.0.1")
		site = fmt.Sprintf("https://localhost:%d", port)
		tlsBlock = fmt.Sprintf(`tls %s %s {
		client_auth {
			mode require_and_verify
			trust_pool file %s
		}
	}`, e.WriteFile(name+"-serving.crt", servCrt), e.WriteFile(name+"-serving.key", servKey), e.CAFile)
	}
	// flush_interval -1: stream watch/log responses instead of buffering.
	sites := fmt.Sprintf(`%s {
	bind 127.0.0.1
	%s
	reverse_proxy %s {
		flush_interval -1
		transport http {
			%s
			tls_trust_pool file %s
			tls_client_auth %s %s
		}
	}
}
`, site, tlsBlock, e.URL, versions, e.CAFile, certFile, keyFile)
	c, err := startCaddy(t, sites, port)
	if err != nil {
		return nil, err
	}
	c.URL = site
	return c, nil
}

// Log returns caddy's log so far.
func (c *Caddy) Log() string {
	b, _ := os.ReadFile(c.LogPath)
	return strings.TrimSpace(string(b))
}
