package cluster

import (
	"context"

	certv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts/kubefacts"
)

// KubeletServingSigner is the signer a kubelet with serverTLSBootstrap asks
// for its serving certificate (k8s.io/api/certificates/v1).
const KubeletServingSigner = certv1.KubeletServingSignerName

// CSRs are the cluster's kubelet-serving CertificateSigningRequests. Err
// keeps a refused list as data: an identity that may not list CSRs is a
// reason the check could not look, not a reason for no list at all.
type CSRs struct {
	Items []certv1.CertificateSigningRequest
	Err   error
}

// CSRsFact lists them once per target, filtered by signer on the server
// (spec.signerName is a field selector of CSRs), so the nodes' client
// certificate CSRs are never read.
var CSRsFact = &checks.Fact[*CSRs]{
	ID:       "cluster-csrs",
	Doc:      "the CertificateSigningRequests for kubelet serving certificates (signer kubernetes.io/kubelet-serving), listed once per target",
	Requires: []checks.Node{kubefacts.AfterAPIAuth, kubefacts.APIClientFact},
	Network:  true,
	Compute: func(p *checks.Pass) (*CSRs, error) {
		api := kubefacts.APIClientFact.Get(p)
		return checks.Shared(p, "csrs "+api.Key, func() (*CSRs, error) {
			ctx, cancel := context.WithTimeout(p.Context, p.Env.APITimeout())
			defer cancel()
			l := &CSRs{}
			l.Err = pages(ctx, func(o metav1.ListOptions) (string, error) {
				r, err := api.Client.CertificatesV1().CertificateSigningRequests().List(ctx, o)
				if err != nil {
					return "", err
				}
				l.Items = append(l.Items, r.Items...)
				return r.Continue, nil
			}, metav1.ListOptions{FieldSelector: "spec.signerName=" + KubeletServingSigner})
			return l, nil
		})
	},
}
