package kubefacts

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/testkit/testpki"
)

// Every parser here reads bytes a host (or an attacker with write access to
// a file doctor reads) controls: none may panic, and what each returns is
// never larger than what it was given.

func FuzzParseCertPEM(f *testing.F) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	ca, err := testpki.NewCA("fuzz CA", now.Add(-time.Hour), now.Add(time.Hour))
	if err != nil {
		f.Fatal(err)
	}
	cert, key, err := ca.Client("did:plc:fuzz", []string{"socialweb.computer:cluster-owners"}, now.Add(-time.Hour), now.Add(time.Hour))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(cert)
	f.Add(append(append([]byte{}, key...), cert...)) // key first: skipped by type
	f.Add([]byte("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"))
	f.Add([]byte("not pem"))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseCertPEM(b)
		if (c == nil) == (err == nil) {
			t.Fatalf("cert %v and err %v: exactly one must be set", c != nil, err)
		}
		if c != nil {
			if d := Describe(c); len(d) > 400+2*len(b) {
				t.Fatalf("description of %d bytes for %d bytes of input", len(d), len(b))
			}
		}
	})
}

// FuzzKubeconfig feeds arbitrary bytes through the kubeconfig and
// client-cert facts, the path a runner's KUBECONFIG file takes.
func FuzzKubeconfig(f *testing.F) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	ca, err := testpki.NewCA("fuzz CA", now.Add(-time.Hour), now.Add(time.Hour))
	if err != nil {
		f.Fatal(err)
	}
	cert, key, err := ca.Client("did:plc:fuzz", nil, now.Add(-time.Hour), now.Add(time.Hour))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(testpki.Kubeconfig("c", "https://kcp.socialweb.invalid/clusters/root:k3x9q2mf:c:clusters", ca.CertPEM, cert, key))
	f.Add([]byte("apiVersion: v1\nkind: Config\ncurrent-context: x\ncontexts:\n- name: x\n  context: {cluster: y, user: z}\n"))
	f.Add([]byte("users:\n- name: u\n  user:\n    client-certificate: ../../../../etc/passwd\n"))
	f.Add([]byte("{}"))
	f.Add([]byte("\x00\xff\xfe"))
	f.Fuzz(func(t *testing.T, data []byte) {
		root := t.TempDir()
		if err := os.WriteFile(filepath.Join(root, "k.yaml"), data, 0o600); err != nil {
			t.Fatal(err)
		}
		env := &hostio.Env{Root: root, KubeconfigPath: "/k.yaml", Clock: now}
		var k *Kubeconfig
		var cc *ClientCert
		probe := &checks.Check{
			ID: "probe", Title: "t", Severity: checks.Info,
			Doc:      checks.Doc{Cause: "c", Symptom: "s", Fix: checks.Text("f"), Verify: checks.Text("v")},
			Requires: []checks.Node{KubeconfigFact, ClientCertFact},
			Run: func(p *checks.Pass) error {
				k, cc = KubeconfigFact.Get(p), ClientCertFact.Get(p)
				return nil
			},
		}
		res, err := checks.Run(context.Background(), env, []*checks.Check{probe}, checks.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if st := res.Checks[0].Status; st != checks.StatusPass {
			t.Fatalf("probe %s: %s", st, res.Checks[0].Reason) // a panic in a fact lands here
		}
		if k == nil || len(k.Files) != 1 || cc == nil {
			t.Fatalf("facts missing: %+v %+v", k, cc)
		}
	})
}
