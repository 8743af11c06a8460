package kubefacts

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"k8s.io/client-go/rest"

	"github.com/socialwebcomputer/doctor/checks/facts/hostfacts"
	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/runnerconfig"
	"github.com/socialwebcomputer/doctor/testkit/testpki"
)

// tlsSlot is where a kubeconfig carries one piece of TLS material: as the
// key's -data (inline), as a file it names, or both (which client-go's
// validation refuses).
type tlsSlot int

const (
	slotData tlsSlot = iota
	slotFile
	slotBoth
)

func (s tlsSlot) String() string { return [...]string{"data", "file", "both"}[s] }

// tlsMaterial is what one row gives the kubeconfig: the bytes of each slot
// (nil: the slot is absent) and insecure-skip-tls-verify.
type tlsMaterial struct {
	name           string
	ca, cert, key  []byte
	insecure       bool
	emptyIsMeaning bool // an empty slot is a file of zero bytes, not an absent one
}

// tlsPKI is the material rows are made of: a CA that signs the test
// server's certificate and the client's, the client's key, keys and
// certificates of others, and spoiled bytes.
type tlsPKI struct {
	ca, otherCA            *testpki.CA
	cert, key              []byte // the client's pair (EC, SEC 1)
	keyPKCS8               []byte // the same key as PKCS #8
	otherKey, rsaKey       []byte // another EC key; an RSA key
	expiredCert, expiredKy []byte
	serverCert, serverKey  []byte
}

