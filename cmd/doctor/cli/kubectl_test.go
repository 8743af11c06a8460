package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/all"
	"github.com/socialwebcomputer/doctor/checks/client/gitlab/gitlabtest"
	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/report"
	"github.com/socialwebcomputer/doctor/testkit/cmdtest"
)

// parseRun parses doctor run's flags as Main would and returns them.
func parseRun(t *testing.T, args ...string) *runFlags {
	t.Helper()
	a := &app{io: IO{Out: &bytes.Buffer{}, Err: &bytes.Buffer{}, Getenv: func(string) string { return "" }}}
	cmd, f := a.newRunCommand()
	cmdtest.NoErr(t, cmd.ParseFlags(args))
	return f
}

// --context, -n/--namespace and --request-timeout reach the checks through
// Env; -v and --debug set its logger.
func TestKubectlFlagsReachTheEnv(t *testing.T) {
	a := &app{io: IO{Err: &bytes.Buffer{}, Getenv: func(string) string { return "" }}}
	for _, tc := range []struct {
		args    []string
		context string
		ns      string
		timeout time.Duration
		log     bool
	}{
		{[]string{}, "", "", hostio.APICallTimeout, false},
		{[]string{"--context", "tenant-b", "-n", "ci", "--request-timeout", "5s"}, "tenant-b", "ci", 5 * time.Second, false},
		{[]string{"--namespace=ci", "--request-timeout", "3"}, "", "ci", 3 * time.Second, false},
		{[]string{"--request-timeout", "0"}, "", "", hostio.APICallTimeout, false},
		{[]string{"-v", "2"}, "", "", hostio.APICallTimeout, true},
		{[]string{"--v=6"}, "", "", hostio.APICallTimeout, true},
		{[]string{"--debug"}, "", "", hostio.APICallTimeout, true},
	} {
		f := parseRun(t, tc.args...)
		env, err := a.buildEnv(f, "/")
		cmdtest.NoErr(t, err)
		if env.ContextOverride != tc.context || env.NamespaceOverride != tc.ns || env.APITimeout() != tc.timeout || (env.Log != nil) != tc.log {
			t.Errorf("%q: context %q namespace %q timeout %s log %v", tc.args, env.ContextOverride, env.NamespaceOverride, env.APITimeout(), env.Log != nil)
		}
	}
}

// --kubeconfig, --context and --namespace say in the report that they
// replaced the runner's own.
func TestOverridesAreReported(t *testing.T) {
	root := cmdtest.FixtureRoot(t, "healthy")
	kc := "/etc/gitlab-runner/tenant-ci/kubeconfig.yaml"
	args := []string{"run", "--root", root, "--offline", "--now", "2026-11-29T12:00:00Z", "--kubeconfig", kc, "--context", "tenant-ci", "-n", "ci"}
	rep, _ := jsonRun(t, args...)
	want := map[string]string{"--kubeconfig": kc, "--context": "tenant-ci", "--namespace": "ci"}
	if len(rep.Overrides) != len(want) {
		t.Fatalf("overrides %+v", rep.Overrides)
	}
	for _, o := range rep.Overrides {
		if want[o.Flag] != o.Value || o.Replaces == "" {
			t.Errorf("override %+v", o)
		}
	}
	_, table, _ := runDoctor(args...)
	for _, w := range []string{"--kubeconfig " + kc + ": used instead of the kubeconfig the runner loads", "--context tenant-ci: used instead of"} {
		if !strings.Contains(strings.Join(strings.Fields(table), " "), w) {
			t.Errorf("table does not say %q:\n%s", w, table)
		}
	}
	plain, _ := jsonRun(t, "run", "--root", root, "--offline", "--now", "2026-11-29T12:00:00Z")
	if len(plain.Overrides) != 0 {
		t.Errorf("overrides without the flags: %+v", plain.Overrides)
	}
}

