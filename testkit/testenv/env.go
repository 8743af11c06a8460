//go:build integration

// Package testenv runs real components for doctor's integration tests: etcd
// and kube-apiserver v1.37.2 on loopback (no scheduler, no kubelet, no
// controller-manager), Caddy as the API front, and a fake kubelet that
// answers exec upgrades with apimachinery's SPDY upgrader.
//
// Every file is behind the `integration` build tag, so a plain
// `go test ./...` never needs the binaries; build them with
// `bash scripts/build-tools.sh`, then `go test -tags integration ./...`.
// A missing binary or a failed start is a test failure, never a skip.
//
// Helpers that take no testing.TB fail the test that called Start, so call
// them from that test's goroutine, or use env.WithT(t) inside subtests.
package testenv

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/socialwebcomputer/doctor/testkit/testpki"
	"k8s.io/client-go/rest"
)

// Identity names of the runner-gateway-cluster guide.
const (
	// MastersGroup is Kubernetes' built-in superuser group (the admin).
	MastersGroup = "system:masters"
	// OwnersGroup is the group of cluster owners (CN = their DID); the
	// gateway cluster binds it to cluster-admin (BindOwnersToClusterAdmin).
	OwnersGroup = "socialweb.computer:cluster-owners"
)

// Env is one running etcd + kube-apiserver pair with its certificates.
type Env struct {
	Dir          string // temp dir: certs, etcd data, logs, audit log
	URL          string // https://127.0.0.1:<Port>
	Port         int    // apiserver secure port
	CA           *CA    // the client and serving CA
	CAPEM        []byte // CA certificate, PEM
	CAFile       string // CA certificate file
	AuditLogPath string // JSON lines, one per completed request
	EtcdURL      string // http://127.0.0.1:<port>

	t                   testing.TB
	adminCert, adminKey []byte
	apiserver           *process
	admin               kubernetes.Interface
}

type config struct {
	extraArgs      []string
	timeout        time.Duration
	serviceAccount bool
}

// Option changes how Start runs the apiserver.
type Option func(*config)

// WithAPIServerArgs appends flags to kube-apiserver's command line (a later
// flag overrides an earlier one).
func WithAPIServerArgs(args ...string) Option {
	return func(c *config) { c.extraArgs = append(c.extraArgs, args...) }
}

// WithServiceAccountAdmission keeps the ServiceAccount admission plugin
// on, as every real cluster has it: a pod naming a service account that
// does not exist is refused ("error looking up service account"). No
// controller-manager creates a namespace's "default" account here: a test
// that sends pods without service_account creates it.
func WithServiceAccountAdmission() Option {
	return func(c *config) { c.serviceAccount = true }
}

// WithStartTimeout changes how long Start waits for /readyz (default 60s).
func WithStartTimeout(d time.Duration) Option {
	return func(c *config) { c.timeout = d }
}

// Start starts etcd and kube-apiserver on free loopback ports, waits until
// /readyz answers 200 and registers cleanups that stop both.
func Start(t testing.TB, opts ...Option) *Env {
	t.Helper()
	cfg := config{timeout: 60 * time.Second}
	for _, o := range opts {
		o(&cfg)
	}
	etcdBin, apiserverBin := Bin(t, "etcd"), Bin(t, "kube-apiserver")
	began := time.Now()
	e := &Env{Dir: t.TempDir(), t: t}
	e.AuditLogPath = filepath.Join(e.Dir, "audit.log")
	e.writeCerts()
	if err := retryPortRace(t, func() error { return e.start(cfg, etcdBin, apiserverBin, began.Add(cfg.timeout)) }); err != nil {
		t.Fatalf("testenv: %v", err)
	}
	t.Logf("testenv: etcd + kube-apiserver ready at %s in %s (dir %s)", e.URL, time.Since(began).Round(time.Millisecond), e.Dir)
	return e
}

