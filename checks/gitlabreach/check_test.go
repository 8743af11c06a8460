package gitlabreach_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/checktest"
	"github.com/socialwebcomputer/doctor/checks/client/gitlab/gitlabtest"
	"github.com/socialwebcomputer/doctor/checks/configdecode"
	"github.com/socialwebcomputer/doctor/checks/gitlabreach"
	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/testkit/testroot"
)

// stage is the per-stage deadline of these tests: short, so a hostile
// endpoint costs a second, not the production default.
const stage = time.Second

// world is one test's loopback GitLab and the two resolvers doctor asks.
type world struct {
	gl          *gitlabtest.GitLab
	sys, public *gitlabtest.DNS
}

func newWorld(t *testing.T, o gitlabtest.Options) *world {
	loop := map[string][]string{gitlabtest.Host: {"127.0.0.1"}}
	return &world{gl: gitlabtest.NewGitLab(t, o), sys: gitlabtest.NewDNS(t, loop), public: gitlabtest.NewDNS(t, loop)}
}

// runner is the world's GitLab as config.toml names it, trusting its CA.
func (w *world) root(t *testing.T) *testroot.Root {
	return gitlabtest.NewRoot(t, gitlabtest.Config(gitlabtest.Runner{Name: "kcp-tenant-kubernetes", URL: w.gl.URL(),
		Token: "glrt-test-token-0123456789", CAFile: gitlabtest.CAPath}), w.gl.CA)
}

func (w *world) settings() map[string]string {
	return gitlabtest.Settings(w.sys.Addr, w.public.Addr, stage)
}

// reach runs gitlab-reachability through the engine.
func reach(t *testing.T, root *testroot.Root, settings map[string]string) checks.CheckResult {
	t.Helper()
	env := &hostio.Env{Root: root.Dir, Settings: settings}
	res, err := checks.Run(context.Background(), env, []*checks.Check{configdecode.Check, gitlabreach.Check},
		checks.Options{Only: []string{gitlabreach.Check.ID}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range res.Checks {
		if c.Check == gitlabreach.Check {
			return c
		}
	}
	t.Fatal("gitlab-reachability did not run")
	return checks.CheckResult{}
}

func wantSays(t *testing.T, r checks.CheckResult, status checks.Status, says ...string) {
	t.Helper()
	checktest.WantSays(t, r, status, says...)
}

func text(r checks.CheckResult) string { return checktest.Text(r) }

func TestHealthyGitLabPasses(t *testing.T) {
	w := newWorld(t, gitlabtest.Options{})
	r := reach(t, w.root(t), w.settings())
	wantSays(t, r, checks.StatusPass)
	if len(r.Findings) != 0 {
		t.Errorf("want no findings:\n%s", text(r))
	}
}

func TestVersionWithTokenlessTwoHundredPasses(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, `{"version":"19.2.7-ce.0"}`) })
	w := newWorld(t, gitlabtest.Options{Version: ok})
	wantSays(t, reach(t, w.root(t), w.settings()), checks.StatusPass)
}

func TestHostsFileComesBeforeDNS(t *testing.T) {
	w := newWorld(t, gitlabtest.Options{})
	root := w.root(t)
	root.Write("/etc/hosts", "127.0.0.1 localhost\n127.0.0.1 "+gitlabtest.Host+" # the GitLab host names itself\n", 0o644)
	empty := gitlabtest.NewDNS(t, nil)
	wantSays(t, reach(t, root, gitlabtest.Settings(empty.Addr, w.public.Addr, stage)), checks.StatusPass)
}

// Without tls-ca-file the runner trusts certs/<host>.crt beside config.toml.
func TestDefaultCertsDirectoryIsTrusted(t *testing.T) {
	w := newWorld(t, gitlabtest.Options{})
	root := gitlabtest.NewRoot(t, gitlabtest.Config(gitlabtest.Runner{Name: "r", URL: w.gl.URL(), Token: "glrt-x"}), nil)
	root.Write("/etc/gitlab-runner/certs/"+gitlabtest.Host+".crt", string(w.gl.CA.CertPEM), 0o644)
	wantSays(t, reach(t, root, w.settings()), checks.StatusPass)
}

func TestNameThatDoesNotResolve(t *testing.T) {
	w := newWorld(t, gitlabtest.Options{})
	empty := gitlabtest.NewDNS(t, nil)
	r := reach(t, w.root(t), gitlabtest.Settings(empty.Addr, w.public.Addr, stage))
	wantSays(t, r, checks.StatusFail, "the dns stage failed at "+gitlabtest.Host, "nxdomain")
	wantNoDisabling(t, r)
}

// Neither a request with no answer (network/client.go doJSON, v19.3.0:
// status -1) nor an answer from something that is not GitLab (a 502) marks
// the runner unhealthy: network/gitlab.go RequestJob logs "Checking for
// jobs... failed" and keeps the runner healthy. No finding may tell the
// operator to restart it for that.
func TestFailuresDoNotDisableTheRunner(t *testing.T) {
	notGitLab := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusBadGateway) })
	w := newWorld(t, gitlabtest.Options{Version: notGitLab})
	r := reach(t, w.root(t), w.settings())
	if len(r.Findings) == 0 {
		t.Fatalf("a 502 on /api/v4/version is no finding:\n%s", text(r))
	}
	wantNoDisabling(t, r)

	closed := newWorld(t, gitlabtest.Options{})
	settings := closed.settings()
	closed.gl.Close() // nothing answers: the tcp stage fails
	r = reach(t, closed.root(t), settings)
	wantSays(t, r, checks.StatusFail, "the tcp stage failed", "connection refused")
	wantNoDisabling(t, r)
}

