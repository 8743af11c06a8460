package kubeletserving

import (
	"errors"
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/checks/checktest/apigatetest"

	certv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/checktest"
	"github.com/socialwebcomputer/doctor/checks/facts/cluster"
	"github.com/socialwebcomputer/doctor/testkit/testroot"
)

var now = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func node(name string, ready bool, mutate ...func(*corev1.Node)) corev1.Node {
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	n := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: st}}
	for _, m := range mutate {
		m(&n)
	}
	return n
}

// csr is a kubelet-serving CSR of node, age old; approved and issued as told.
func csr(name, node string, age time.Duration, approved, issued bool) certv1.CertificateSigningRequest {
	c := certv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(now.Add(-age))},
		Spec:       certv1.CertificateSigningRequestSpec{SignerName: certv1.KubeletServingSignerName, Username: "system:node:" + node},
	}
	if approved {
		c.Status.Conditions = []certv1.CertificateSigningRequestCondition{{Type: certv1.CertificateApproved, Status: corev1.ConditionTrue}}
	}
	if issued {
		c.Status.Certificate = []byte("-----BEGIN CERTIFICATE-----")
	}
	return c
}

// withFlag is the guide's config with FF_WAIT_FOR_POD_TO_BE_REACHABLE set.
var withFlag = testroot.GuideConfig + "\n  [runners.feature_flags]\n    FF_WAIT_FOR_POD_TO_BE_REACHABLE = true\n"

// runJudge runs the check for the guide's runner (or config's) on the
// cluster's nodes and kubelet-serving CSRs given.
func runJudge(t *testing.T, config string, lists *cluster.Lists, csrs *cluster.CSRs) []checks.CheckResult {
	t.Helper()
	if config == "" {
		config = testroot.GuideConfig
	}
	root := testroot.New(t)
	root.Write("/etc/gitlab-runner/config.toml", config, 0o600)
	lists.Namespace = "gitlab-runner"
	return checktest.Check(t, Check, checktest.Root(root.Dir), checktest.Now(now),
		checktest.Fact(cluster.ListsFact, lists), checktest.Fact(cluster.CSRsFact, csrs))
}

func pass() checktest.ResultWant { return checktest.ResultWant{Runner: 1, Status: checks.StatusPass} }

func fail(sev checks.Severity, says ...string) checktest.ResultWant {
	return checktest.ResultWant{Runner: 1, Status: checks.StatusFail, Findings: []checktest.FindingWant{{Severity: sev, Says: says}}}
}