// start runs one attempt: etcd on fresh ports and data dir, then the
// apiserver, until /readyz or deadline. A failed attempt's processes are
// stopped (and stopped again, harmlessly, at cleanup).
func (e *Env) start(cfg config, etcdBin, apiserverBin string, deadline time.Time) error {
	t := e.t
	etcdPort, peerPort := FreePort(t), FreePort(t)
	e.EtcdURL = fmt.Sprintf("http://127.0.0.1:%d", etcdPort)
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", peerPort)
	etcd := startProcess(t, "etcd", e.Dir, nil, etcdBin,
		"--name=testenv",
		"--data-dir="+filepath.Join(e.Dir, fmt.Sprintf("etcd-%d", etcdPort)),
		"--listen-client-urls="+e.EtcdURL, "--advertise-client-urls="+e.EtcdURL,
		"--listen-peer-urls="+peerURL, "--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=testenv="+peerURL,
		"--unsafe-no-fsync", // throwaway data: skip fsync, faster on shared disks
		"--log-level=warn")
	if err := waitListening(etcd, etcdPort, time.Until(deadline)); err != nil {
		etcd.stop()
		return fmt.Errorf("etcd: %w", err)
	}

	e.Port = FreePort(t)
	e.URL = "https://127.0.0.1:" + strconv.Itoa(e.Port)
	args := []string{
		"--etcd-servers=" + e.EtcdURL,
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(e.Port),
		// The default reconciler refuses a loopback advertise address.
		"--endpoint-reconciler-type=none",
		"--tls-cert-file=" + e.path("serving.crt"), "--tls-private-key-file=" + e.path("serving.key"),
		"--client-ca-file=" + e.CAFile,
		"--authorization-mode=RBAC",
		"--service-account-key-file=" + e.path("sa.key"),
		"--service-account-signing-key-file=" + e.path("sa.key"),
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-cluster-ip-range=10.0.0.0/24",
		"--audit-log-path=" + e.AuditLogPath,
		"--audit-policy-file=" + e.path("audit-policy.yaml"),
		"--profiling=false",
	}
	if !cfg.serviceAccount {
		// No controller-manager creates default service accounts.
		args = append(args, "--disable-admission-plugins=ServiceAccount")
	}
	e.apiserver = startProcess(t, "kube-apiserver", e.Dir, nil, apiserverBin, append(args, cfg.extraArgs...)...)
	if err := e.waitReady(deadline); err != nil {
		e.apiserver.stop()
		etcd.stop()
		return fmt.Errorf("kube-apiserver: %w", err)
	}
	return nil
}

// writeCerts mints the CA, the serving, admin and service-account keys and
// the audit policy into Dir.
func (e *Env) writeCerts() {
	ca, err := NewCA("testenv-ca")
	e.check(err)
	e.CA, e.CAPEM = ca, ca.CertPEM
	e.CAFile = e.WriteFile("ca.crt", ca.CertPEM)
	crt, key, err := ca.MintServing("127.0.0.1", "localhost")
	e.check(err)
	e.WriteFile("serving.crt", crt)
	e.WriteFile("serving.key", key)
	now := time.Now()
	e.adminCert, e.adminKey, err = ca.MintClient("testenv-admin", []string{MastersGroup}, now.Add(-time.Hour), now.Add(24*time.Hour))
	e.check(err)
	// Service-account token keys: nothing here uses tokens, but the
	// apiserver refuses to start without them. The private key serves as
	// both the signing and the verifying key file.
	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	e.check(err)
	saDER, err := x509.MarshalECPrivateKey(saKey)
	e.check(err)
	saPEM := testpki.PEM("EC PRIVATE KEY", saDER)
	e.WriteFile("sa.key", saPEM)
	// Metadata for everything; skip the RequestReceived stage so each
	// request is one line, carrying its response code.
	e.WriteFile("audit-policy.yaml", []byte("apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n- level: Metadata\n"))
}

