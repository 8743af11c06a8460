package docker

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"path"
	"strings"
	"syscall"
	"time"

	"github.com/socialwebcomputer/doctor/checks/facts/hostfacts"
	"github.com/socialwebcomputer/doctor/internal/hostio"
)

// maxBody bounds what doctor reads of a daemon's answer: /_ping is "OK",
// /version a few hundred bytes.
const maxBody = 64 << 10

// Version is what the daemon's GET /version says of itself.
type Version struct {
	Version       string `json:"Version"`
	APIVersion    string `json:"ApiVersion"`
	MinAPIVersion string `json:"MinAPIVersion"`
	Os            string `json:"Os"`
	Arch          string `json:"Arch"`
	KernelVersion string `json:"KernelVersion"`
}

// Platform is "linux/amd64".
func (v *Version) Platform() string { return v.Os + "/" + v.Arch }

func (v *Version) String() string {
	return fmt.Sprintf("Docker Engine %s (API %s, %s)", v.Version, v.APIVersion, v.Platform())
}

// Probe is the answer of the daemon to GET /_ping and GET /version.
type Probe struct {
	Took    time.Duration
	Ping    string // the body of /_ping, "OK" from a daemon
	Status  int    // of the failing request, when the daemon answered with an error
	Body    string // its first line
	Version *Version
	Err     error // dial, TLS or read failure
	Request string
	Timeout time.Duration // the probe's own deadline, both requests together
}

// probe asks the daemon at network/addr (a unix socket's local path, or
// host:port) through Env.Dial; ctx carries the probe's own deadline,
// timeout from now.
func probe(ctx context.Context, timeout time.Duration, env *hostio.Env, network, addr string, tlsConf *tls.Config) *Probe {
	client, scheme, host, done := newClient(env, network, addr, tlsConf)
	defer done()
	pr := &Probe{Timeout: timeout}
	start := time.Now()
	get := func(p string) ([]byte, bool) {
		pr.Request = "GET " + p
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, scheme+"://"+host+p, nil)
		if err != nil {
			pr.Err = err
			return nil, false
		}
		resp, err := client.Do(req)
		if err != nil {
			pr.Err = unwrapURL(err)
			return nil, false
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
		if err == nil && len(b) > maxBody {
			err = fmt.Errorf("answer larger than %d KiB; doctor stopped reading", maxBody>>10)
		}
		if err != nil {
			pr.Err = err
			return nil, false
		}
		if resp.StatusCode != http.StatusOK {
			pr.Status, pr.Body = resp.StatusCode, firstLine(b)
			return nil, false
		}
		return b, true
	}
	defer func() { pr.Took = time.Since(start) }()
	b, ok := get("/_ping")
	if !ok {
		return pr
	}
	pr.Ping = strings.TrimSpace(string(b))
	if b, ok = get("/version"); !ok {
		return pr
	}
	v := &Version{}
	if err := json.Unmarshal(b, v); err != nil || v.Version == "" {
		pr.Err = fmt.Errorf("GET /version: not the Docker Engine API's answer: %q", firstLine(b))
		return pr
	}
	pr.Version = v
	return pr
}

// newClient is an HTTP client of the daemon at network/addr (a unix
// socket's local path, or host:port) through Env.Dial, with TLS when
// tlsConf is set: one connection, no redirects. It returns the scheme and
// Host header a request takes, and the cleanup.
func newClient(env *hostio.Env, network, addr string, tlsConf *tls.Config) (*http.Client, string, string, func()) {
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) { return env.Dial(ctx, network, addr) },
		// One connection, closed after the probe.
		DisableKeepAlives: true,
	}
	scheme := "http"
	if tlsConf != nil {
		scheme = "https"
		tr.DialTLSContext = func(ctx context.Context, _, _ string) (net.Conn, error) {
			c, err := env.Dial(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			tc := tls.Client(c, tlsConf)
			if err := tc.HandshakeContext(ctx); err != nil {
				c.Close()
				return nil, err
			}
			return tc, nil
		}
	}
	client := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	host := "docker" // the Host header of a unix socket request, as moby's DummyHost stands in
	if network == "tcp" {
		host = addr
	}
	return client, scheme, host, tr.CloseIdleConnections
}

