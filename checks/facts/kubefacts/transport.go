package kubefacts

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/socialwebcomputer/doctor/checks/facts/hostfacts"
	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/runnerconfig"
)

// A kubeconfig can load, name the right cluster and still be unusable: a
// certificate whose key is another key's, insecure-skip-tls-verify beside a
// CA, a certificate or key file of the wrong PEM type. client-go refuses
// these when it builds the runner's client, not when it loads the file, so
// doctor asks client-go itself: it builds the client config and the TLS
// configuration with client-go's own functions, on the bytes of every file
// the context names as the door read them (as the runner's uid, under
// --root, size-bounded, never a FIFO), and reports client-go's error in its
// own words. The differential test (transport_agree_test.go) holds the
// verdicts against client-go run on real files, row by row.

// TransportStage is where client-go stops when the runner builds its
// client from a kubeconfig context.
type TransportStage int

const (
	// TransportBuilt: client-go builds the client, and a TLS handshake
	// would present the certificate and trust the CA it was given.
	TransportBuilt TransportStage = iota
	// StageClientConfig: clientcmd's ClientConfig refuses the context
	// (tools/clientcmd/validation.go, client-go v0.37.2: "invalid
	// configuration: %v"), which the executor prints as "getting
	// Kubernetes config: %w" (executors/kubernetes/kubernetes.go Prepare,
	// gitlab-runner v19.3.0).
	StageClientConfig
	// StageNewClient: kubernetes.NewForConfig fails building the transport
	// (rest/transport.go TransportFor → transport/transport.go New →
	// TLSConfigFor, client-go v0.37.2), which the executor prints as
	// "creating Kubernetes client: %w" (kubernetes.go Prepare, v19.3.0).
	StageNewClient
	// StageHandshake: the client is built, and every TLS handshake with the
	// apiserver fails: a client-certificate and client-key named as files
	// are loaded only when a handshake asks for them (ReloadTLSFiles,
	// transport/transport.go loadTLSFiles and cachingCertificateLoader,
	// v0.37.2), and a CA file that holds nothing trusts nothing (with the
	// ClientsAllowCARotation gate, on by default since 1.36, rootCertPool
	// gives an empty pool, not the system roots). The executor's first API
	// call fails: "setting up credentials: Post \"…\": <error>".
	StageHandshake
)

// Transport is client-go's verdict on the TLS material and credential of
// one kubeconfig context.
type Transport struct {
	// ReadErr is a file the context names that the runner cannot read as
	// the door reads it (missing, unreadable, too large, not a regular
	// file): the door's words, as InlineKubeconfigFiles gives them. Stage
	// is then TransportBuilt: client-go was not asked.
	ReadErr error
	Stage   TransportStage
	// Err is client-go's error (crypto/tls's or crypto/x509's at the
	// handshake), with the paths of the files as the runner names them.
	Err error
	// Skipped says why client-go was not asked: a credential plugin, which
	// doctor does not hand to client-go's constructors.
	Skipped string
}

// KubeconfigTransport asks client-go what it makes of context's cluster and
// user in the merged kubeconfig kc: its ClientConfig (the runner's
// NewNonInteractiveClientConfig, executors/kubernetes/util.go, v19.3.0),
// then rest.TLSConfigFor, the TLS configuration transport.New builds
// (doctor calls TLSConfigFor itself rather than transport.New, whose cache
// starts a certificate-rotation goroutine for file-based certificates; the
// checks are the same: loadTLSFiles, the insecure-with-CA refusal,
// rootCertPool and tls.X509KeyPair), then the client certificate a
// handshake would ask for. Each file the context names is read through the
// door first and handed to client-go as a file of its own bytes (an
// in-memory file, /proc/self/fd/N), so client-go reads exactly what the
// door read, and treats a file as a file (not as inline data, which
// client-go loads at another time).
func KubeconfigTransport(r hostfacts.RunnerReader, kc *clientcmdapi.Config, context string) *Transport {
	t := &Transport{}
	if kc == nil || kc.Contexts[context] == nil {
		return t // the context's own finding says why
	}
	kc = kc.DeepCopy()
	ctx := kc.Contexts[context]
	files := &memFiles{names: map[string]string{}}
	defer files.close()
	type named struct {
		key  string
		path *string
		kind hostio.FileKind
	}
	var want []named
	if c := kc.Clusters[ctx.Cluster]; c != nil {
		want = append(want, named{"certificate-authority", &c.CertificateAuthority, hostio.KindPEM})
	}
	u := kc.AuthInfos[ctx.AuthInfo]
	if u != nil {
		if runsPlugin(u) {
			t.Skipped = "the user's credential comes from a plugin, which doctor does not give to client-go"
			return t
		}
		want = append(want, named{"client-certificate", &u.ClientCertificate, hostio.KindPEM},
			named{"client-key", &u.ClientKey, hostio.KindPEM}, named{"tokenFile", &u.TokenFile, hostio.KindToken})
	}
	for _, n := range want {
		if *n.path == "" {
			continue
		}
		hp := hostPath(r.Env, *n.path)
		b, err := r.Read(hp, n.kind)
		if err != nil {
			// Not "key: path": a redactor takes what follows a key name
			// ending in -key for a secret.
			t.ReadErr = fmt.Errorf("the kubeconfig's %s (%w)", n.key, err)
			return t
		}
		p, err := files.add(hp, b)
		if err != nil {
			t.Skipped = "no in-memory file to hand client-go the bytes read: " + err.Error()
			return t
		}
		*n.path = p
	}
	cfg, err := clientcmd.NewNonInteractiveClientConfig(*kc, context, &clientcmd.ConfigOverrides{}, nil).ClientConfig()
	if err != nil {
		t.Stage, t.Err = StageClientConfig, files.named(err)
		return t
	}
	t.Stage, t.Err = tlsStage(cfg)
	t.Err = files.named(t.Err)
	return t
}