// waitReady polls /readyz as the admin until 200, the deadline, or the
// apiserver exiting.
func (e *Env) waitReady(deadline time.Time) error {
	tlsCfg, err := rest.TLSConfigFor(e.AdminConfig())
	if err != nil {
		return err
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: tlsCfg}, Timeout: 5 * time.Second}
	defer client.CloseIdleConnections()
	last := "no answer"
	for {
		resp, err := client.Get(e.URL + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = resp.Status
		} else {
			last = err.Error()
		}
		if e.apiserver.exited() {
			return fmt.Errorf("exited before ready:\n%s", e.apiserver.tail())
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("/readyz not 200 in time (last: %s):\n%s", last, e.apiserver.tail())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// WithT returns a view of the env whose helpers fail (and whose API calls
// are bounded by) t instead of the test that called Start: use it inside
// t.Run subtests. The processes still belong to the Start test.
func (e *Env) WithT(t testing.TB) *Env {
	c := *e
	c.t = t
	return &c
}

// AdminConfig returns a rest.Config for an O=system:masters client.
func (e *Env) AdminConfig() *rest.Config { return e.ClientConfig(e.adminCert, e.adminKey) }

// AdminCertPEM returns the admin client certificate and key (PEM), e.g. for
// a front's upstream identity.
func (e *Env) AdminCertPEM() (certPEM, keyPEM []byte) { return e.adminCert, e.adminKey }

// Clientset returns the admin clientset (one per Env, reused).
func (e *Env) Clientset() kubernetes.Interface {
	if e.admin == nil {
		e.admin = e.ClientsetFor(e.adminCert, e.adminKey)
	}
	return e.admin
}

// ClientConfig returns a rest.Config that authenticates with the given
// client certificate and trusts the env's CA.
func (e *Env) ClientConfig(certPEM, keyPEM []byte) *rest.Config {
	return &rest.Config{
		Host: e.URL,
		TLSClientConfig: rest.TLSClientConfig{
			CAData: e.CAPEM, CertData: certPEM, KeyData: keyPEM,
		},
		// Tests create objects in bursts; client-side throttling only
		// slows them down.
		QPS: 200, Burst: 400,
		UserAgent: "doctor-testenv",
	}
}

// ClientsetFor returns a clientset that authenticates with the given client
// certificate.
func (e *Env) ClientsetFor(certPEM, keyPEM []byte) kubernetes.Interface {
	cs, err := kubernetes.NewForConfig(e.ClientConfig(certPEM, keyPEM))
	e.check(err)
	return cs
}

// TLSConfig returns a tls.Config that trusts the env's CA and presents the
// given client certificate (none if certPEM is nil), for raw HTTP tests.
func (e *Env) TLSConfig(certPEM, keyPEM []byte) *tls.Config {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(e.CAPEM)
	cfg := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	if certPEM != nil {
		pair, err := tls.X509KeyPair(certPEM, keyPEM)
		e.check(err)
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg
}

// MintClient mints a client certificate from the env's CA (trusted by the
// apiserver): CN is the user name, groups become O.
func (e *Env) MintClient(cn string, groups []string, notBefore, notAfter time.Time) (certPEM, keyPEM []byte) {
	certPEM, keyPEM, err := e.CA.MintClient(cn, groups, notBefore, notAfter)
	e.check(err)
	return certPEM, keyPEM
}

// MintForeignClient mints a valid-looking client certificate from a fresh CA
// the apiserver does not trust: the "revoked CA" or "wrong gateway" case,
// which the apiserver answers with 401.
func (e *Env) MintForeignClient(cn string, groups []string) (certPEM, keyPEM []byte) {
	ca, err := NewCA("foreign-ca")
	e.check(err)
	now := time.Now()
	certPEM, keyPEM, err = ca.MintClient(cn, groups, now.Add(-time.Hour), now.Add(24*time.Hour))
	e.check(err)
	return certPEM, keyPEM
}

// MintServing mints a serving certificate from the env's CA (for fronts and
// fake kubelets).
func (e *Env) MintServing(hosts ...string) (certPEM, keyPEM []byte) {
	certPEM, keyPEM, err := e.CA.MintServing(hosts...)
	e.check(err)
	return certPEM, keyPEM
}

// WriteFile writes data to Dir/name (mode 0600) and returns the path.
func (e *Env) WriteFile(name string, data []byte) string {
	p := e.path(name)
	e.check(os.WriteFile(p, data, 0o600))
	return p
}

func (e *Env) path(name string) string { return filepath.Join(e.Dir, name) }

// ctx bounds one helper's API call; the test's context ends with the test.
func (e *Env) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(e.t.Context(), 30*time.Second)
}

func (e *Env) check(err error) {
	if err != nil {
		e.t.Helper()
		e.t.Fatalf("testenv: %v", err)
	}
}
