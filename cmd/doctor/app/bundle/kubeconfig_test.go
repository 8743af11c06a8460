package bundle

import (
	"bytes"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/socialwebcomputer/doctor/testkit/testpki"
)

// shapedKey is one user's client key and certificate, by the YAML shape
// its user entry writes them in.
type shapedKey struct {
	shape     string
	cert, key []byte
}

// kubeconfigShapes is testpki.ShapedKubeconfig (a key in every shape YAML
// allows) with a token, a password, a user name, an exec plugin's argument
// and variable, and a server URL's userinfo planted.
func kubeconfigShapes(t testing.TB) (string, []shapedKey) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	ca, err := testpki.NewCA("tenant-ci PKI", now.Add(-time.Hour), now.Add(24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	doc, keys, err := testpki.ShapedKubeconfig(ca, "https://KsrvUsr5Wq1Zm7Tx3:KsrvPw2Tq9Lm6Xz3Wb8N@127.0.0.1:1/clusters/root:k3x9q2mf:tenant-ci:clusters",
		testpki.ShapedSecrets{Token: "KubeTok7Qw3Zp9Lx2Mc5Vb8Nh1Rt4", Password: "FlowPw7Qz2Lm9Tx4Wb", Username: "FlowUsr3Kq8Zm4Tx",
			AliasToken: "AliasTok9Qm2Zp7Lx4Wc", ExecArg: "PlgArg9Kz4Qm2Tx7Wb5Lr", ExecEnv: "PlgEnv9Kz4Qm2Tx7Wb5Lr"},
		"did:plc:ewvi7nxzyoun6zhxrhs64oiz", []string{"socialweb.computer:cluster-owners"}, now.Add(-time.Hour), now.Add(11*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	var out []shapedKey
	for _, u := range testpki.ShapedUsers {
		out = append(out, shapedKey{u, keys[u][0], keys[u][1]})
	}
	return doc, out
}

// plantedKubeSecrets are the secrets kubeconfigShapes writes besides keys.
var plantedKubeSecrets = []string{"KsrvUsr5Wq1Zm7Tx3", "KsrvPw2Tq9Lm6Xz3Wb8N", "KubeTok7Qw3Zp9Lx2Mc5Vb8Nh1Rt4", "FlowPw7Qz2Lm9Tx4Wb",
	"FlowUsr3Kq8Zm4Tx", "AliasTok9Qm2Zp7Lx4Wc", "PlgArg9Kz4Qm2Tx7Wb5Lr", "PlgEnv9Kz4Qm2Tx7Wb5Lr"}

// keyPieces are what of a private key must never be kept: its DER, and the
// private scalar of an EC key in the base64 of its PEM and of its body.
func keyPieces(t testing.TB, keyPEM []byte) []string {
	blk, _ := pem.Decode(keyPEM)
	if blk == nil {
		t.Fatal("not PEM")
	}
	body := base64.StdEncoding.EncodeToString(blk.Bytes)
	data := base64.StdEncoding.EncodeToString(keyPEM)
	return []string{string(blk.Bytes), body[12:52], data[60:108]}
}

// Every shape a kubeconfig can give a key, a token or a password is
// redacted: the result still loads with client-go, each user's key is a
// fresh key whose certificate keeps the subject, issuer, serial and
// validity, and no planted secret or piece of a key is left, neither in
// the text nor base64-decoded.
func TestRedactKubeconfigEveryShape(t *testing.T) {
	doc, keys := kubeconfigShapes(t)
	orig, err := clientcmd.Load([]byte(doc))
	if err != nil {
		t.Fatalf("the planted kubeconfig does not load with client-go: %v", err)
	}
	out := redactKubeFile(t, []byte(doc))
	got, err := clientcmd.Load(out)
	if err != nil {
		t.Fatalf("the redacted kubeconfig does not load: %v\n%s", err, out)
	}
	hay := string(out)
	for _, u := range got.AuthInfos {
		hay += string(u.ClientKeyData) + string(u.ClientCertificateData)
	}
	for _, s := range plantedKubeSecrets {
		if strings.Contains(hay, s) {
			t.Errorf("the redacted kubeconfig keeps %q", s)
		}
	}
	for _, k := range keys {
		for _, piece := range keyPieces(t, k.key) {
			if strings.Contains(hay, piece) {
				t.Errorf("the %s-shaped key is kept", k.shape)
			}
		}
		u := got.AuthInfos[k.shape]
		if u == nil || len(u.ClientKeyData) == 0 || bytes.Equal(u.ClientKeyData, orig.AuthInfos[k.shape].ClientKeyData) {
			t.Errorf("%s: no stand-in key", k.shape)
			continue
		}
		was, now := cert(t, orig.AuthInfos[k.shape].ClientCertificateData), cert(t, u.ClientCertificateData)
		if was.Subject.String() != now.Subject.String() || was.SerialNumber.Cmp(now.SerialNumber) != 0 || !was.NotAfter.Equal(now.NotAfter) {
			t.Errorf("%s: the certificate is not re-issued as it was: %s %s", k.shape, now.Subject, now.NotAfter)
		}
	}
	if u := got.AuthInfos["alias"]; u == nil || len(u.ClientKeyData) == 0 {
		t.Error("the alias lost the key it merges from its anchor")
	}
	c := got.Clusters["tenant-ci"]
	if !strings.HasPrefix(c.Server, "https://") || !strings.HasSuffix(c.Server, "@127.0.0.1:1/clusters/root:k3x9q2mf:tenant-ci:clusters") {
		t.Errorf("the server's host and path are not kept: %s", c.Server)
	}
	if e := got.AuthInfos["plugin"].Exec; e == nil || e.Command != "/usr/local/bin/credential-plugin" || len(e.Args) != 2 || e.Env[0].Name != "AWS_SECRET_ACCESS_KEY" {
		t.Errorf("the exec plugin's command, argument count or variable names are not kept: %+v", e)
	}
	if strings.Contains(hay, "#") {
		t.Errorf("a comment is kept:\n%s", out)
	}
}

// A JSON kubeconfig is YAML too.
func TestRedactKubeconfigJSON(t *testing.T) {
	doc, keys := kubeconfigShapes(t)
	orig, err := clientcmd.Load([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	js, err := clientcmd.Write(*orig)
	if err != nil {
		t.Fatal(err)
	}
	// clientcmd.Write writes YAML; through sigs.k8s.io/yaml it is JSON.
	j, err := yamlToJSON(js)
	if err != nil {
		t.Fatal(err)
	}
	out := redactKubeFile(t, j)
	if _, err := clientcmd.Load(out); err != nil {
		t.Fatalf("does not load: %v", err)
	}
	for _, k := range keys {
		for _, piece := range keyPieces(t, k.key)[1:] {
			if bytes.Contains(out, []byte(piece)) {
				t.Errorf("the %s key is kept in the JSON kubeconfig", k.shape)
			}
		}
	}
}

func redactKubeFile(t *testing.T, b []byte) []byte {
	t.Helper()
	k, err := parseKubeconfig(b)
	if err != nil {
		t.Fatal(err)
	}
	si := newStandIns()
	for _, m := range k.pemValues() {
		si.prepareCerts(m)
	}
	for _, m := range k.pemValues() {
		si.prepare(m)
	}
	out, _, err := redactKubeconfig(si, k)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func cert(t *testing.T, b []byte) *x509.Certificate {
	t.Helper()
	blk, _ := pem.Decode(b)
	if blk == nil {
		t.Fatal("no certificate")
	}
	c, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Aliases that name each other into billions of nodes are refused, not
// expanded.
func TestKubeconfigAliasBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 12; i++ {
		fmt.Fprintf(&b, "a%d: &a%d [", i, i)
		for j := 0; j < 10; j++ {
			if j > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "*a%d", i-1)
		}
		b.WriteString("]\n")
	}
	if _, err := parseKubeconfig([]byte(b.String())); err == nil || !strings.Contains(err.Error(), "nodes") {
		t.Errorf("an alias bomb: %v", err)
	}
}

func yamlToJSON(b []byte) ([]byte, error) { return sigsyaml.YAMLToJSON(b) }
