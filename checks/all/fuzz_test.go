package all

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/testkit/testpki"
	"github.com/socialwebcomputer/doctor/testkit/testroot"
)

// FuzzConfigTOML runs the whole catalog, offline, on a host whose runner
// reads an arbitrary config.toml: every check that parses, locates or
// lints the file meets it. No check panics (a panic is reported unknown
// with "panic:"), the run ends well before its deadline, and every finding
// has a cause, and cause and evidence stay bounded.
func FuzzConfigTOML(f *testing.F) {
	// A whole run per input is slow to fuzz: a few seeds here, the hostile
	// shapes in testdata/fuzz/FuzzConfigTOML (the fixtures' configs are
	// the scenario tests' job).
	f.Add([]byte(testroot.GuideConfig))
	f.Add([]byte("[[runners]]\nexecutor = \"kubernetes\"\n[runners.kubernetes]\nhost = \"https://u:p@127.0.0.1:1\"\n[[runners.kubernetes.volumes.nfs]]\n"))
	f.Add([]byte("concurrent = \"2\"\n[[runners]]\n  url = \"::\"\n  environment = [\"A=\", \"=\", \"KUBECONFIG\"]\n"))
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	ca, err := testpki.NewCA("fuzz CA", now.Add(-time.Hour), now.Add(time.Hour))
	if err != nil {
		f.Fatal(err)
	}
	cert, key, err := ca.Client("did:plc:fuzz", nil, now.Add(-time.Hour), now.Add(time.Hour))
	if err != nil {
		f.Fatal(err)
	}
	kc := testpki.Kubeconfig("c", "https://127.0.0.1:1/clusters/root:fuzz", ca.CertPEM, cert, key)
	catalog := Checks()
	f.Fuzz(func(t *testing.T, config []byte) {
		root := testroot.New(t)
		root.GuideRunner(string(config), kc)
		env := &hostio.Env{Root: root.Dir, Offline: true, Clock: now}
		start := time.Now()
		res, err := checks.Run(context.Background(), env, catalog, checks.Options{Timeout: 20 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if took := time.Since(start); took > 10*time.Second || res.DeadlineHit {
			t.Fatalf("an offline run took %s (deadline hit: %v)", took, res.DeadlineHit)
		}
		for _, c := range res.Checks {
			if strings.Contains(c.Reason, "panic:") {
				t.Fatalf("%s: %s", c.Check.ID, c.Reason)
			}
			for _, fd := range c.Findings {
				if fd.Cause == "" || len(fd.Cause) > 8<<10+len(config) {
					t.Fatalf("%s: cause %.300q", c.Check.ID, fd.Cause)
				}
				for _, ev := range fd.Evidence {
					if len(ev.Detail) > 64<<10+len(config) {
						t.Fatalf("%s: evidence of %d bytes from a %d-byte config", c.Check.ID, len(ev.Detail), len(config))
					}
				}
			}
		}
	})
}
