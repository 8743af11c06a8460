//go:build integration

package testenv

import (
	"time"

	"github.com/socialwebcomputer/doctor/testkit/testpki"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// OwnerCert mints the guide's owner identity: CN=did,
// O=socialweb.computer:cluster-owners, valid from an hour before now (or
// before notAfter, for already-expired certificates) until notAfter.
func (e *Env) OwnerCert(did string, notAfter time.Time) (certPEM, keyPEM []byte) {
	notBefore := time.Now().Add(-time.Hour)
	if !notAfter.After(notBefore) {
		notBefore = notAfter.Add(-time.Hour)
	}
	return e.MintClient(did, []string{OwnersGroup}, notBefore, notAfter)
}

// OwnerKubeconfigBytes is a kubeconfig for the owner identity (see
// OwnerCert), as getKubeconfig hands it out, for the apiserver itself.
func (e *Env) OwnerKubeconfigBytes(did string, notAfter time.Time) []byte {
	certPEM, keyPEM := e.OwnerCert(did, notAfter)
	return testpki.Kubeconfig("tenant-ci", e.URL, e.CAPEM, certPEM, keyPEM)
}

// OwnerKubeconfig writes a kubeconfig file for the owner identity (see
// OwnerCert) with embedded certificate data, as the gateway hands out.
func (e *Env) OwnerKubeconfig(path, did string, notAfter time.Time) {
	certPEM, keyPEM := e.OwnerCert(did, notAfter)
	e.WriteKubeconfig(path, e.URL, certPEM, keyPEM)
}

// WriteKubeconfig writes a one-context kubeconfig for server (e.URL, or a
// front's URL) that trusts the env's CA and authenticates with the given
// client certificate.
func (e *Env) WriteKubeconfig(path, server string, certPEM, keyPEM []byte) {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["testenv"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: e.CAPEM}
	cfg.AuthInfos["testenv"] = &clientcmdapi.AuthInfo{ClientCertificateData: certPEM, ClientKeyData: keyPEM}
	cfg.Contexts["testenv"] = &clientcmdapi.Context{Cluster: "testenv", AuthInfo: "testenv"}
	cfg.CurrentContext = "testenv"
	e.check(clientcmd.WriteToFile(*cfg, path))
}

// BindOwnersToClusterAdmin creates the ClusterRoleBinding
// socialweb.computer:cluster-owners -> cluster-admin, as the gateway cluster
// has. RBAC sees it within a moment (the authorizer reads an informer cache),
// so callers that expect 200 right after should retry briefly.
func (e *Env) BindOwnersToClusterAdmin() {
	ctx, cancel := e.ctx()
	defer cancel()
	_, err := e.Clientset().RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: OwnersGroup},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: OwnersGroup}},
	}, metav1.CreateOptions{})
	e.check(err)
}