// -v=2 logs every dial to stderr, redacted; without -v nothing is logged.
func TestVerbosityLogsDials(t *testing.T) {
	const token = "glrt-valid-cli-token-0123456789"
	gl := gitlabtest.NewGitLab(t, gitlabtest.Options{Tokens: map[string]int{token: 200}})
	dns := gitlabtest.NewDNS(t, map[string][]string{gitlabtest.Host: {"127.0.0.1"}})
	root := gitlabtest.NewRoot(t, gitlabtest.Config(gitlabtest.Runner{Name: "r", URL: gl.URL(), Token: token, CAFile: gitlabtest.CAPath}), gl.CA)
	args := []string{"run", "--root", root.Dir, "-o", "json", "--only", "gitlab-reachability,runner-token", "--timeout", "20s",
		"--resolver", dns.Addr, "--public-dns", dns.Addr,
		"--repository-url", "https://gitlab-ci-token:glcbt-64_jobtoken0123456789@" + gitlabtest.Host + ":" + gl.Port + "/g/p.git"}
	code, _, quiet := runDoctor(args...)
	if code != report.ExitOK || strings.Contains(quiet, "doctor[v") {
		t.Fatalf("without -v: exit %d, stderr %q", code, quiet)
	}
	for _, v := range []string{"-v=2", "--debug"} {
		_, _, logged := runDoctor(append(args, v)...)
		for _, want := range []string{"doctor[v2]: dial udp " + dns.Addr, "doctor[v2]: dial tcp 127.0.0.1:" + gl.Port + ": connected"} {
			if !strings.Contains(logged, want) {
				t.Errorf("%s: stderr does not say %q:\n%s", v, want, logged)
			}
		}
		for _, secret := range []string{token, "jobtoken"} {
			if strings.Contains(logged, secret) {
				t.Errorf("%s: stderr carries %q", v, secret)
			}
		}
	}
	_, _, low := runDoctor(append(args, "-v=1")...)
	if strings.Contains(low, "dial") {
		t.Errorf("-v=1 logs dials (level 2):\n%s", low)
	}
}

func TestLoggerRedacts(t *testing.T) {
	var b bytes.Buffer
	log := newLogger(&b, 6)
	log(6, "GET %s", "https://user:hunter2@gitlab.example.invalid/api/v4/jobs")
	log(6, "Authorization: Bearer %s", "abcdefghijklmnopqrstuvwxyz")
	log(8, "not at level 6")
	out := b.String()
	for _, secret := range []string{"hunter2", "abcdefghijklmnop", "not at level 6"} {
		if strings.Contains(out, secret) {
			t.Errorf("logged %q:\n%s", secret, out)
		}
	}
	if !strings.Contains(out, "doctor[v6]: GET https://<redacted>@gitlab.example.invalid/api/v4/jobs") {
		t.Errorf("log:\n%s", out)
	}
	if newLogger(&b, 0) != nil {
		t.Error("a logger at level 0")
	}
}

// doctor checks -o json|yaml is the catalog as data: every check with its
// requires and explains as the checks declare them.
func TestChecksAsData(t *testing.T) {
	code, js, _ := runDoctor("checks", "-o", "json")
	var entries []CatalogEntry
	if err := json.Unmarshal([]byte(js), &entries); code != 0 || err != nil {
		t.Fatalf("exit %d: %v\n%s", code, err, js)
	}
	byID := map[string]CatalogEntry{}
	for _, e := range entries {
		byID[e.ID] = e
	}
	for _, c := range all.Checks() {
		e, ok := byID[c.ID]
		if !ok {
			t.Errorf("%s is missing", c.ID)
			continue
		}
		var req []string
		for _, r := range checks.RequiredChecks(all.Checks(), c) {
			req = append(req, r.ID)
		}
		if strings.Join(e.Requires, ",") != strings.Join(req, ",") || strings.Join(e.Explains, ",") != strings.Join(c.Explains, ",") ||
			e.Severity != c.Severity.String() || strings.Join(e.Executors, ",") != c.ExecutorList() || e.Title != c.Title {
			t.Errorf("%s: %+v", c.ID, e)
		}
	}
	code, ym, _ := runDoctor("checks", "-o", "yaml")
	if code != 0 || !strings.Contains(ym, "- docs: README.md#api-auth") || !strings.Contains(ym, "requires:") {
		t.Errorf("checks -o yaml: exit %d\n%s", code, ym)
	}
}
