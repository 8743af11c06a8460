package kubeletserving

import (
	"context"
	"testing"
	"time"

	certv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/checktest"
	"github.com/socialwebcomputer/doctor/checks/facts/cluster"
	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/runnerconfig"
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

func runJudge(t *testing.T, nodes []corev1.Node, csrs *cluster.CSRs, wait runnerconfig.Waiting) checks.CheckResult {
	t.Helper()
	c := *Check
	c.Requires = nil
	c.Run = func(p *checks.Pass) error { return judge(p, `[[runners]] #1 "k"`, nodes, csrs, wait) }
	res, err := checks.Run(context.Background(), &hostio.Env{Root: t.TempDir(), Clock: now}, []*checks.Check{&c}, checks.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return res.Checks[0]
}

func TestJudge(t *testing.T) {
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "certificates.k8s.io", Resource: "certificatesigningrequests"}, "",
		nil)
	k3s := func(n *corev1.Node) { n.Status.NodeInfo.KubeletVersion = "v1.33.4+k3s1" }
	cases := []struct {
		name   string
		nodes  []corev1.Node
		csrs   *cluster.CSRs
		wait   runnerconfig.Waiting
		status checks.Status
		sev    checks.Severity
		says   []string
	}{
		{"issued", []corev1.Node{node("rented-1", true)}, &cluster.CSRs{Items: []certv1.CertificateSigningRequest{csr("csr-a", "rented-1", time.Hour, true, true)}},
			runnerconfig.Waiting{}, checks.StatusPass, 0, nil},
		{"pending-ready-node", []corev1.Node{node("rented-1", true)}, &cluster.CSRs{Items: []certv1.CertificateSigningRequest{csr("csr-a", "rented-1", 4*time.Minute, false, false)}},
			runnerconfig.Waiting{}, checks.StatusFail, checks.Error, []string{"node rented-1 is Ready, but its kubelet serving certificate request csr-a is Pending (not approved) (4m0s old)",
				"error dialing backend: remote error: tls: internal error", "does not set FF_WAIT_FOR_POD_TO_BE_REACHABLE", "kubectl certificate approve csr-a",
				"FF_WAIT_FOR_POD_TO_BE_REACHABLE = true in [runners.feature_flags]"}},
		{"pending-with-flag", []corev1.Node{node("rented-1", true)}, &cluster.CSRs{Items: []certv1.CertificateSigningRequest{csr("csr-a", "rented-1", time.Minute, false, false)}},
			runnerconfig.Waiting{On: true, Source: "[runners.feature_flags]"}, checks.StatusFail, checks.Error, []string{"FF_WAIT_FOR_POD_TO_BE_REACHABLE is set ([runners.feature_flags])", "timed out waiting for pod to become attachable"}},
		{"approved-not-issued", []corev1.Node{node("rented-1", true)}, &cluster.CSRs{Items: []certv1.CertificateSigningRequest{csr("csr-a", "rented-1", time.Minute, true, false)}},
			runnerconfig.Waiting{}, checks.StatusFail, checks.Error, []string{"Approved but not issued"}},
		// A newer issued CSR settles an older one left Pending.
		{"older-pending-newer-issued", []corev1.Node{node("rented-1", true)}, &cluster.CSRs{Items: []certv1.CertificateSigningRequest{
			csr("csr-old", "rented-1", time.Hour, false, false), csr("csr-new", "rented-1", time.Minute, true, true)}},
			runnerconfig.Waiting{}, checks.StatusPass, 0, nil},
		{"pending-node-not-ready", []corev1.Node{node("rented-1", false)}, &cluster.CSRs{Items: []certv1.CertificateSigningRequest{csr("csr-a", "rented-1", time.Minute, false, false)}},
			runnerconfig.Waiting{}, checks.StatusFail, checks.Warning, []string{"node rented-1 is not Ready yet"}},
		{"pending-no-node-young", nil, &cluster.CSRs{Items: []certv1.CertificateSigningRequest{csr("csr-a", "rented-9", time.Minute, false, false)}},
			runnerconfig.Waiting{}, checks.StatusFail, checks.Warning, []string{"no node rented-9 exists yet"}},
		{"pending-no-node-stale", nil, &cluster.CSRs{Items: []certv1.CertificateSigningRequest{csr("csr-a", "rented-9", 3*time.Hour, false, false)}},
			runnerconfig.Waiting{}, checks.StatusPass, 0, nil},
		{"k3s", []corev1.Node{node("rented-1", true, k3s)}, &cluster.CSRs{}, runnerconfig.Waiting{}, checks.StatusSkipped, 0,
			[]string{"from k3s itself, not through CSRs: kubelet-reach tells"}},
		{"k3s-by-provider-id", []corev1.Node{node("rented-1", true, func(n *corev1.Node) { n.Spec.ProviderID = "k3s://rented-1" })}, &cluster.CSRs{}, runnerconfig.Waiting{}, checks.StatusSkipped, 0,
			[]string{"from k3s itself"}},
		{"forbidden", []corev1.Node{node("rented-1", true)}, &cluster.CSRs{Err: forbidden}, runnerconfig.Waiting{}, checks.StatusUnknown, 0,
			[]string{"may not list certificatesigningrequests.certificates.k8s.io at the cluster scope"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := runJudge(t, tc.nodes, tc.csrs, tc.wait)
			checktest.WantSays(t, r, tc.status, tc.says...)
			if tc.sev != 0 && (len(r.Findings) == 0 || r.Findings[0].Severity != tc.sev) {
				t.Errorf("want a %s finding:\n%s", tc.sev, checktest.Text(r))
			}
			if tc.status == checks.StatusPass && len(r.Findings) > 0 {
				t.Errorf("want no finding:\n%s", checktest.Text(r))
			}
		})
	}
}
