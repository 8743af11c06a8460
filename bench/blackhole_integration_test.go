//go:build integration

package bench

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/checks/client/dnsq/dnsqtest"
	"github.com/socialwebcomputer/doctor/checks/client/gitlab/gitlabtest"
	"github.com/socialwebcomputer/doctor/testkit/testpki"
	"github.com/socialwebcomputer/doctor/testkit/testroot"
)

// TestBlackhole measures how long a full run takes when every remote
// endpoint is a black hole: the kubeconfig's server and GitLab accept TCP
// and never answer, and every DNS server (system, public, node-local) reads
// queries and never replies. The target: a run ends within --timeout + 10%.
func TestBlackhole(t *testing.T) {
	if os.Getenv("DOCTOR_BENCH") != "1" {
		t.Skip("a benchmark: run bench/run.sh (DOCTOR_BENCH=1)")
	}
	dir := t.TempDir()
	doctor := filepath.Join(dir, "doctor")
	if out, err := exec.Command("go", "build", "-o", doctor, "github.com/socialwebcomputer/doctor/cmd/doctor").CombinedOutput(); err != nil {
		t.Fatalf("go build doctor: %v\n%s", err, out)
	}
	// Holes: TCP listeners that accept and never write, and a DNS port
	// (UDP and TCP) that never answers.
	api, gitlab, dnsAddr := gitlabtest.Silent(t), gitlabtest.Silent(t), dnsqtest.Silent(t).Addr

	now := time.Now()
	ca, err := testpki.NewCA("tenant PKI", now.Add(-time.Hour), now.Add(48*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	cert, key, err := ca.Client(ownerDID, []string{"socialweb.computer:cluster-owners"}, now.Add(-time.Hour), now.Add(12*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	root := testroot.New(t)
	cfg := strings.Replace(testroot.GuideConfig, `url = "https://gitlab.example.invalid:8443/"`,
		fmt.Sprintf(`url = "https://gitlab.blackhole.invalid:%s/"`, portOf(gitlab)), 1)
	root.GuideRunner(cfg, testpki.Kubeconfig("tenant-ci", "https://"+api, ca.CertPEM, cert, key))
	// The GitLab name is only in DNS, whose every server is a hole.
	root.Write("/etc/hosts", "127.0.0.1 localhost\n", 0o644)

	t.Logf("%-10s %-6s %-10s %-10s %s", "--timeout", "runs", "median", "max", "max / --timeout")
	for _, timeout := range []time.Duration{3 * time.Second, 10 * time.Second, 30 * time.Second} {
		var walls []time.Duration
		var last []byte
		for i := 0; i < 3; i++ {
			cmd := exec.Command(doctor, "run", "--root", root.Dir, "-o", "json", "--timeout", timeout.String(),
				"--resolver", dnsAddr, "--public-dns", dnsAddr, "--dns-server", dnsAddr)
			start := time.Now()
			out, err := cmd.Output()
			walls = append(walls, time.Since(start))
			if _, ok := err.(*exec.ExitError); err != nil && !ok {
				t.Fatalf("doctor: %v", err)
			}
			if !strings.Contains(string(out), `"schemaVersion": 3`) {
				t.Fatalf("no report:\n%s", out)
			}
			last = out
		}
		sort.Slice(walls, func(i, j int) bool { return walls[i] < walls[j] })
		max := walls[len(walls)-1]
		ratio := float64(max) / float64(timeout)
		verdict := "met (≤ 1.10)"
		if ratio > 1.10 {
			verdict = "MISSED (> 1.10)"
		}
		t.Logf("%-10s %-6d %-10s %-10s %.3f %s", timeout, len(walls), walls[1].Round(time.Millisecond), max.Round(time.Millisecond), ratio, verdict)
		var rep struct {
			Findings []struct{ Check, Cause string }
			Checks   []struct{ ID, Status, Reason string }
		}
		if err := json.Unmarshal(last, &rep); err == nil {
			for _, f := range rep.Findings {
				t.Logf("    finding %s: %.110s", f.Check, f.Cause)
			}
			for _, c := range rep.Checks {
				if c.Status == "unknown" {
					t.Logf("    unknown %s: %.90s", c.ID, c.Reason)
				}
			}
		}
	}
}

func portOf(addr string) string {
	_, p, _ := net.SplitHostPort(addr)
	return p
}
