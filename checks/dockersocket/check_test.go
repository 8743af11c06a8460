package dockersocket_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/checktest"
	"github.com/socialwebcomputer/doctor/checks/configdecode"
	"github.com/socialwebcomputer/doctor/checks/dockersocket"
	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/testkit/testpki"
	"github.com/socialwebcomputer/doctor/testkit/testroot"
)

// dockerRoot is a host with a Docker runner (pid 4242, uid 999, groups
// given) and config.toml's [runners.docker] lines.
func dockerRoot(t *testing.T, groups string, env map[string]string, docker string) *testroot.Root {
	r := testroot.New(t)
	r.Runner(4242, 999, env)
	if groups != "" {
		r.Write("/proc/4242/status", fmt.Sprintf("Name:\tgitlab-runner\nPid:\t4242\nUid:\t999\t999\t999\t999\nGid:\t999\t999\t999\t999\nGroups:\t%s\n", groups), 0o444)
	}
	r.Write("/etc/group", "root:x:0:\ndocker:x:106:\ngitlab-runner:x:999:\n", 0o644)
	r.Write("/etc/gitlab-runner/config.toml", `concurrent = 1

[[runners]]
  name = "docker"
  url = "https://gitlab.example.invalid"
  token = "glrt-test"
  executor = "docker"
  [runners.docker]
    image = "alpine:3"
`+docker, 0o600)
	// The runner reads its own config.toml: doctor reads it as the runner.
	r.Chown("/etc/gitlab-runner/config.toml", 999, 999)
	return r
}

// listen makes a unix socket at a host path under the root, owned
// root:group with mode, answering as handler does (nil: nothing accepts,
// the socket is closed again so connect is refused).
func listen(t *testing.T, r *testroot.Root, hostPath string, group int, mode os.FileMode, h http.Handler) {
	t.Helper()
	p := filepath.Join(r.Dir, hostPath)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", p)
	if err != nil {
		t.Fatal(err)
	}
	if h == nil {
		// Closing a unix listener removes its file; keep a dead socket.
		l.(*net.UnixListener).SetUnlinkOnClose(false)
		l.Close()
	} else {
		srv := &http.Server{Handler: h}
		go srv.Serve(l)
		t.Cleanup(func() { srv.Close() })
	}
	if err := os.Chown(p, 0, group); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

// engine answers /_ping and /version as Docker Engine 20.10.24 does.
func engine(api, arch string) http.Handler {
	m := http.NewServeMux()
	m.HandleFunc("/_ping", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "OK") })
	m.HandleFunc("/version", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, `{"Version":"20.10.24+dfsg1","ApiVersion":%q,"MinAPIVersion":"1.12","Os":"linux","Arch":%q,"KernelVersion":"6.1.0"}`, api, arch)
	})
	return m
}

