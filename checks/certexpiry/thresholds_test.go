package certexpiry_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/all"
	"github.com/socialwebcomputer/doctor/checks/certexpiry"
	"github.com/socialwebcomputer/doctor/checks/facts/kubefacts"
	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/testkit/testpki"
)

var now = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// severities runs the check on a certificate valid from now+nb to now+na.
func severities(t *testing.T, nb, na time.Duration, groups ...string) []checks.Severity {
	t.Helper()
	ca, err := testpki.NewCA("ca", now.Add(-1000*time.Hour), now.Add(1000*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	cert, key, err := ca.Client("did:plc:x", groups, now.Add(nb), now.Add(na))
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	kc := testpki.Kubeconfig("c", "https://kcp.socialweb.invalid/clusters/root:k3x9q2mf:c:clusters", ca.CertPEM, cert, key)
	if err := os.WriteFile(filepath.Join(root, "k.yaml"), kc, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(root, 0o700); err != nil {
		t.Fatal(err)
	}
	env := &hostio.Env{Root: root, Clock: now, KubeconfigPath: "/k.yaml"}
	res, err := checks.Run(context.Background(), env, all.Checks(), checks.Options{Only: []string{"cert-expiry"}})
	if err != nil {
		t.Fatal(err)
	}
	var out []checks.Severity
	for _, cr := range res.Checks {
		if cr.Check == certexpiry.Check {
			if cr.Status == checks.StatusUnknown || cr.Status == checks.StatusSkipped {
				t.Fatalf("cert-expiry %s: %s", cr.Status, cr.Reason)
			}
			for _, f := range cr.Findings {
				out = append(out, f.Severity)
			}
		}
	}
	return out
}

func TestThresholds(t *testing.T) {
	const owners = kubefacts.OwnersGroup
	h := time.Hour
	for _, tc := range []struct {
		name   string
		nb, na time.Duration
		want   []checks.Severity
	}{
		{"12h, fresh", -h, 11 * h, nil},
		{"exactly an hour left is fine", -23 * h, h, nil},
		{"59 minutes left warns", -23 * h, 59 * time.Minute, []checks.Severity{checks.Warning}},
		{"expired a second ago", -24 * h, -time.Second, []checks.Severity{checks.Critical}},
		{"not yet valid", time.Minute, 12 * h, []checks.Severity{checks.Critical}},
		{"exactly 24h is the gateway's maximum", -h, 23 * h, nil},
		{"longer than 24h is a note", -h, 23*h + time.Minute, []checks.Severity{checks.Info}},
		{"expired and long-lived", -100 * h, -h, []checks.Severity{checks.Critical, checks.Info}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := severities(t, tc.nb, tc.na, owners); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("severities %v, want %v", got, tc.want)
			}
		})
	}
	if got := severities(t, -h, 11*h, "system:masters"); !reflect.DeepEqual(got, []checks.Severity{checks.Info}) {
		t.Errorf("a non-owner certificate: %v, want one note", got)
	}
}