func TestJudge(t *testing.T) {
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "certificates.k8s.io", Resource: "certificatesigningrequests"}, "",
		nil)
	k3s := func(n *corev1.Node) { n.Status.NodeInfo.KubeletVersion = "v1.33.4+k3s1" }
	const label = `[[runners]] #1 "kcp-tenant-kubernetes": `
	items := func(cs ...certv1.CertificateSigningRequest) *cluster.CSRs { return &cluster.CSRs{Items: cs} }
	for _, tc := range []struct {
		name   string
		config string
		nodes  []corev1.Node
		errs   map[string]error
		csrs   *cluster.CSRs
		want   checktest.ResultWant
	}{
		{name: "issued", nodes: []corev1.Node{node("rented-1", true)}, csrs: items(csr("csr-a", "rented-1", time.Hour, true, true)), want: pass()},
		{name: "pending-ready-node", nodes: []corev1.Node{node("rented-1", true)}, csrs: items(csr("csr-a", "rented-1", 4*time.Minute, false, false)),
			want: fail(checks.Error, label+"node rented-1 is Ready, but its kubelet serving certificate request csr-a is Pending (not approved) (4m0s old)",
				"error dialing backend: remote error: tls: internal error", "does not set FF_WAIT_FOR_POD_TO_BE_REACHABLE", "kubectl certificate approve csr-a",
				"[runners.feature_flags]\nFF_WAIT_FOR_POD_TO_BE_REACHABLE = true",
				"GET /apis/certificates.k8s.io/v1/certificatesigningrequests/csr-a: signer kubernetes.io/kubelet-serving, requested by system:node:rented-1 4m0s ago: Pending (not approved)",
				"GET /api/v1/nodes/rented-1: Ready")},
		// The flag is read from the runner's config.toml.
		{name: "pending-with-flag", config: withFlag, nodes: []corev1.Node{node("rented-1", true)}, csrs: items(csr("csr-a", "rented-1", time.Minute, false, false)),
			want: fail(checks.Error, "FF_WAIT_FOR_POD_TO_BE_REACHABLE is set ([runners.feature_flags])", "timed out waiting for pod to become attachable")},
		{name: "approved-not-issued", nodes: []corev1.Node{node("rented-1", true)}, csrs: items(csr("csr-a", "rented-1", time.Minute, true, false)),
			want: fail(checks.Error, "csr-a is Approved but not issued (no signer for kubernetes.io/kubelet-serving signs it)")},
		// A newer issued CSR settles an older one left Pending.
		{name: "older-pending-newer-issued", nodes: []corev1.Node{node("rented-1", true)},
			csrs: items(csr("csr-old", "rented-1", time.Hour, false, false), csr("csr-new", "rented-1", time.Minute, true, true)), want: pass()},
		// Each node's newest CSR, in the nodes' order; another signer's is
		// not read.
		{name: "two-nodes", nodes: []corev1.Node{node("rented-2", true), node("rented-1", false)},
			csrs: items(csr("csr-b", "rented-2", time.Minute, false, false), csr("csr-a", "rented-1", time.Minute, false, false),
				func() certv1.CertificateSigningRequest {
					c := csr("csr-client", "rented-2", time.Minute, false, false)
					c.Spec.SignerName = certv1.KubeAPIServerClientKubeletSignerName
					return c
				}()),
			want: checktest.ResultWant{Runner: 1, Status: checks.StatusFail, Findings: []checktest.FindingWant{
				{Severity: checks.Warning, Says: []string{"node rented-1 is not Ready yet and its kubelet serving certificate request csr-a is Pending (not approved)"}},
				{Severity: checks.Error, Says: []string{"node rented-2 is Ready, but its kubelet serving certificate request csr-b"}}}}},
		{name: "pending-node-not-ready", nodes: []corev1.Node{node("rented-1", false)}, csrs: items(csr("csr-a", "rented-1", time.Minute, false, false)),
			want: fail(checks.Warning, label+"node rented-1 is not Ready yet and its kubelet serving certificate request csr-a is Pending (not approved) (1m0s old)",
				"kubectl certificate approve csr-a", "And run an approver")},
		{name: "pending-no-node-young", csrs: items(csr("csr-a", "rented-9", time.Minute, false, false)),
			want: fail(checks.Warning, label+"kubelet serving certificate request csr-a of system:node:rented-9 is Pending (not approved) (1m0s old), and no node rented-9 exists yet",
				"Once the node is yours, approve it", "kubectl certificate approve csr-a")},
		{name: "pending-no-node-stale", csrs: items(csr("csr-a", "rented-9", 3*time.Hour, false, false)), want: pass()},
		// Denied is an operator's decision.
		{name: "denied", nodes: []corev1.Node{node("rented-1", true)}, csrs: items(func() certv1.CertificateSigningRequest {
			c := csr("csr-a", "rented-1", time.Minute, false, false)
			c.Status.Conditions = []certv1.CertificateSigningRequestCondition{{Type: certv1.CertificateDenied, Status: corev1.ConditionTrue}}
			return c
		}()), want: pass()},
		{name: "k3s", nodes: []corev1.Node{node("rented-1", true, k3s)}, csrs: &cluster.CSRs{},
			want: checktest.ResultWant{Runner: 1, Status: checks.StatusSkipped, Reason: "the cluster's kubelets get their serving certificates from k3s itself, not through CSRs: kubelet-reach tells"}},
		{name: "k3s-by-provider-id", nodes: []corev1.Node{node("rented-1", true, func(n *corev1.Node) { n.Spec.ProviderID = "k3s://rented-1" })}, csrs: &cluster.CSRs{},
			want: checktest.ResultWant{Runner: 1, Status: checks.StatusSkipped, Reason: "from k3s itself"}},
		// One node that is not k3s: its kubelet asks with a CSR.
		{name: "k3s-and-another", nodes: []corev1.Node{node("rented-1", true, k3s), node("rented-2", true)}, csrs: items(csr("csr-b", "rented-2", time.Minute, false, false)),
			want: fail(checks.Error, "node rented-2 is Ready, but its kubelet serving certificate request csr-b is Pending")},
		{name: "forbidden", nodes: []corev1.Node{node("rented-1", true)}, csrs: &cluster.CSRs{Err: forbidden},
			want: checktest.ResultWant{Runner: 1, Status: checks.StatusUnknown, Reason: "may not list certificatesigningrequests.certificates.k8s.io at the cluster scope"}},
		{name: "csrs-not-listed", nodes: []corev1.Node{node("rented-1", true)}, csrs: &cluster.CSRs{Err: errors.New("the server was slow")},
			want: checktest.ResultWant{Runner: 1, Status: checks.StatusUnknown, Reason: "listing certificatesigningrequests: the server was slow"}},
		{name: "nodes-not-listed", errs: map[string]error{"nodes": errors.New("the server was slow")}, csrs: items(csr("csr-a", "rented-1", time.Minute, false, false)),
			want: checktest.ResultWant{Runner: 1, Status: checks.StatusUnknown, Reason: "listing nodes: the server was slow"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checktest.WantResults(t, runJudge(t, tc.config, &cluster.Lists{Nodes: tc.nodes, Errs: tc.errs}, tc.csrs), tc.want)
		})
	}
}

// The check reads the cluster's lists (given above); here, the hosts it
// does not apply to.
// The lists gate on api-auth by its ID (kubefacts.AfterAPIAuth): it is put in
// the catalog.
func TestCases(t *testing.T) { checktest.Cases(t, Check, apigatetest.With()) }
