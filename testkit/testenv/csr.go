//go:build integration

package testenv

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"net"

	certv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CreateServingCSR makes the CSR a kubelet with serverTLSBootstrap sends
// for node (subject system:node:<node>, O=system:nodes, server auth,
// signer kubernetes.io/kubelet-serving), created by the Env's admin: the
// request's subject, not its requester, names the node. With issued, it
// is approved and its certificate set, as an approver and the signer
// would; else it stays Pending.
func (e *Env) CreateServingCSR(name, node string, issued bool) *certv1.CertificateSigningRequest {
	e.t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	e.check(err)
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject:     pkix.Name{CommonName: "system:node:" + node, Organization: []string{"system:nodes"}},
		DNSNames:    []string{node},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
	}, key)
	e.check(err)
	ctx, cancel := e.ctx()
	defer cancel()
	csrs := e.Clientset().CertificatesV1().CertificateSigningRequests()
	c, err := csrs.Create(ctx, &certv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: certv1.CertificateSigningRequestSpec{
			Request:    pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}),
			SignerName: certv1.KubeletServingSignerName,
			Usages:     []certv1.KeyUsage{certv1.UsageDigitalSignature, certv1.UsageServerAuth},
		},
	}, metav1.CreateOptions{})
	e.check(err)
	if !issued {
		return c
	}
	c.Status.Conditions = append(c.Status.Conditions, certv1.CertificateSigningRequestCondition{
		Type: certv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "Test", Message: "approved by the test"})
	c, err = csrs.UpdateApproval(ctx, name, c, metav1.UpdateOptions{})
	e.check(err)
	c.Status.Certificate, _ = e.MintServing(node)
	c, err = csrs.UpdateStatus(ctx, c, metav1.UpdateOptions{})
	e.check(err)
	return c
}
