package gitlab

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/socialwebcomputer/doctor/internal/hostio"
)

// Failure is the first stage that failed, at which address, and why.
type Failure struct {
	Stage Stage
	Addr  string // the address dialled, or the name when DNS failed
	Err   error
	// Cert is set when the handshake ended because the certificate was
	// refused; the problems say why, in the runner's own words.
	Cert *CertCheck
	// Files is set when the runner's own TLS files, not the network, failed.
	Files bool
}

func (f *Failure) Error() string { return fmt.Sprintf("%s %s: %v", f.Stage, f.Addr, f.Err) }

// Conn is an open connection to GitLab, after TLS when the scheme is https.
// Replaying a bundle, it has no net.Conn: its answers come from the tape.
type Conn struct {
	net.Conn
	Addr   string      // ip:port connected to
	Cert   *CertCheck  // nil for http
	env    *hostio.Env // replays from the tape; records the Date of each answer, for clock-skew
	origin string      // the target's origin, the key of that record
}

// Close closes the connection; a replayed one has none.
func (c *Conn) Close() error {
	if c.Conn == nil {
		return nil
	}
	return c.Conn.Close()
}

// connected is what a bundle keeps of a Connect: where, the certificate,
// or the stage that failed.
type connected struct {
	Addr string                     `json:"addr,omitempty"`
	Cert *CertCheck                 `json:"cert,omitempty"`
	Fail *hostio.Recorded[*Failure] `json:"fail,omitempty"`
}

// TLSFiles are the runner's tls-ca-file, tls-cert-file and tls-key-file,
// and how the runner reads them (hostfacts.RunnerReader; nil reads as doctor).
type TLSFiles struct {
	CA, Cert, Key string
	Reader        FileReader
}

// FileReader reads a file as the runner would, or refuses what the runner
// may not read (hostfacts.RunnerReader).
type FileReader interface {
	Read(p string, kind hostio.FileKind) ([]byte, error)
}

// maxAddrs bounds the TCP stage: with a deadline per address, trying every
// record of a long answer would outlast the check.
const maxAddrs = 2

// DialOrder splits addresses into those doctor dials, in order, and tailnet
// addresses it leaves alone because this host is not on the tailnet.
func DialOrder(addrs []netip.Addr, onTailnet bool) (dial, skipped []netip.Addr) {
	for _, a := range addrs {
		if IsTailnet(a) && !onTailnet {
			skipped = append(skipped, a)
			continue
		}
		dial = append(dial, a)
	}
	if len(dial) > maxAddrs {
		dial = dial[:maxAddrs]
	}
	return dial, skipped
}

// Connect opens TCP to the first address that answers, then TLS for https.
// Each stage runs under its own deadline; the first that fails is returned.
func Connect(ctx context.Context, env *hostio.Env, t *Target, addrs []netip.Addr, dl Deadlines) (*Conn, *Failure) {
	var live *Conn
	rec, err := hostio.Probe(env, "gitlab-connect", t.Origin()+" "+Join(addrs), func() (connected, error) {
		c, f := connect(ctx, env, t, addrs, dl)
		if f != nil {
			return connected{Fail: &hostio.Recorded[*Failure]{Value: f}}, nil
		}
		live = c
		return connected{Addr: c.Addr, Cert: c.Cert}, nil
	})
	switch {
	case err != nil:
		return nil, &Failure{Stage: StageTCP, Addr: t.Addr(), Err: err}
	case rec.Fail != nil:
		return nil, rec.Fail.Value
	case live != nil:
		live.env, live.origin = env, t.Origin()
		return live, nil
	}
	return &Conn{Addr: rec.Addr, Cert: rec.Cert, env: env, origin: t.Origin()}, nil
}

func connect(ctx context.Context, env *hostio.Env, t *Target, addrs []netip.Addr, dl Deadlines) (*Conn, *Failure) {
	on, how := OnTailnet(env)
	dial, skipped := DialOrder(addrs, on)
	if len(dial) == 0 {
		return nil, &Failure{Stage: StageTCP, Addr: Join(skipped),
			Err: fmt.Errorf("only tailnet addresses, and %s, so they cannot be reached from here", how)}
	}
	var errs []string
	var conn net.Conn
	var addr string
	for _, a := range dial {
		addr = net.JoinHostPort(a.String(), t.Port)
		cctx, cancel := context.WithTimeout(ctx, dl.TCP)
		c, err := env.Dial(cctx, "tcp", addr)
		cancel()
		if err == nil {
			conn = c
			break
		}
		errs = append(errs, describeNetErr(err, dl.TCP))
	}
	if conn == nil {
		return nil, &Failure{Stage: StageTCP, Addr: addrList(dial, t.Port), Err: errors.New(strings.Join(errs, "; "))}
	}
	if t.Base.Scheme != "https" {
		return &Conn{Conn: conn, Addr: addr, env: env, origin: t.Origin()}, nil
	}
	cfg, err := tlsConfig(env, t.Host, t.TLS)
	if err != nil {
		conn.Close()
		return nil, &Failure{Stage: StageTLS, Addr: addr, Err: err, Files: true}
	}
	var cc *CertCheck
	cfg.VerifyConnection = func(cs tls.ConnectionState) error {
		cc = judgeCert(cs, cfg.RootCAs, t.Host, env.Now())
		if len(cc.Problems) > 0 {
			return errRefusedCert
		}
		return nil
	}
	tc := tls.Client(conn, cfg)
	hctx, cancel := context.WithTimeout(ctx, dl.TLS)
	defer cancel()
	if err := tc.HandshakeContext(hctx); err != nil {
		conn.Close()
		if errors.Is(err, errRefusedCert) {
			return nil, &Failure{Stage: StageTLS, Addr: addr, Err: errors.New(strings.Join(cc.Problems, "; ")), Cert: cc}
		}
		return nil, &Failure{Stage: StageTLS, Addr: addr, Err: errors.New(describeNetErr(err, dl.TLS))}
	}
	return &Conn{Conn: tc, Addr: addr, Cert: cc, env: env, origin: t.Origin()}, nil
}

