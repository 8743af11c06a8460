package apiauth

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/checks/clusteroverride"
	"github.com/socialwebcomputer/doctor/checks/kubeconfigfile"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/checktest"
	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/testkit/testpki"
	"github.com/socialwebcomputer/doctor/testkit/testroot"
)

func TestMain(m *testing.M) {
	os.Setenv(hostio.LoopbackOnlyVar, "1")
	os.Exit(m.Run())
}

func TestCases(t *testing.T) {
	checktest.Cases(t, Check, checktest.With(kubeconfigfile.Check, clusteroverride.Check))
}

// TestClassifiesEachFailure points the runner's kubeconfig at loopback
// servers that fail in each way the guide's operators meet: api-auth names
// each one and the address, within its deadline. These are the findings'
// words; the same failures through the binary (exit code, api-auth
// ranked first, analyze of the bundle) are cmd/doctor/e2e's
// TestAPIAuthFailuresRankFirstAndReplay.
func TestClassifiesEachFailure(t *testing.T) {
	now := time.Now()
	ca, err := testpki.NewCA("tenant PKI", now.Add(-time.Hour), now.Add(48*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	cert, key, err := ca.Client("did:plc:abc", []string{"socialweb.computer:cluster-owners"}, now.Add(-time.Hour), now.Add(12*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	other, err := testpki.NewCA("some other CA", now.Add(-time.Hour), now.Add(48*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	tlsServer := func(signer *testpki.CA, names []string, ips []net.IP) string {
		crt, k, err := signer.Server(names, ips, now.Add(-time.Hour), now.Add(24*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		pair, err := tls.X509KeyPair(crt, k)
		if err != nil {
			t.Fatal(err)
		}
		s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}`)
		}))
		s.TLS = &tls.Config{Certificates: []tls.Certificate{pair}}
		s.StartTLS()
		t.Cleanup(s.Close)
		return s.URL
	}
	loopback := []net.IP{net.ParseIP("127.0.0.1")}
	closed := func() string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		return "https://" + addr
	}()
	hanging := func() string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				t.Cleanup(func() { c.Close() }) // accept, never answer
			}
		}()
		return "https://" + l.Addr().String()
	}()
	for _, tc := range []struct {
		name, server string
		says         []string
	}{
		{"refused", closed, []string{"The connection is refused: nothing listens at the server's address and port.", "Check the server URL in the kubeconfig", "connect: connection refused"}},
		{"timeout", hanging, []string{"The API call timed out: the server's address does not answer within the deadline", "Check the route from this host to the server", "context deadline exceeded"}},
		{"unknown-authority", tlsServer(other, nil, loopback), []string{"TLS fails: the server's certificate is signed by an authority the kubeconfig does not trust.", "Download the kubeconfig again", "x509: certificate signed by unknown authority"}},
		{"hostname-mismatch", tlsServer(ca, []string{"kcp.other.invalid"}, nil), []string{"TLS fails: the server's certificate does not name the host in the kubeconfig's server URL.", "Use the server URL getKubeconfig returned", "doesn't contain any IP SANs"}},
		{"revoked", tlsServer(ca, nil, loopback), []string{" answers 401 Unauthorized to a certificate within its dates: it was revoked, or this account no longer owns the cluster.", "downloads a new kubeconfig with the gateway's getKubeconfig call", "selfsubjectreviews: Unauthorized", "client certificate ECDSA P-256, CN=did:plc:abc"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := testroot.New(t)
			root.GuideRunner(testroot.GuideConfig, testpki.Kubeconfig("tenant-ci", tc.server, ca.CertPEM, cert, key))
			start := time.Now()
			rs := checktest.Check(t, Check, checktest.Root(root.Dir), checktest.With(kubeconfigfile.Check, clusteroverride.Check))
			if took := time.Since(start); took > 15*time.Second {
				t.Errorf("took %s: an unreachable endpoint must be a finding within its deadline", took)
			}
			checktest.WantResults(t, rs, checktest.ResultWant{Runner: 1, Status: checks.StatusFail,
				Findings: []checktest.FindingWant{{Severity: checks.Critical, Says: append(tc.says, tc.server)}}})
		})
	}
}
