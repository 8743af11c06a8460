//go:build integration

package e2e

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	certv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/socialwebcomputer/doctor/report"
	"github.com/socialwebcomputer/doctor/testkit/fixture"
	"github.com/socialwebcomputer/doctor/testkit/testenv"
	"github.com/socialwebcomputer/doctor/testkit/testroot"
)

// The node checks on a real apiserver, run together: kubelet-serving reads
// real CSRs, kubelet-reach's one-byte log read goes through kube-apiserver
// v1.37.2 to a kubelet on loopback (the fake kubelet, one without a
// certificate), node-arch reads real node labels, and clock-skew reads the
// apiserver's own Date headers. What kubelet-reach concludes of a closed
// port or a kubelet that never answers is proven in checks/kubeletreach.
const nodeChecks = "kubelet-serving,kubelet-reach,node-arch,clock-skew"

type nodeCase struct {
	name  string
	setup func(t *testing.T, env *testenv.Env) (kubeletRequests func() []string)
	want  fixture.Want
}

func TestNodeScenarios(t *testing.T) {
	const ks, kr, na, cs = "kubelet-serving", "kubelet-reach", "node-arch", "clock-skew"
	// clock-skew passes only when it compared the apiserver's Date headers
	// with this host's clock (with none it is skipped): they share a machine.
	allPass := map[string]string{ks: "pass", kr: "pass", na: "pass", cs: "pass"}
	cases := []nodeCase{
		{name: "healthy", setup: func(t *testing.T, env *testenv.Env) func() []string {
			k := env.StartFakeKubelet(t)
			rentArchNode(t, env, "rented-1", "amd64", k.Port)
			createServingCSR(t, env, "csr-rented-1", "rented-1", true)
			return k.Requests
		}, want: fixture.Want{Exit: 0, Status: allPass}},
		// A serving CSR nobody approved: the kubelet answers TLS with
		// internal_error, kubelet-serving names the CSR and ranks first,
		// kubelet-reach's failed read folds under it.
		{name: "pending-serving-csr", setup: func(t *testing.T, env *testenv.Env) func() []string {
			rentArchNode(t, env, "rented-1", "amd64", testenv.StartUncertifiedKubelet(t))
			createServingCSR(t, env, "csr-rented-1", "rented-1", false)
			return nil
		}, want: fixture.Want{Exit: 2, Top: ks, Findings: []string{kr}, CausedBy: map[string]string{kr: ks},
			Says: map[string][]string{
				ks: {"node rented-1 is Ready, but its kubelet serving certificate request csr-rented-1 is Pending (not approved)", "certificate approve csr-rented-1",
					"does not set FF_WAIT_FOR_POD_TO_BE_REACHABLE"},
				kr: {"remote error: tls: internal error", "1 of 1 node sampled"}},
			Status: map[string]string{na: "pass", cs: "pass"}}},
		// The cluster rents arm64 nodes; the runner keeps the amd64 helper.
		{name: "arm64-nodes-amd64-helper", setup: func(t *testing.T, env *testenv.Env) func() []string {
			k := env.StartFakeKubelet(t)
			rentArchNode(t, env, "rented-1", "arm64", k.Port)
			return nil
		}, want: fixture.Want{Exit: 2, Top: na, Says: map[string][]string{na: {"the helper image is linux/amd64", "rented-1 (arm64)", `"kubernetes.io/arch" = "arm64"`}},
			Status: map[string]string{ks: "pass", kr: "pass", cs: "pass"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := testenv.Start(t)
			env.BindOwnersToClusterAdmin()
			env.EnsureNamespace("gitlab-runner")
			requests := tc.setup(t, env)
			root := testroot.New(t)
			root.GuideRunner(testroot.GuideConfig, ownerKubeconfig(env, env.URL, time.Now().Add(12*time.Hour)))
			// GitLab is not part of these scenarios: runner-token would only
			// be refused, and clock-skew compares what the apiserver sent.
			rep, _ := runReport(t, "run", "--root", root.Dir, "-o", "json", "--timeout", "60s", "--only", nodeChecks,
				"--skip", "runner-token,gitlab-reachability")
			fixture.AssertWant(t, rep, tc.want)
			assertSays(t, rep, tc.want.Says)
			if requests != nil {
				// The read went through the apiserver to the kubelet, for
				// one byte of the node-local DNS pod's log.
				// Once: the early read (sent with kube-system's list) is
				// the check's, not a second one.
				want := "GET /containerLogs/kube-system/node-dns-rented-1/" + testenv.ContainerName
				if got := requests(); len(slices.DeleteFunc(slices.Clone(got), func(r string) bool { return r != want })) != 1 {
					t.Errorf("the kubelet saw %v, want %q once", got, want)
				}
			}
		})
	}
}

// assertSays checks fixture.Want.Says against every finding of each check (its
// cause, fix and evidence), where fixture.AssertWant looks at the first only.
func assertSays(t *testing.T, rep *report.Report, says map[string][]string) {
	t.Helper()
	for check, words := range says {
		var all strings.Builder
		for _, f := range rep.Findings {
			if f.Check != check {
				continue
			}
			all.WriteString(f.Cause + "\n" + f.Fix + "\n")
			for _, e := range f.Evidence {
				all.WriteString(e.Source + ": " + e.Detail + "\n")
			}
		}
		for _, w := range words {
			if !strings.Contains(all.String(), w) {
				t.Errorf("%s does not say %q:\n%s", check, w, all.String())
			}
		}
	}
}

// rentArchNode is a node as the provider joins it (rentNode), with its
// kubernetes.io/arch label.
func rentArchNode(t *testing.T, env *testenv.Env, name, arch string, kubeletPort int) {
	t.Helper()
	rentNode(t, env, name, "4", "16Gi", kubeletPort)
	patch := []byte(`{"metadata":{"labels":{"kubernetes.io/arch":"` + arch + `","kubernetes.io/os":"linux"}}}`)
	if _, err := env.Clientset().CoreV1().Nodes().Patch(t.Context(), name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// createServingCSR makes the CSR a kubelet with serverTLSBootstrap sends
// (subject system:node:<node>, O=system:nodes, server auth), and approves
// and issues it when asked, as an approver and the signer would.
func createServingCSR(t *testing.T, env *testenv.Env, name, node string, issued bool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject:     pkix.Name{CommonName: "system:node:" + node, Organization: []string{"system:nodes"}},
		DNSNames:    []string{node},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
	}, key)
	if err != nil {
		t.Fatal(err)
	}
	csrs := env.Clientset().CertificatesV1().CertificateSigningRequests()
	c, err := csrs.Create(t.Context(), &certv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: certv1.CertificateSigningRequestSpec{
			Request:    pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}),
			SignerName: certv1.KubeletServingSignerName,
			Usages:     []certv1.KeyUsage{certv1.UsageDigitalSignature, certv1.UsageServerAuth},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !issued {
		return
	}
	c.Status.Conditions = append(c.Status.Conditions, certv1.CertificateSigningRequestCondition{
		Type: certv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "Test", Message: "approved by the test"})
	if c, err = csrs.UpdateApproval(t.Context(), name, c, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	certPEM, _ := env.MintServing(node)
	c.Status.Certificate = certPEM
	if _, err := csrs.UpdateStatus(t.Context(), c, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}
