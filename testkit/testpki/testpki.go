// Package testpki mints the certificates tests need: CAs, client
// certificates of the gateway's shape (CN=<did>, O=<groups>), serving
// certificates for loopback, and kubeconfigs that carry them. Nothing here is
// a fixture on disk: certificates are minted at test time and --now fixes the
// clock they are judged by.
package testpki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"time"
)

// CA signs certificates.
type CA struct {
	Cert    *x509.Certificate
	Key     *ecdsa.PrivateKey
	CertPEM []byte
}

// NewCA mints a self-signed ECDSA P-256 CA valid from notBefore to notAfter.
func NewCA(cn string, notBefore, notAfter time.Time) (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: cn},
		NotBefore: notBefore, NotAfter: notAfter,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &CA{Cert: cert, Key: key, CertPEM: PEM("CERTIFICATE", der)}, nil
}

// Client mints a client certificate: Kubernetes reads the user from CN and
// the groups from O.
func (ca *CA) Client(cn string, groups []string, notBefore, notAfter time.Time) (certPEM, keyPEM []byte, err error) {
	return ca.sign(&x509.Certificate{
		Subject:   pkix.Name{CommonName: cn, Organization: groups},
		NotBefore: notBefore, NotAfter: notAfter,
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
}

// Server mints a serving certificate for the given DNS names and IPs.
func (ca *CA) Server(dnsNames []string, ips []net.IP, notBefore, notAfter time.Time) (certPEM, keyPEM []byte, err error) {
	cn := "server"
	if len(dnsNames) > 0 {
		cn = dnsNames[0]
	}
	return ca.sign(&x509.Certificate{
		Subject:  pkix.Name{CommonName: cn},
		DNSNames: dnsNames, IPAddresses: ips,
		NotBefore: notBefore, NotAfter: notAfter,
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
}

func (ca *CA) sign(tmpl *x509.Certificate) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl.SerialNumber = serial()
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.Key)
	if err != nil {
		return nil, nil, err
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return PEM("CERTIFICATE", der), PEM("EC PRIVATE KEY", kder), nil
}

// PEM encodes one block.
func PEM(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		panic(err)
	}
	return n
}

// Kubeconfig is a kubeconfig of the shape getKubeconfig returns: one
// cluster, one user with client-certificate-data and client-key-data, one
// context, current-context set.
func Kubeconfig(name, server string, caPEM, certPEM, keyPEM []byte) []byte {
	b64 := base64.StdEncoding.EncodeToString
	ca := ""
	if len(caPEM) > 0 {
		ca = "\n    certificate-authority-data: " + b64(caPEM)
	}
	return []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: %[1]s
  cluster:
    server: %[2]s%[3]s
users:
- name: %[1]s
  user:
    client-certificate-data: %[4]s
    client-key-data: %[5]s
contexts:
- name: %[1]s
  context:
    cluster: %[1]s
    user: %[1]s
current-context: %[1]s
`, name, server, ca, b64(certPEM), b64(keyPEM)))
}

// KubeconfigFiles is Kubeconfig with the CA, certificate and key named as
// files (paths as given: relative ones resolve against the kubeconfig's
// directory) instead of carried as -data.
func KubeconfigFiles(name, server, caFile, certFile, keyFile string) []byte {
	return []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: %[1]s
  cluster:
    server: %[2]s
    certificate-authority: %[3]s
users:
- name: %[1]s
  user:
    client-certificate: %[4]s
    client-key: %[5]s
contexts:
- name: %[1]s
  context:
    cluster: %[1]s
    user: %[1]s
current-context: %[1]s
`, name, server, caFile, certFile, keyFile))
}
