//go:build integration

package kubeletserving

import (
	"testing"

	"github.com/socialwebcomputer/doctor/checks/checktest/apigatetest"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/checktest"
	"github.com/socialwebcomputer/doctor/testkit/testenv"
)

// Real CSRs on a real apiserver, listed by the signer's field selector: a
// Ready node whose serving CSR is issued passes; a second Ready node whose
// CSR nobody approved fails naming it, its requester the admin that
// created it (the node is named by the request's subject).
func TestLive(t *testing.T) {
	live := checktest.Cluster(t, "", apigatetest.With())
	live.CreateNode("rented-1", testenv.ReadyNodeStatus("4", "8Gi", 10250))
	live.CreateServingCSR("csr-rented-1", "rented-1", true)
	t.Run("issued", func(t *testing.T) {
		checktest.WantResults(t, live.Check(t, Check, apigatetest.With()), pass())
	})
	live.CreateNode("rented-2", testenv.ReadyNodeStatus("4", "8Gi", 10250))
	live.CreateServingCSR("csr-rented-2", "rented-2", false)
	t.Run("pending-serving-csr", func(t *testing.T) {
		checktest.WantResults(t, live.Check(t, Check, apigatetest.With()), fail(checks.Error,
			`[[runners]] #1 "kcp-tenant-kubernetes": node rented-2 is Ready, but its kubelet serving certificate request csr-rented-2 is Pending (not approved)`,
			"does not set FF_WAIT_FOR_POD_TO_BE_REACHABLE", "certificate approve csr-rented-2",
			"GET /apis/certificates.k8s.io/v1/certificatesigningrequests/csr-rented-2: signer kubernetes.io/kubelet-serving, requested by testenv-admin ", "ago: Pending (not approved)",
			"GET /api/v1/nodes/rented-2: Ready"))
	})
}