// HostTransport asks client-go what it makes of a runner whose
// [runners.kubernetes] host is set: the executor's getOutClusterClientConfig
// (executors/kubernetes/util.go, gitlab-runner v19.3.0) gives client-go
// ca_file, cert_file and key_file as files, and kubernetes.NewForConfig
// builds the transport from them (as KubeconfigTransport, without a
// kubeconfig to validate). A file the door cannot read is ReadErr, in the
// door's words.
func HostTransport(r hostfacts.RunnerReader, k *runnerconfig.Kubernetes) *Transport {
	t := &Transport{}
	if k == nil || k.Host == "" {
		return t
	}
	// getOutClusterClientConfig, verbatim but for the files' names.
	cfg := &rest.Config{Host: k.Host, BearerToken: k.BearerToken, TLSClientConfig: rest.TLSClientConfig{CAFile: k.CAFile}}
	if k.CertFile != "" {
		if k.KeyFile == "" || k.CAFile == "" {
			t.Stage, t.Err = StageClientConfig, errFileBasedAuth
			return t
		}
		cfg.TLSClientConfig.CertFile, cfg.TLSClientConfig.KeyFile = k.CertFile, k.KeyFile
	}
	files := &memFiles{names: map[string]string{}}
	defer files.close()
	for _, f := range []struct {
		key  string
		path *string
	}{{"ca_file", &cfg.TLSClientConfig.CAFile}, {"cert_file", &cfg.TLSClientConfig.CertFile}, {"key_file", &cfg.TLSClientConfig.KeyFile}} {
		if *f.path == "" {
			continue
		}
		b, err := r.Read(*f.path, hostio.KindPEM)
		if err != nil {
			t.ReadErr = fmt.Errorf("[runners.kubernetes] %s (%w)", f.key, err)
			return t
		}
		p, err := files.add(*f.path, b)
		if err != nil {
			t.Skipped = "no in-memory file to hand client-go the bytes read: " + err.Error()
			return t
		}
		*f.path = p
	}
	t.Stage, t.Err = tlsStage(cfg)
	t.Err = files.named(t.Err)
	return t
}

// errFileBasedAuth is getOutClusterClientConfig's own refusal
// (executors/kubernetes/util.go, gitlab-runner v19.3.0), which the executor
// prints as "getting Kubernetes config: %w".
var errFileBasedAuth = errors.New("ca file, cert file and key file must be specified when using file based auth")

// tlsStage is where client-go stops on cfg's TLS material: building the
// TLS configuration (rest.TLSConfigFor, client-go v0.37.2), or at a
// handshake (the client certificate of files, an empty root pool).
func tlsStage(cfg *rest.Config) (TransportStage, error) {
	tc, err := rest.TLSConfigFor(cfg)
	if err != nil {
		return StageNewClient, err
	}
	if tc == nil {
		return TransportBuilt, nil
	}
	// crypto/tls verifies the server's certificate before it sends its
	// own (handshake_client.go, handshake_client_tls13.go): a CA that
	// trusts nothing fails first, as crypto/x509 words it.
	if tc.RootCAs != nil && tc.RootCAs.Equal(x509.NewCertPool()) && !tc.InsecureSkipVerify {
		return StageHandshake, &tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}
	}
	if tc.GetClientCertificate != nil {
		if _, err := tc.GetClientCertificate(&tls.CertificateRequestInfo{}); err != nil {
			return StageHandshake, err
		}
	}
	return TransportBuilt, nil
}

// memFiles are the bytes the door read, as files client-go can open by
// name: memfd_create(2) files, named /proc/self/fd/N, never on a disk.
type memFiles struct {
	fds   []int
	names map[string]string // /proc/self/fd/N -> the host path it stands for
}

func (m *memFiles) add(host string, b []byte) (string, error) {
	fd, err := unix.MemfdCreate("doctor-kubeconfig-file", unix.MFD_CLOEXEC)
	if err != nil {
		return "", err
	}
	m.fds = append(m.fds, fd)
	for rest := b; len(rest) > 0; {
		n, err := unix.Write(fd, rest)
		if err != nil {
			return "", err
		}
		rest = rest[n:]
	}
	p := fmt.Sprintf("/proc/self/fd/%d", fd)
	if _, err := os.Stat(p); err != nil {
		return "", err // no /proc: client-go could not open it
	}
	m.names[p] = host
	return p, nil
}

func (m *memFiles) close() {
	for _, fd := range m.fds {
		unix.Close(fd)
	}
}

// named is err with each in-memory file's name replaced by the host path
// it stands for, so the finding names the file the runner names.
func (m *memFiles) named(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	for p, host := range m.names {
		msg = strings.ReplaceAll(msg, p, host)
	}
	if msg == err.Error() {
		return err
	}
	return &renamedError{msg: msg, err: err}
}

type renamedError struct {
	msg string
	err error
}

func (e *renamedError) Error() string { return e.msg }
func (e *renamedError) Unwrap() error { return e.err }

// JobLogWords is the verdict's error as the runner's job log prints it,
// behind the executor's wrapping at its stage (kubernetes.go Prepare and
// setupCredentials, gitlab-runner v19.3.0); at the handshake, the first API
// call's URL is elided.
func (t *Transport) JobLogWords() string {
	if t.Err == nil {
		return ""
	}
	switch t.Stage {
	case StageClientConfig:
		return "getting Kubernetes config: " + t.Err.Error()
	case StageNewClient:
		return "creating Kubernetes client: " + t.Err.Error()
	case StageHandshake:
		return "setting up credentials: Post \"https://…\": " + t.Err.Error()
	}
	return t.Err.Error()
}
