package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/checks/client/gitlab/gitlabtest"
	"github.com/socialwebcomputer/doctor/report"
	"github.com/socialwebcomputer/doctor/testkit/fixture"
)

// The GitLab checks through the CLI, against a loopback GitLab: every
// address doctor contacts is given by flag (--resolver, --public-dns,
// --repository-url), so nothing but 127.0.0.1 is asked anything.
func TestGitLabChecksThroughTheCLI(t *testing.T) {
	const valid, removed = "glrt-valid-cli-token-0123456789", "glrt-removed-cli-token-012345678"
	gl := gitlabtest.NewGitLab(t, gitlabtest.Options{Tokens: map[string]int{valid: 200}})
	dns := gitlabtest.NewDNS(t, map[string][]string{gitlabtest.Host: {"127.0.0.1"}})
	for name, c := range map[string]struct {
		token string
		exit  int
		want  fixture.Want
	}{
		"valid": {valid, report.ExitOK, fixture.Want{Status: map[string]string{"gitlab-reachability": "pass", "runner-token": "pass"}}},
		"removed": {removed, report.ExitError, fixture.Want{Top: "runner-token", Findings: []string{"runner-token"},
			Status: map[string]string{"gitlab-reachability": "pass", "runner-token": "fail"},
			Says:   map[string][]string{"runner-token": {"the runner was removed in GitLab: re-register", "a glrt- runner authentication token"}}}},
	} {
		t.Run(name, func(t *testing.T) {
			root := gitlabtest.NewRoot(t, gitlabtest.Config(gitlabtest.Runner{Name: "kcp-tenant-kubernetes", URL: gl.URL(),
				Token: c.token, CAFile: gitlabtest.CAPath}), gl.CA)
			outputs := map[string]string{}
			bundle := filepath.Join(t.TempDir(), "b.tar.gz")
			for _, format := range []string{"json", "table", "markdown"} {
				args := []string{"run", "--root", root.Dir, "-o", format,
					"--only", "gitlab-reachability,runner-token", "--timeout", "20s",
					"--resolver", dns.Addr, "--public-dns", dns.Addr,
					"--repository-url", "https://gitlab-ci-token:glcbt-64_jobtoken0123456789@" + gitlabtest.Host + ":" + gl.Port + "/g/p.git"}
				if format == "json" {
					args = append(args, "--bundle", bundle)
				}
				code, out, stderr := runDoctor(args...)
				if code != c.exit {
					t.Errorf("-o %s: exit %d, want %d; stderr %s\n%s", format, code, c.exit, stderr, out)
				}
				outputs[format] = out
			}
			var rep report.Report
			if err := json.Unmarshal([]byte(outputs["json"]), &rep); err != nil {
				t.Fatalf("json: %v\n%s", err, outputs["json"])
			}
			want := c.want
			want.Exit = c.exit
			fixture.AssertWant(t, &rep, want)
			fixture.AssertNoSecrets(t, outputs)
			// The GitLab answers, replayed from the bundle, give the same findings.
			assertAnalyzeEqualsLive(t, &rep, bundle, root.Dir)
			for f, out := range outputs {
				if strings.Contains(out, "jobtoken") {
					t.Errorf("-o %s carries CI_REPOSITORY_URL's job token", f)
				}
			}
		})
	}
}
