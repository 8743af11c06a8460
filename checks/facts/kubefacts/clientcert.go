package kubefacts

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"path"
	"strings"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts/configfacts"
	"github.com/socialwebcomputer/doctor/internal/hostio"
)

// OwnersGroup is the group the gateway's certificates carry, bound to
// cluster-admin in every tenant cluster.
const OwnersGroup = "socialweb.computer:cluster-owners"

// ClientCert is the client certificate of the kubeconfig's current user.
type ClientCert struct {
	Source string            // "client-certificate-data of user X in /etc/…/kubeconfig.yaml"
	Cert   *x509.Certificate // nil when the user has none (token auth) or it did not parse
	// Absent says why there is no certificate to examine.
	Absent string
	Err    error // present but unreadable or unparseable
}

// Describe names a certificate without any of its bytes: key type, subject,
// groups and validity. This is what evidence shows instead of the PEM.
func Describe(c *x509.Certificate) string {
	return fmt.Sprintf("client certificate %s, CN=%s, groups=[%s], issuer CN=%s, valid %s to %s",
		KeyType(c), c.Subject.CommonName, strings.Join(c.Subject.Organization, ","), c.Issuer.CommonName,
		c.NotBefore.UTC().Format("2006-01-02T15:04Z"), c.NotAfter.UTC().Format("2006-01-02T15:04Z"))
}

// KeyType is "ECDSA P-256", "RSA 2048", "Ed25519".
func KeyType(c *x509.Certificate) string {
	switch k := c.PublicKey.(type) {
	case *ecdsa.PublicKey:
		return "ECDSA " + k.Curve.Params().Name
	case *rsa.PublicKey:
		return fmt.Sprintf("RSA %d", k.N.BitLen())
	case ed25519.PublicKey:
		return "Ed25519"
	}
	return c.PublicKeyAlgorithm.String()
}

// ClientCertFact extracts and parses the certificate a runner presents: its
// cert_file when host is set (the out-of-cluster branch), else its
// kubeconfig context's user's.
var ClientCertFact = &checks.Fact[*ClientCert]{
	ID:       "client-cert",
	Doc:      "the client certificate a runner's Kubernetes client presents",
	Requires: []checks.Node{KubeContextFact, configfacts.RunnerEntryFact},
	Compute: func(p *checks.Pass) (*ClientCert, error) {
		k, kube := KubeContextFact.Get(p), configfacts.RunnerEntryFact.Get(p).Kube()
		cc := &ClientCert{}
		switch {
		case kube.Host != "" && p.Env.KubeconfigPath == "":
			if kube.CertFile == "" {
				cc.Absent = "host is set without cert_file: the runner authenticates without a client certificate"
				return cc, nil
			}
			cc.Source = "cert_file " + kube.CertFile
			data, err := configfacts.RunnerEntryFact.Get(p).File.Files.Read(kube.CertFile, hostio.KindPEM)
			if err != nil {
				cc.Err = err
				return cc, nil
			}
			cc.Cert, cc.Err = ParseCertPEM(data)
		case k.AuthInfo == nil:
			cc.Absent = "the kubeconfig has no user for its current context"
			return cc, nil
		case len(k.AuthInfo.ClientCertificateData) > 0:
			cc.Source = fmt.Sprintf("client-certificate-data of user %q", k.Context.AuthInfo)
			cc.Cert, cc.Err = ParseCertPEM(k.AuthInfo.ClientCertificateData)
		case k.AuthInfo.ClientCertificate != "":
			// client-go resolved a relative path against the file's directory
			// under the root; map it back to a host path for the read.
			hp := hostPath(p.Env, k.AuthInfo.ClientCertificate)
			cc.Source = "client-certificate " + hp
			data, err := k.Kubeconfig.Reader.Read(hp, hostio.KindPEM)
			if err != nil {
				cc.Err = err
				return cc, nil
			}
			cc.Cert, cc.Err = ParseCertPEM(data)
		default:
			cc.Absent = fmt.Sprintf("user %q authenticates without a client certificate", k.Context.AuthInfo)
		}
		if cc.Err != nil {
			cc.Err = fmt.Errorf("%s: %w", cc.Source, cc.Err)
		}
		return cc, nil
	},
}

// ParseCertPEM parses the first CERTIFICATE block; other blocks (keys) are
// never looked at beyond their type.
func ParseCertPEM(b []byte) (*x509.Certificate, error) {
	for len(b) > 0 {
		var blk *pem.Block
		blk, b = pem.Decode(b)
		if blk == nil {
			break
		}
		if blk.Type == "CERTIFICATE" {
			return x509.ParseCertificate(blk.Bytes)
		}
	}
	return nil, fmt.Errorf("no PEM CERTIFICATE block")
}

func hostPath(env *hostio.Env, p string) string {
	if env.Root != "" && env.Root != "/" {
		root := path.Clean(env.Root)
		if rel, ok := strings.CutPrefix(p, root+"/"); ok {
			return "/" + rel
		}
	}
	return p
}