// TLSError is the runner's failure to build its Docker client's TLS
// configuration: the file it names, and the error in the words of
// github.com/docker/go-connections tlsconfig.Client (v0.8.1, config.go:106,
// 157, 221; the same since v0.5.0, runner v17.11 on), which the runner's job
// log carries.
type TLSError struct {
	File string
	Err  error
}

func (e *TLSError) Error() string { return e.Err.Error() }

func (e *TLSError) Unwrap() error { return e.Err }

// tlsConfig is what the runner's configureTransport builds
// (helpers/docker/options.go, v19.3.0) when TLSVerify is set: ca.pem,
// cert.pem and key.pem of CertPath, exclusive root pool, TLS 1.2 at least.
// The files are read as the runner reads them (hostfacts.RunnerReader), under
// --root, in tlsconfig.Client's order (CA, certificate, key), so the first
// that fails is the one the runner names.
func tlsConfig(r hostfacts.RunnerReader, a *Address) (*tls.Config, *TLSError) {
	c := &tls.Config{MinVersion: tls.VersionTLS12}
	if h, _, err := net.SplitHostPort(a.HostPort); err == nil {
		c.ServerName = h
	}
	if a.CertPath == "" {
		return c, nil // system roots and no client certificate, as tlsconfig.Client gives
	}
	// A relative tls_cert_path (or DOCKER_CERT_PATH) names files the
	// runner opens from its working directory (it changes to
	// --working-directory at start, commands/multi.go, v19.3.0); its
	// errors name them as it was given.
	dir := a.CertPath
	if !path.IsAbs(dir) && r.RA != nil && r.RA.Cwd != "" {
		dir = path.Join(r.RA.Cwd, dir)
	}
	caName := path.Join(a.CertPath, "ca.pem")
	caFile := path.Join(dir, "ca.pem")
	ca, err := r.Read(caFile, hostio.KindPEM)
	if err != nil {
		return nil, &TLSError{caFile, fmt.Errorf("could not read CA certificate %q: %w", caName, asOpened(caName, err))}
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, &TLSError{caFile, fmt.Errorf("failed to append certificates from PEM file: %q", caName)}
	}
	c.RootCAs = pool
	certFile, keyFile := path.Join(dir, "cert.pem"), path.Join(dir, "key.pem")
	cert, err := r.Read(certFile, hostio.KindPEM)
	if err != nil {
		return nil, &TLSError{certFile, fmt.Errorf("could not load X509 key pair: %w", asOpened(path.Join(a.CertPath, "cert.pem"), err))}
	}
	key, err := r.Read(keyFile, hostio.KindPEM)
	if err != nil {
		return nil, &TLSError{keyFile, fmt.Errorf("could not load X509 key pair: %w", asOpened(path.Join(a.CertPath, "key.pem"), err))}
	}
	pair, err := tls.X509KeyPair(cert, key)
	if err != nil {
		return nil, &TLSError{certFile, fmt.Errorf("could not load X509 key pair: %w", err)}
	}
	c.Certificates = []tls.Certificate{pair}
	return c, nil
}

// asOpened gives a read's failure by errno as os.ReadFile gives it to the
// runner ("open /certs/ca.pem: no such file or directory"), by the path the
// runner opens; another failure (too large, not a regular file) is
// doctor's own and says so.
func asOpened(p string, err error) error {
	// A bundle's replay gives the file's error back as its kind
	// (fs.ErrNotExist, fs.ErrPermission), not the errno: the same words
	// either way, so analyze says what the live run said.
	var errno syscall.Errno
	switch {
	case errors.As(err, &errno):
	case errors.Is(err, fs.ErrNotExist):
		errno = syscall.ENOENT
	case errors.Is(err, fs.ErrPermission):
		errno = syscall.EACCES
	default:
		return err
	}
	return &fs.PathError{Op: "open", Path: p, Err: errno}
}

func firstLine(b []byte) string {
	s, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// unwrapURL drops net/http's `Get "http://docker/_ping":` prefix, which
// names doctor's request, not the daemon.
func unwrapURL(err error) error {
	var ue interface{ Unwrap() error }
	if errors.As(err, &ue) {
		if inner := errors.Unwrap(err); inner != nil && strings.HasPrefix(err.Error(), "Get ") {
			return inner
		}
	}
	return err
}
