package e2e

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/cmd/doctor/cli"
	"github.com/socialwebcomputer/doctor/report"
	"github.com/socialwebcomputer/doctor/testkit/testpki"
	"github.com/socialwebcomputer/doctor/testkit/testroot"
)

// TestAPIAuthFailuresRankFirstAndReplay points the runner's kubeconfig at
// real loopback servers that fail in each way the guide's operators meet
// (each one a different error, and a different path of replay), and
// requires doctor run to end within the check's deadline, exit 2 with
// api-auth first, and doctor analyze of the bundle to say the same. What
// the finding says of each failure (its words, the address) is
// checks/apiauth's TestClassifiesEachFailure, and only there.
func TestAPIAuthFailuresRankFirstAndReplay(t *testing.T) {
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
	tlsServer := func(signer *testpki.CA, names []string, ips []net.IP, h http.HandlerFunc) string {
		crt, k, err := signer.Server(names, ips, now.Add(-time.Hour), now.Add(24*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		pair, err := tls.X509KeyPair(crt, k)
		if err != nil {
			t.Fatal(err)
		}
		s := httptest.NewUnstartedServer(h)
		s.TLS = &tls.Config{Certificates: []tls.Certificate{pair}}
		s.StartTLS()
		t.Cleanup(s.Close)
		return s.URL
	}
	unauthorized := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}`)
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

	cases := []struct {
		name, server string
	}{
		{"refused", closed},
		{"timeout", hanging},
		{"unknown-authority", tlsServer(other, nil, loopback, unauthorized)},
		{"hostname-mismatch", tlsServer(ca, []string{"kcp.other.invalid"}, nil, unauthorized)},
		{"revoked", tlsServer(ca, nil, loopback, unauthorized)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := testroot.New(t)
			root.GuideRunner(testroot.GuideConfig, testpki.Kubeconfig("tenant-ci", tc.server, ca.CertPEM, cert, key))
			var out, errb bytes.Buffer
			start := time.Now()
			bundle := filepath.Join(t.TempDir(), "b.tar.gz")
			code := cli.Main([]string{"run", "--root", root.Dir, "-o", "json", "--only", "api-auth", "--timeout", "20s", "--bundle", bundle},
				cli.IO{Out: &out, Err: &errb, Getenv: func(string) string { return "" }})
			var rep report.Report
			if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
				t.Fatalf("exit %d: %v\n%s%s", code, err, out.String(), errb.String())
			}
			if code != 2 || len(rep.Findings) == 0 || rep.Findings[0].Check != "api-auth" {
				t.Fatalf("exit %d, want api-auth first; report: %s", code, summarize(&rep))
			}
			if took := time.Since(start); took > 15*time.Second {
				t.Errorf("doctor run took %s: a failing endpoint ends the run within api-auth's deadline, far under --timeout", took)
			}
			// Each failure, replayed from the bundle, is classified the same.
			assertAnalyzeEqualsLive(t, &rep, bundle, root.Dir)
		})
	}
}
