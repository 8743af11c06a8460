package cli

import (
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/checks/client/gitlab/gitlabtest"
	"github.com/socialwebcomputer/doctor/internal/testing/fixture"
	"github.com/socialwebcomputer/doctor/report"
)

// clock-skew through the CLI, against a loopback GitLab whose clock is
// right, and one whose Date runs two minutes ahead: the Date headers are
// those of the answers gitlab-reachability and runner-token receive.
func TestClockSkewThroughTheCLI(t *testing.T) {
	const token = "glrt-valid-clock-token-0123456789"
	for name, c := range map[string]struct {
		skew time.Duration
		want fixture.Want
	}{
		"in-step": {0, fixture.Want{Exit: report.ExitOK, Status: map[string]string{"clock-skew": "pass", "runner-token": "pass"}}},
		"gitlab-ahead": {2 * time.Minute, fixture.Want{Exit: report.ExitError, Top: "clock-skew",
			Status: map[string]string{"runner-token": "pass", "gitlab-reachability": "pass"},
			Says: map[string][]string{"clock-skew": {"This host's clock and the GitLab's at https://" + gitlabtest.Host,
				"(the server is ahead)", "s ahead, round trip", "x509: certificate has expired or is not yet valid"}}}},
	} {
		t.Run(name, func(t *testing.T) {
			gl := gitlabtest.NewGitLab(t, gitlabtest.Options{Tokens: map[string]int{token: 200}, DateSkew: c.skew})
			dns := gitlabtest.NewDNS(t, map[string][]string{gitlabtest.Host: {"127.0.0.1"}})
			root := gitlabtest.NewRoot(t, gitlabtest.Config(gitlabtest.Runner{Name: "kcp-tenant-kubernetes", URL: gl.URL(),
				Token: token, CAFile: gitlabtest.CAPath}), gl.CA)
			rep, _ := runReport(t, "run", "--root", root.Dir, "-o", "json", "--only", "clock-skew", "--timeout", "20s",
				"--resolver", dns.Addr, "--public-dns", dns.Addr)
			fixture.AssertWant(t, rep, c.want)
		})
	}
}