var errRefusedCert = errors.New("certificate refused")

// tlsConfig trusts what the runner trusts: the system roots plus its
// tls-ca-file, read under the root, and presents its client certificate
// when it has one. Verification is doctor's own (judgeCert), so that it runs
// at --now and can say which of expiry, chain and hostname failed.
func tlsConfig(env *hostio.Env, host string, f TLSFiles) (*tls.Config, error) {
	roots, err := x509.SystemCertPool()
	if err != nil || roots == nil {
		roots = x509.NewCertPool()
	}
	read := func(p string) ([]byte, error) {
		if f.Reader == nil {
			return env.ReadFileAs(p, hostio.KindPEM)
		}
		return f.Reader.Read(p, hostio.KindPEM)
	}
	if f.CA != "" {
		b, err := read(f.CA)
		if err != nil {
			return nil, fmt.Errorf("tls-ca-file %v", err)
		}
		if !roots.AppendCertsFromPEM(b) {
			return nil, fmt.Errorf("tls-ca-file %s holds no PEM certificate", f.CA)
		}
	}
	cfg := &tls.Config{ServerName: host, RootCAs: roots, InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}
	if f.Cert != "" || f.Key != "" {
		cert, err := read(f.Cert)
		if err != nil {
			return nil, fmt.Errorf("tls-cert-file %v", err)
		}
		key, err := read(f.Key)
		if err != nil {
			return nil, fmt.Errorf("tls-key-file %v", err)
		}
		pair, err := tls.X509KeyPair(cert, key)
		if err != nil {
			// X509KeyPair's errors name no key material.
			return nil, fmt.Errorf("tls-cert-file %s and tls-key-file %s: %v", f.Cert, f.Key, err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}

// SoonExpiry is when a server certificate's remaining life is a warning.
const SoonExpiry = 14 * 24 * time.Hour

// CertCheck is the server certificate as the runner would judge it.
type CertCheck struct {
	Subject  string
	Issuer   string
	NotAfter time.Time
	Left     time.Duration // until NotAfter, at --now
	Problems []string      // each fatal to the runner's handshake
}

// Soon reports a certificate that is valid but expires within SoonExpiry.
func (c *CertCheck) Soon() bool { return len(c.Problems) == 0 && c.Left < SoonExpiry }

// Describe is the evidence line: subject, issuer, expiry.
func (c *CertCheck) Describe() string {
	return fmt.Sprintf("subject %s, issuer %s, expires %s", c.Subject, c.Issuer, c.NotAfter.UTC().Format(time.RFC3339))
}

func judgeCert(cs tls.ConnectionState, roots *x509.CertPool, host string, now time.Time) *CertCheck {
	if len(cs.PeerCertificates) == 0 {
		return &CertCheck{Problems: []string{"the server sent no certificate"}}
	}
	leaf := cs.PeerCertificates[0]
	c := &CertCheck{Subject: leaf.Subject.String(), Issuer: leaf.Issuer.String(), NotAfter: leaf.NotAfter, Left: leaf.NotAfter.Sub(now)}
	switch {
	case now.After(leaf.NotAfter):
		c.Problems = append(c.Problems, fmt.Sprintf("x509: certificate has expired: it ended %s", leaf.NotAfter.UTC().Format(time.RFC3339)))
	case now.Before(leaf.NotBefore):
		c.Problems = append(c.Problems, fmt.Sprintf("x509: certificate is not yet valid: it starts %s", leaf.NotBefore.UTC().Format(time.RFC3339)))
	}
	inter := x509.NewCertPool()
	for _, ic := range cs.PeerCertificates[1:] {
		inter.AddCert(ic)
	}
	// The chain is judged inside the leaf's validity window so that an
	// expired leaf is not reported twice, once as expiry and once as chain.
	at := now
	if now.After(leaf.NotAfter) || now.Before(leaf.NotBefore) {
		at = leaf.NotBefore.Add(leaf.NotAfter.Sub(leaf.NotBefore) / 2)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter, CurrentTime: at}); err != nil {
		c.Problems = append(c.Problems, "chain: "+err.Error()+" (trusted: the system roots and tls-ca-file)")
	}
	if err := leaf.VerifyHostname(host); err != nil {
		c.Problems = append(c.Problems, "hostname: "+err.Error())
	}
	return c
}

// describeNetErr says a deadline in words, and otherwise keeps the error.
func describeNetErr(err error, d time.Duration) string {
	if hostio.IsTimeout(err) {
		return fmt.Sprintf("no answer within %s", d)
	}
	return err.Error()
}

func addrList(as []netip.Addr, port string) string {
	s := make([]string, len(as))
	for i, a := range as {
		s[i] = net.JoinHostPort(a.String(), port)
	}
	return strings.Join(s, ", ")
}