func newTLSPKI(t *testing.T) *tlsPKI {
	t.Helper()
	now := time.Now()
	ca, err := testpki.NewCA("kubernetes", now.Add(-time.Hour), now.Add(24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	other, err := testpki.NewCA("another", now.Add(-time.Hour), now.Add(24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	p := &tlsPKI{ca: ca, otherCA: other}
	if p.cert, p.key, err = ca.Client("runner", []string{"ci"}, now.Add(-time.Hour), now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if p.expiredCert, p.expiredKy, err = ca.Client("runner", []string{"ci"}, now.Add(-2*time.Hour), now.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	if p.serverCert, p.serverKey, err = ca.Server(nil, []net.IP{net.ParseIP("127.0.0.1")}, now.Add(-time.Hour), now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	blk, _ := pem.Decode(p.key)
	k, err := x509.ParseECPrivateKey(blk.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKCS8PrivateKey(k)
	p.keyPKCS8 = testpki.PEM("PRIVATE KEY", der)
	ok, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	der, _ = x509.MarshalECPrivateKey(ok)
	p.otherKey = testpki.PEM("EC PRIVATE KEY", der)
	rk, _ := rsa.GenerateKey(rand.Reader, 2048)
	p.rsaKey = testpki.PEM("RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(rk))
	return p
}

// tlsMaterials are the breakages rows are generated from, each once per
// way of carrying its pieces (tlsRows): what client-go refuses when it
// builds the client (the CA, the pair), what it refuses at the handshake
// (a pair given as files, a CA file of nothing), what it validates in the
// kubeconfig (a piece given twice, a certificate without its key), and
// what it accepts (encodings, chains, text around blocks, an expired
// certificate, which is the server's to refuse).
//
// Not here: a CA that is not the server's, and no CA at all (client-go
// then trusts the system roots): whether the server's certificate chains
// to them is the server's part, which api-auth finds on the live cluster;
// offline doctor cannot, and a row would be about the test's server.
func tlsMaterials(p *tlsPKI) []tlsMaterial {
	garbage := []byte("this is not PEM\n")
	cat := func(bs ...[]byte) []byte {
		var out []byte
		for _, b := range bs {
			out = append(out, b...)
		}
		return out
	}
	return []tlsMaterial{
		{name: "healthy", ca: p.ca.CertPEM, cert: p.cert, key: p.key},
		{name: "healthy, key PKCS#8", ca: p.ca.CertPEM, cert: p.cert, key: p.keyPKCS8},
		{name: "certificate with its CA after it", ca: p.ca.CertPEM, cert: cat(p.cert, p.ca.CertPEM), key: p.key},
		{name: "text around the blocks", ca: cat(garbage, p.ca.CertPEM, garbage), cert: cat(garbage, p.cert), key: cat(p.key, garbage)},
		{name: "key file holds the certificate too", ca: p.ca.CertPEM, cert: p.cert, key: cat(p.cert, p.key)},
		{name: "CA bundle with another CA", ca: cat(p.otherCA.CertPEM, p.ca.CertPEM), cert: p.cert, key: p.key},
		{name: "expired certificate (the server's to refuse)", ca: p.ca.CertPEM, cert: p.expiredCert, key: p.expiredKy},
		{name: "no client certificate", ca: p.ca.CertPEM},
		{name: "key without certificate", ca: p.ca.CertPEM, key: p.key},
		{name: "insecure without CA", cert: p.cert, key: p.key, insecure: true},
		{name: "insecure beside a CA", ca: p.ca.CertPEM, cert: p.cert, key: p.key, insecure: true},
		{name: "insecure beside an empty CA file", ca: []byte{}, cert: p.cert, key: p.key, insecure: true, emptyIsMeaning: true},
		{name: "key of another", ca: p.ca.CertPEM, cert: p.cert, key: p.otherKey},
		{name: "key of another type", ca: p.ca.CertPEM, cert: p.cert, key: p.rsaKey},
		{name: "key of the expired certificate", ca: p.ca.CertPEM, cert: p.cert, key: p.expiredKy},
		{name: "certificate and key switched", ca: p.ca.CertPEM, cert: p.key, key: p.cert},
		{name: "key in both", ca: p.ca.CertPEM, cert: p.key, key: p.key},
		{name: "certificate in both", ca: p.ca.CertPEM, cert: p.cert, key: p.cert},
		{name: "CA's certificate as the client's", ca: p.ca.CertPEM, cert: p.ca.CertPEM, key: p.key},
		{name: "certificate not PEM", ca: p.ca.CertPEM, cert: garbage, key: p.key},
		{name: "key not PEM", ca: p.ca.CertPEM, cert: p.cert, key: garbage},
		{name: "certificate empty file", ca: p.ca.CertPEM, cert: []byte{}, key: p.key, emptyIsMeaning: true},
		{name: "key empty file", ca: p.ca.CertPEM, cert: p.cert, key: []byte{}, emptyIsMeaning: true},
		{name: "key block cut", ca: p.ca.CertPEM, cert: p.cert, key: p.key[:len(p.key)/2]},
		{name: "CA not PEM", ca: garbage, cert: p.cert, key: p.key},
		{name: "CA holds a key", ca: p.key, cert: p.cert, key: p.key},
		{name: "CA empty file", ca: []byte{}, cert: p.cert, key: p.key, emptyIsMeaning: true},
		{name: "CA block of garbage", ca: testpki.PEM("CERTIFICATE", []byte("not DER")), cert: p.cert, key: p.key},
	}
}

// tlsRow is one generated row: a material with a way of carrying each of
// its pieces.
type tlsRow struct {
	m                       tlsMaterial
	caSlot, certSlot, kSlot tlsSlot
}

func (r tlsRow) String() string {
	return fmt.Sprintf("%s/ca-%s,cert-%s,key-%s", r.m.name, r.caSlot, r.certSlot, r.kSlot)
}

// tlsRows crosses every material with every way of carrying its present
// pieces (data or file), and adds, for the healthy material, each piece
// given both ways.
func tlsRows(p *tlsPKI) []tlsRow {
	var rows []tlsRow
	for _, m := range tlsMaterials(p) {
		slots := func(b []byte) []tlsSlot {
			switch {
			case b == nil:
				return []tlsSlot{slotData} // absent: one row
			case len(b) == 0 && m.emptyIsMeaning:
				return []tlsSlot{slotFile} // an empty -data is an absent one
			}
			return []tlsSlot{slotData, slotFile}
		}
		for _, ca := range slots(m.ca) {
			for _, c := range slots(m.cert) {
				for _, k := range slots(m.key) {
					rows = append(rows, tlsRow{m: m, caSlot: ca, certSlot: c, kSlot: k})
				}
			}
		}
	}
	healthy := tlsMaterials(p)[0]
	rows = append(rows,
		tlsRow{m: healthy, caSlot: slotBoth, certSlot: slotFile, kSlot: slotFile},
		tlsRow{m: healthy, caSlot: slotFile, certSlot: slotBoth, kSlot: slotFile},
		tlsRow{m: healthy, caSlot: slotFile, certSlot: slotFile, kSlot: slotBoth})
	return rows
}

// writeTLSRow writes the row's files under root and its kubeconfig at
// root/etc/kube/config, naming the files by prefix+/etc/kube/NAME (the
// host's path for doctor's tree, the real one for client-go's).
func writeTLSRow(t *testing.T, r tlsRow, root, prefix, server string) {
	t.Helper()
	dir := filepath.Join(root, "etc/kube")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	put := func(name string, b []byte, slot tlsSlot, path *string, data *[]byte) {
		if b == nil {
			return
		}
		if slot == slotData || slot == slotBoth {
			*data = b
		}
		if slot == slotFile || slot == slotBoth {
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
				t.Fatal(err)
			}
			*path = prefix + "/etc/kube/" + name
		}
	}
	cluster := &clientcmdapi.Cluster{Server: server, InsecureSkipTLSVerify: r.m.insecure}
	user := &clientcmdapi.AuthInfo{}
	put("ca.crt", r.m.ca, r.caSlot, &cluster.CertificateAuthority, &cluster.CertificateAuthorityData)
	put("client.crt", r.m.cert, r.certSlot, &user.ClientCertificate, &user.ClientCertificateData)
	put("client.key", r.m.key, r.kSlot, &user.ClientKey, &user.ClientKeyData)
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["c"], cfg.AuthInfos["u"] = cluster, user
	cfg.Contexts["x"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
	cfg.CurrentContext = "x"
	if err := clientcmd.WriteToFile(*cfg, filepath.Join(dir, "config")); err != nil {
		t.Fatal(err)
	}
}

// tlsVerdict is a stage and client-go's words.
type tlsVerdict struct {
	Stage TransportStage
	Words string
}

// oracleTLS is the runner's own code on real files: the kubeconfig loaded
// and its context's client config made (executors/kubernetes/util.go
// loadDefaultKubectlConfig, gitlab-runner v19.3.0), the clientset built
// (kubernetes.NewForConfig, the executor's newKubeClient, kubernetes.go),
// and one request to a loopback apiserver stand-in that asks for a client
// certificate as kube-apiserver does (tls.RequestClientCert). root is
// removed from the words, so they name the files as doctor's tree does.
func oracleTLS(t *testing.T, kubeconfig, root string) tlsVerdict {
	t.Helper()
	words := func(err error) string { return strings.ReplaceAll(err.Error(), root, "") }
	loaded, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		t.Fatalf("the oracle's kubeconfig does not load: %v", err)
	}
	cfg, err := clientcmd.NewNonInteractiveClientConfig(*loaded, "x", &clientcmd.ConfigOverrides{}, clientcmd.NewDefaultClientConfigLoadingRules()).ClientConfig()
	if err != nil {
		return tlsVerdict{StageClientConfig, words(err)}
	}
	cfg.Timeout = 10 * time.Second
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return tlsVerdict{StageNewClient, words(err)}
	}
	if _, err := cs.Discovery().ServerVersion(); err != nil {
		return tlsVerdict{StageHandshake, words(err)}
	}
	return tlsVerdict{}
}

func doctorTLS(t *testing.T, root string) tlsVerdict {
	t.Helper()
	env := &hostio.Env{Root: root}
	merged, err := mergeKubeconfigs(env, []string{"/etc/kube/config"})
	if err != nil {
		t.Fatalf("doctor's merge: %v", err)
	}
	tr := KubeconfigTransport(hostfacts.RunnerReader{Env: env}, merged, "x")
	if tr.ReadErr != nil || tr.Skipped != "" {
		t.Fatalf("doctor did not ask client-go: %v %s", tr.ReadErr, tr.Skipped)
	}
	v := tlsVerdict{Stage: tr.Stage}
	if tr.Err != nil {
		v.Words = tr.Err.Error()
	}
	return v
}

// loopbackAPIServer is a TLS server with the row's CA's serving
// certificate that asks for a client certificate, as kube-apiserver does.
func loopbackAPIServer(t *testing.T, p *tlsPKI) *httptest.Server {
	t.Helper()
	pair, err := tls.X509KeyPair(p.serverCert, p.serverKey)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"major":"1","minor":"37","gitVersion":"v1.37.2"}`)
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes are the rows' point
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{pair}, ClientAuth: tls.RequestClientCert}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

// agrees compares two verdicts: the same stage, and the same words (at
// the handshake, client-go's error ends with doctor's, after the URL).
func agrees(got, want tlsVerdict) bool {
	switch {
	case got.Stage != want.Stage:
		return false
	case want.Stage == StageHandshake:
		return got.Words != "" && strings.HasSuffix(want.Words, ": "+got.Words)
	}
	return got.Words == want.Words
}

// TestHostTransportAgreesWithClientGo is TestTransportAgreesWithClientGo
// for a runner with [runners.kubernetes] host: config.toml names ca_file,
// cert_file and key_file, always files. The oracle is the executor's
// getOutClusterClientConfig verbatim (executors/kubernetes/util.go,
// gitlab-runner v19.3.0), kubernetes.NewForConfig and one request.
func TestHostTransportAgreesWithClientGo(t *testing.T) {
	p := newTLSPKI(t)
	srv := loopbackAPIServer(t, p)
	rows := 0
	for _, m := range tlsMaterials(p) {
		if m.insecure {
			continue // config.toml has no insecure-skip-tls-verify
		}
		rows++
		t.Run(m.name, func(t *testing.T) {
			k := func(prefix string) *runnerconfig.Kubernetes {
				k := &runnerconfig.Kubernetes{Host: srv.URL}
				for _, f := range []struct {
					b    []byte
					name string
					into *string
				}{{m.ca, "ca.crt", &k.CAFile}, {m.cert, "client.crt", &k.CertFile}, {m.key, "client.key", &k.KeyFile}} {
					if f.b != nil {
						*f.into = prefix + "/etc/kube/" + f.name
					}
				}
				return k
			}
			oracleRoot, doctorRoot := t.TempDir(), t.TempDir()
			for _, root := range []string{oracleRoot, doctorRoot} {
				writeTLSRow(t, tlsRow{m: m, caSlot: slotFile, certSlot: slotFile, kSlot: slotFile}, root, "", srv.URL)
			}
			want := oracleHost(t, k(oracleRoot), oracleRoot)
			tr := HostTransport(hostfacts.RunnerReader{Env: &hostio.Env{Root: doctorRoot}}, k(""))
			if tr.ReadErr != nil || tr.Skipped != "" {
				t.Fatalf("doctor did not ask client-go: %v %s", tr.ReadErr, tr.Skipped)
			}
			got := tlsVerdict{Stage: tr.Stage}
			if tr.Err != nil {
				got.Words = tr.Err.Error()
			}
			t.Logf("stage %d: %s", want.Stage, want.Words)
			if !agrees(got, want) {
				t.Errorf("doctor: stage %d %q\nthe runner's code: stage %d %q", got.Stage, got.Words, want.Stage, want.Words)
			}
		})
	}
	t.Logf("%d rows", rows)
}

// oracleHost is the runner's out-of-cluster branch on real files.
func oracleHost(t *testing.T, config *runnerconfig.Kubernetes, root string) tlsVerdict {
	t.Helper()
	words := func(err error) string { return strings.ReplaceAll(err.Error(), root, "") }
	// getOutClusterClientConfig (executors/kubernetes/util.go, v19.3.0).
	kubeConfig := &rest.Config{
		Host:        config.Host,
		BearerToken: config.BearerToken,
		TLSClientConfig: rest.TLSClientConfig{
			CAFile: config.CAFile,
		},
	}
	if config.CertFile != "" {
		if config.KeyFile == "" || config.CAFile == "" {
			return tlsVerdict{StageClientConfig, "ca file, cert file and key file must be specified when using file based auth"}
		}
		kubeConfig.TLSClientConfig.CertFile = config.CertFile
		kubeConfig.TLSClientConfig.KeyFile = config.KeyFile
	}
	kubeConfig.Timeout = 10 * time.Second
	cs, err := kubernetes.NewForConfig(kubeConfig)
	if err != nil {
		return tlsVerdict{StageNewClient, words(err)}
	}
	if _, err := cs.Discovery().ServerVersion(); err != nil {
		return tlsVerdict{StageHandshake, words(err)}
	}
	return tlsVerdict{}
}

// TestTransportAgreesWithClientGo compares, on every generated row of TLS
// material (tlsRows: each breakage with each way of carrying its pieces),
// doctor's verdict (KubeconfigTransport under --root, through the door)
// with the runner's own code on the same files (oracleTLS): the same
// stage, and the same words (at the handshake, client-go's error ends with
// doctor's, after the URL of the request).
func TestTransportAgreesWithClientGo(t *testing.T) {
	p := newTLSPKI(t)
	srv := loopbackAPIServer(t, p)
	rows := tlsRows(p)
	stages := map[TransportStage]int{}
	for _, r := range rows {
		t.Run(r.String(), func(t *testing.T) {
			oracleRoot, doctorRoot := t.TempDir(), t.TempDir()
			writeTLSRow(t, r, oracleRoot, oracleRoot, srv.URL)
			writeTLSRow(t, r, doctorRoot, "", srv.URL)
			want := oracleTLS(t, filepath.Join(oracleRoot, "etc/kube/config"), oracleRoot)
			got := doctorTLS(t, doctorRoot)
			stages[want.Stage]++
			t.Logf("stage %d: %s", want.Stage, want.Words)
			if !agrees(got, want) {
				t.Errorf("doctor: stage %d %q\nclient-go: stage %d %q", got.Stage, got.Words, want.Stage, want.Words)
			}
		})
	}
	t.Logf("%d rows: %d built, %d refused by ClientConfig, %d by NewForConfig, %d at the handshake",
		len(rows), stages[TransportBuilt], stages[StageClientConfig], stages[StageNewClient], stages[StageHandshake])
	if stages[TransportBuilt] == 0 || stages[StageClientConfig] == 0 || stages[StageNewClient] == 0 || stages[StageHandshake] == 0 {
		t.Errorf("the rows do not reach every stage: %v", stages)
	}
}