func wantNoDisabling(t *testing.T, r checks.CheckResult) {
	t.Helper()
	for _, f := range r.Findings {
		if strings.Contains(f.Fix.String(), "unhealthy") || strings.Contains(f.Fix.String(), "disabled for") {
			t.Errorf("%q says the runner disables itself: %s", f.Cause, f.Fix)
		}
	}
}

func TestCertificateProblemsNameTheTLSStage(t *testing.T) {
	now := time.Now()
	for name, c := range map[string]struct {
		o      gitlabtest.Options
		noCA   bool
		status checks.Status
		says   []string
	}{
		"expired":       {o: gitlabtest.Options{NotBefore: now.Add(-48 * time.Hour), NotAfter: now.Add(-time.Hour)}, status: checks.StatusFail, says: []string{"the tls stage failed at 127.0.0.1:", "certificate has expired", "Renew"}},
		"soon":          {o: gitlabtest.Options{NotAfter: now.Add(3 * 24 * time.Hour)}, status: checks.StatusFail, says: []string{"[warning]", "expires in", "stage warns at"}},
		"other name":    {o: gitlabtest.Options{Names: []string{"other.example.invalid"}}, status: checks.StatusFail, says: []string{"hostname:", "reissue the certificate"}},
		"untrusted CA":  {noCA: true, status: checks.StatusFail, says: []string{"chain:", "unknown authority", "tls-ca-file"}},
		"trusted by CA": {o: gitlabtest.Options{}, status: checks.StatusPass},
	} {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t, c.o)
			root := w.root(t)
			if c.noCA {
				root = gitlabtest.NewRoot(t, gitlabtest.Config(gitlabtest.Runner{Name: "r", URL: w.gl.URL(), Token: "glrt-x"}), nil)
			}
			wantSays(t, reach(t, root, w.settings()), c.status, c.says...)
		})
	}
}

func TestHTTPAnswersThatAreNotGitLab(t *testing.T) {
	for name, c := range map[string]struct {
		h    http.HandlerFunc
		says string
	}{
		"502":      {func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(502) }, "502 Bad Gateway: GitLab is down"},
		"redirect": {func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "https://elsewhere.invalid/", 301) }, "Location: https://elsewhere.invalid/"},
		"html 200": {func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "<html>portal</html>") }, "not GitLab's version document"},
	} {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t, gitlabtest.Options{Version: c.h})
			wantSays(t, reach(t, w.root(t), w.settings()), checks.StatusFail, "the http stage failed", c.says)
		})
	}
}

func TestRepositoryURLHostIsProbedAndItsTokenNeverShown(t *testing.T) {
	w := newWorld(t, gitlabtest.Options{})
	const jobToken = "glcbt-64_secretjobtoken0123456789"
	s := w.settings()
	s["repository-url"] = "https://gitlab-ci-token:" + jobToken + "@clone.example.invalid/group/project.git"
	r := reach(t, w.root(t), s)
	wantSays(t, r, checks.StatusFail, "CI_REPOSITORY_URL (https://clone.example.invalid:443)", "the dns stage failed at clone.example.invalid")
	if strings.Contains(text(r), "secretjobtoken") || strings.Contains(text(r), "gitlab-ci-token") {
		t.Errorf("the job token leaked:\n%s", text(r))
	}

	// The same origin as the runner's url is one target, probed once.
	s["repository-url"] = "https://gitlab-ci-token:" + jobToken + "@" + gitlabtest.Host + ":" + w.gl.Port + "/group/project.git"
	wantSays(t, reach(t, w.root(t), s), checks.StatusPass)
}

func TestNoResolverIsUnknownNotAFinding(t *testing.T) {
	w := newWorld(t, gitlabtest.Options{})
	s := w.settings()
	delete(s, "resolver") // and the root has no /etc/resolv.conf
	r := reach(t, w.root(t), s)
	wantSays(t, r, checks.StatusUnknown, "no resolver", "/etc/resolv.conf")
}

func TestOfflineSkips(t *testing.T) {
	w := newWorld(t, gitlabtest.Options{})
	env := &hostio.Env{Root: w.root(t).Dir, Settings: w.settings(), Offline: true}
	res, err := checks.Run(context.Background(), env, []*checks.Check{configdecode.Check, gitlabreach.Check}, checks.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r := res.Checks[1]; r.Status != checks.StatusSkipped || r.Reason != "offline" {
		t.Errorf("under --offline: %s %q", r.Status, r.Reason)
	}
}

// A url the runner builds no client for (no http or https scheme) is its
// clientError: "Checking for jobs... client error", which marks it
// unhealthy (network/gitlab.go RequestJob, v19.3.0), so the finding says
// to restart it after the fix. A url with no host builds a client whose
// requests fail to dial: healthy, no restart.
func TestURLTheRunnerCannotUse(t *testing.T) {
	w := newWorld(t, gitlabtest.Options{})
	root := gitlabtest.NewRoot(t, gitlabtest.Config(
		gitlabtest.Runner{Name: "no-scheme", URL: "gitlab.example.invalid:8443", Token: "glrt-test-token-0123456789"},
		gitlabtest.Runner{Name: "no-host", URL: "https:///", Token: "glrt-test-token-0123456789"},
	), w.gl.CA)
	r := reach(t, root, w.settings())
	wantSays(t, r, checks.StatusFail, `"no-scheme" url is not an http or https URL`, `"no-host" url has no host`)
	for _, f := range r.Findings {
		disables := strings.Contains(f.Fix.String(), "is unhealthy and will be disabled for 1h0m0s seconds!")
		if strings.Contains(f.Cause, "no-scheme") != disables {
			t.Errorf("%q: restart note %v, want it only for the url no client is built for:\n%s", f.Cause, disables, f.Fix)
		}
	}
}