func run(t *testing.T, r *testroot.Root, offline bool) checks.CheckResult {
	t.Helper()
	env := &hostio.Env{Root: r.Dir, Offline: offline}
	res, err := checks.Run(context.Background(), env, []*checks.Check{configdecode.Check, dockersocket.Check},
		checks.Options{Only: []string{dockersocket.ID}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range res.Checks {
		if c.Check == dockersocket.Check {
			return c
		}
	}
	t.Fatal("docker-socket did not run")
	return checks.CheckResult{}
}

func TestHealthySocketPasses(t *testing.T) {
	r := dockerRoot(t, "999 106", nil, "")
	listen(t, r, "/var/run/docker.sock", 106, 0o660, engine("1.41", "amd64"))
	res := run(t, r, false)
	checktest.WantSays(t, res, checks.StatusPass)
	if len(res.Findings) != 0 {
		t.Errorf("want no findings:\n%s", checktest.Text(res))
	}
	if len(res.Observations) != 1 || res.Observations[0].Labels["arch"] != "amd64" || res.Observations[0].Labels["version"] != "20.10.24+dfsg1" {
		t.Errorf("want the daemon's version and arch observed, got %+v", res.Observations)
	}
}

func TestNoSocket(t *testing.T) {
	r := dockerRoot(t, "999 106", nil, "")
	checktest.WantSays(t, run(t, r, true), checks.StatusFail, "[critical]", "no socket is there",
		"failed to connect to the docker API at unix:///var/run/docker.sock; check if the path is correct")
}

func TestSocketIsADirectory(t *testing.T) {
	r := dockerRoot(t, "999 106", nil, "")
	if err := os.MkdirAll(filepath.Join(r.Dir, "var/run/docker.sock"), 0o755); err != nil {
		t.Fatal(err)
	}
	checktest.WantSays(t, run(t, r, true), checks.StatusFail, "is a directory, not a socket", "docker run -v creates a directory")
}

// TestWrongGroup: the socket is root:docker 0660 and the runner is not in
// docker (106): the fix names the group the runner lacks, from the facts.
func TestWrongGroup(t *testing.T) {
	r := dockerRoot(t, "999", nil, "")
	listen(t, r, "/var/run/docker.sock", 106, 0o660, engine("1.41", "amd64"))
	checktest.WantSays(t, run(t, r, true), checks.StatusFail, "[critical]", "may not write to /var/run/docker.sock",
		"permission denied while trying to connect to the docker API at unix:///var/run/docker.sock",
		"sudo usermod -aG docker gitlab-runner\nsudo systemctl restart gitlab-runner.service")
}

// TestWrongGroupInContainer: the same runner in a container is told to
// --group-add the socket's gid, as the Deckhouse document does.
func TestWrongGroupInContainer(t *testing.T) {
	r := dockerRoot(t, "999", nil, "")
	r.Write("/proc/4242/cgroup", "0::/system.slice/docker-0123abcd.scope\n", 0o444)
	listen(t, r, "/var/run/docker.sock", 106, 0o660, engine("1.41", "amd64"))
	checktest.WantSays(t, run(t, r, true), checks.StatusFail, `--group-add "$(stat -c %g /var/run/docker.sock)"`)
}

// TestSocketInRunnersMountNamespace: with /proc/<pid>/root present the
// socket is the one the runner sees there, not the host's path.
func TestSocketInRunnersMountNamespace(t *testing.T) {
	r := dockerRoot(t, "999 106", nil, "")
	listen(t, r, "/proc/4242/root/var/run/docker.sock", 106, 0o660, engine("1.41", "amd64"))
	checktest.WantSays(t, run(t, r, false), checks.StatusPass)
}

func TestDaemonNotAnswering(t *testing.T) {
	r := dockerRoot(t, "999 106", nil, "")
	listen(t, r, "/var/run/docker.sock", 106, 0o660, nil)
	checktest.WantSays(t, run(t, r, false), checks.StatusFail, "does not answer",
		"Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?")
}

// TestDockerHostFromEnvironment: DOCKER_HOST of the runner's environment
// names the socket when config.toml has no host.
func TestDockerHostFromEnvironment(t *testing.T) {
	r := dockerRoot(t, "999", map[string]string{"DOCKER_HOST": "unix:///run/user/999/docker.sock"}, "")
	listen(t, r, "/run/user/999/docker.sock", 999, 0o660, nil)
	res := run(t, r, false)
	checktest.WantSays(t, res, checks.StatusFail, "DOCKER_HOST=unix:///run/user/999/docker.sock", "Cannot connect to the Docker daemon at unix:///run/user/999/docker.sock")
}

// TestSymlinkStaysInRoot: an absolute link under --root is resolved inside
// it; the machine's own /run is never what doctor stats or dials.
func TestSymlinkStaysInRoot(t *testing.T) {
	r := dockerRoot(t, "999 106", nil, "")
	if err := os.MkdirAll(filepath.Join(r.Dir, "var"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/run", filepath.Join(r.Dir, "var/run")); err != nil {
		t.Fatal(err)
	}
	listen(t, r, "/run/docker.sock", 106, 0o660, engine("1.41", "amd64"))
	checktest.WantSays(t, run(t, r, false), checks.StatusPass)
}

func TestTLSSettings(t *testing.T) {
	for name, tc := range map[string]struct {
		env    map[string]string
		docker string
		says   []string
	}{
		"env ignored beside host": {map[string]string{"DOCKER_TLS_VERIFY": "1", "DOCKER_CERT_PATH": "/certs"}, "    host = \"tcp://127.0.0.1:1\"\n",
			[]string{"sets DOCKER_TLS_VERIFY and DOCKER_CERT_PATH, which the runner ignores", "[runners.docker] host is set"}},
		"config ignored without host": {nil, "    tls_verify = true\n    tls_cert_path = \"/certs\"\n",
			[]string{"sets tls_verify and tls_cert_path, which the runner ignores", "config.toml:10"}},
		"yes is not true": {map[string]string{"DOCKER_HOST": "tcp://127.0.0.1:1", "DOCKER_TLS_VERIFY": "yes"}, "",
			[]string{"[error]", "DOCKER_TLS_VERIFY=yes, which the runner's strconv.ParseBool reads as false"}},
		"certs without verify": {nil, "    host = \"tcp://127.0.0.1:1\"\n    tls_cert_path = \"/certs\"\n",
			[]string{"names certificates in /certs but not tls_verify"}},
		"verify without certs": {nil, "    host = \"tcp://127.0.0.1:1\"\n    tls_verify = true\n",
			[]string{"with no certificate directory", "does not fall back to ~/.docker"}},
	} {
		t.Run(name, func(t *testing.T) {
			r := dockerRoot(t, "999 106", tc.env, tc.docker)
			listen(t, r, "/var/run/docker.sock", 106, 0o660, engine("1.41", "amd64"))
			checktest.WantSays(t, run(t, r, true), checks.StatusFail, tc.says...)
		})
	}
}

// TestPlainHTTPToTLSPort: a daemon that speaks TLS answers plain HTTP
// with 400, which says tls_verify is missing.
func TestPlainHTTPToTLSPort(t *testing.T) {
	srv := httptest.NewTLSServer(engine("1.41", "amd64"))
	t.Cleanup(srv.Close)
	l := srv.Listener
	r := dockerRoot(t, "999", nil, fmt.Sprintf("    host = \"tcp://%s\"\n", l.Addr()))
	checktest.WantSays(t, run(t, r, false), checks.StatusFail, "talks plain HTTP to tcp://", "Client sent an HTTP request to an HTTPS server")
}

func TestOtherExecutorSkipped(t *testing.T) {
	r := testroot.New(t)
	r.Runner(4242, 999, nil)
	r.Write("/etc/gitlab-runner/config.toml", "[[runners]]\n  name = \"k\"\n  executor = \"kubernetes\"\n", 0o600)
	env := &hostio.Env{Root: r.Dir, Offline: true}
	res, err := checks.Run(context.Background(), env, []*checks.Check{configdecode.Check, dockersocket.Check}, checks.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range res.Checks {
		if c.Check == dockersocket.Check && c.Status != checks.StatusSkipped {
			t.Errorf("docker-socket for a kubernetes runner: %s", checktest.Text(c))
		}
	}
}

// neverAnswers accepts a request and never answers it, until the server
// closes: a hung dockerd.
var neverAnswers = http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() })

// TestHungDaemon: a daemon that accepts and never answers is a critical
// finding within the probe's own deadline, though the run's --timeout (2s)
// is shorter than one API call's bound (8s): the probe is bounded by what
// is left of the run, not cut short by it.
func TestHungDaemon(t *testing.T) {
	r := dockerRoot(t, "999 106", nil, "")
	listen(t, r, "/var/run/docker.sock", 106, 0o660, neverAnswers)
	start := time.Now()
	rs := checktest.Check(t, dockersocket.Check, checktest.Root(r.Dir), checktest.Timeout(2*time.Second))
	took := time.Since(start)
	res := checktest.ForRunner(t, rs, 1)
	checktest.WantStatus(t, res, checks.StatusFail, "")
	checktest.WantFinding(t, res, checks.Critical, "does not answer", "GET /_ping got no answer within",
		"Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?")
	if took >= 2*time.Second {
		t.Errorf("the run took %s, not within its 2s --timeout", took)
	}
}

// tlsDaemon is a Docker Engine API on loopback that speaks TLS with a
// server certificate of ca and requires a client certificate ca signed, as
// dockerd --tlsverify does; it returns host:port.
func tlsDaemon(t *testing.T, ca *testpki.CA) string {
	t.Helper()
	certPEM, keyPEM, err := ca.Server(nil, []net.IP{net.ParseIP("127.0.0.1")}, time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	srv := httptest.NewUnstartedServer(engine("1.41", "amd64"))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{pair}, ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().String()
}

// TestTLSFiles: with tls_verify, the runner's client needs ca.pem, cert.pem
// and key.pem in tls_cert_path, read as the runner (uid 999). The first that
// fails, in tlsconfig.Client's order, is the finding, in go-connections'
// words, offline too; with all three a daemon that wants a client
// certificate answers.
func TestTLSFiles(t *testing.T) {
	ca, err := testpki.NewCA("docker-ca", time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	certPEM, keyPEM, err := ca.Client("gitlab-runner", nil, time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	addr := tlsDaemon(t, ca)
	docker := fmt.Sprintf("    host = \"tcp://%s\"\n    tls_verify = true\n    tls_cert_path = \"/certs\"\n", addr)
	files := func(r *testroot.Root, skip string) {
		for name, b := range map[string][]byte{"ca.pem": ca.CertPEM, "cert.pem": certPEM, "key.pem": keyPEM} {
			if name != skip {
				r.Write("/certs/"+name, string(b), 0o600)
				r.Chown("/certs/"+name, 999, 999)
			}
		}
	}
	for name, tc := range map[string]struct {
		env     map[string]string
		docker  string
		prepare func(r *testroot.Root)
		offline bool
		says    []string
	}{
		"no ca.pem": {nil, docker, func(r *testroot.Root) { files(r, "ca.pem") }, true,
			[]string{"[critical]", `could not read CA certificate "/certs/ca.pem": open /certs/ca.pem: no such file or directory`,
				"Preparation failed: creating docker connection: creating docker client: could not read CA certificate", "/certs/ca.pem"}},
		"key.pem is root's": {nil, docker, func(r *testroot.Root) { files(r, ""); r.Chown("/certs/key.pem", 0, 0) }, true,
			[]string{"[critical]", "could not load X509 key pair: open /certs/key.pem: permission denied", "/certs/key.pem"}},
		"cert.pem is not a certificate": {nil, docker, func(r *testroot.Root) { files(r, ""); r.Write("/certs/cert.pem", "garbage\n", 0o600) }, true,
			[]string{"[critical]", "could not load X509 key pair: tls: failed to find any PEM data in certificate input"}},
		"from the environment": {map[string]string{"DOCKER_HOST": "tcp://" + addr, "DOCKER_TLS_VERIFY": "true", "DOCKER_CERT_PATH": "/env-certs"}, "",
			func(r *testroot.Root) { files(r, "") }, true,
			[]string{"[critical]", `could not read CA certificate "/env-certs/ca.pem"`}},
	} {
		t.Run(name, func(t *testing.T) {
			r := dockerRoot(t, "999 106", tc.env, tc.docker)
			tc.prepare(r)
			checktest.WantSays(t, run(t, r, tc.offline), checks.StatusFail, tc.says...)
		})
	}
	t.Run("all three", func(t *testing.T) {
		r := dockerRoot(t, "999 106", nil, docker)
		files(r, "")
		res := run(t, r, false)
		checktest.WantSays(t, res, checks.StatusPass)
		if len(res.Observations) != 1 || res.Observations[0].Labels["version"] != "20.10.24+dfsg1" {
			t.Errorf("want the daemon's version observed through TLS, got %+v\n%s", res.Observations, checktest.Text(res))
		}
	})
}
