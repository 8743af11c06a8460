package runnertoken_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/checktest"
	"github.com/socialwebcomputer/doctor/checks/client/gitlab/gitlabtest"
	"github.com/socialwebcomputer/doctor/checks/configdecode"
	"github.com/socialwebcomputer/doctor/checks/gitlabreach"
	"github.com/socialwebcomputer/doctor/checks/runnertoken"
	"github.com/socialwebcomputer/doctor/internal/hostio"
)

const stage = time.Second

const (
	good    = "glrt-good-token-0123456789abcdef"
	removed = "glrt-removed-token-0123456789ab"
	orphan  = "glrt-orphan-token-0123456789abc"
	legacy  = "legacysecret0123456789" // no prefix: the redaction net cannot catch it, so the check must not emit it
)

// secretShapes is cmd/doctor/cli's AssertNoSecrets pattern, plus the tokens
// of this test verbatim.
var secretShapes = regexp.MustCompile(`-----BEGIN|glrt-[A-Za-z0-9_-]{6,}|(?i)bearer [A-Za-z0-9._-]{10,}|[A-Za-z0-9+/]{80,}|` + legacy)

type result struct {
	token, reach checks.CheckResult
	gl           *gitlabtest.GitLab
}

// verify runs runner-token (and what it requires) through the engine for
// one [[runners]] per token.
func verify(t *testing.T, o gitlabtest.Options, tokens ...string) result {
	t.Helper()
	if o.Tokens == nil {
		o.Tokens = map[string]int{good: 200, orphan: 422, legacy: 200}
	}
	gl := gitlabtest.NewGitLab(t, o)
	return verifyAt(t, gl, gl.URL(), tokens...)
}

func verifyAt(t *testing.T, gl *gitlabtest.GitLab, url string, tokens ...string) result {
	t.Helper()
	var rs []gitlabtest.Runner
	for i, tok := range tokens {
		rs = append(rs, gitlabtest.Runner{Name: fmt.Sprintf("runner-%d", i+1), URL: url, Token: tok, CAFile: gitlabtest.CAPath})
	}
	root := gitlabtest.NewRoot(t, gitlabtest.Config(rs...), gl.CA)
	loop := gitlabtest.NewDNS(t, map[string][]string{gitlabtest.Host: {"127.0.0.1"}})
	env := &hostio.Env{Root: root.Dir, Settings: gitlabtest.Settings(loop.Addr, loop.Addr, stage)}
	res, err := checks.Run(context.Background(), env,
		[]*checks.Check{configdecode.Check, gitlabreach.Check, runnertoken.Check}, checks.Options{Only: []string{runnertoken.Check.ID}})
	if err != nil {
		t.Fatal(err)
	}
	out := result{gl: gl}
	for _, c := range res.Checks {
		switch c.Check {
		case runnertoken.Check:
			out.token = merge(out.token, c)
		case gitlabreach.Check:
			out.reach = c
		}
	}
	if m := secretShapes.FindString(text(out.token) + text(out.reach)); m != "" {
		t.Errorf("a token reached the output: %.12q…", m)
	}
	return out
}

// merge folds the per-runner results of runner-token into one: every
// finding, and the status that matters most (fail, unknown, skipped, pass).
func merge(a, b checks.CheckResult) checks.CheckResult {
	if a.Check == nil {
		return b
	}
	rank := map[checks.Status]int{checks.StatusPass: 0, checks.StatusSkipped: 1, checks.StatusUnknown: 2, checks.StatusFail: 3}
	if rank[b.Status] > rank[a.Status] {
		a.Status = b.Status
	}
	if b.Reason != "" {
		a.Reason = strings.TrimPrefix(a.Reason+"; "+b.Reason, "; ")
	}
	a.Findings = append(a.Findings, b.Findings...)
	return a
}

func wantSays(t *testing.T, r checks.CheckResult, status checks.Status, says ...string) {
	t.Helper()
	checktest.WantSays(t, r, status, says...)
}

func text(r checks.CheckResult) string { return checktest.Text(r) }

func TestValidTokenPassesWithTheRunnersOwnCall(t *testing.T) {
	r := verify(t, gitlabtest.Options{}, good)
	wantSays(t, r.token, checks.StatusPass)
	v := r.gl.Verifies()
	if len(v) != 1 || v[0].HeaderToken != good || v[0].BodyToken != good {
		t.Fatalf("GitLab saw %d verify calls, want one carrying the token in RUNNER-TOKEN and the JSON body", len(v))
	}
	if v[0].SystemID {
		t.Error("doctor sent a system_id: GitLab would record a runner manager for it")
	}
}

func TestForbiddenOrphanedAndLegacy(t *testing.T) {
	r := verify(t, gitlabtest.Options{}, good, removed, orphan, legacy)
	wantSays(t, r.token, checks.StatusFail,
		`[[runners]] #2 "runner-2": GitLab answers 403 to a glrt- runner authentication token: the token is invalid or the runner was removed in GitLab: re-register`,
		`[[runners]] #3 "runner-3": GitLab answers 422`, "orphaned", "system_id",
		// A 403 marks the runner unhealthy (commands/health_helper.go, v19.3.0).
		"After 3 failed job requests in a row (unhealthy_requests_limit)", "is unhealthy and will be disabled for 1h0m0s seconds!",
		"after the fix, restart the runner.\nsudo systemctl restart gitlab-runner.service")
	for _, f := range r.token.Findings {
		if strings.Contains(f.Cause, "422") && strings.Contains(f.Fix.String(), "unhealthy") {
			t.Errorf("the 422 finding says the runner disables itself; only a 403 (or a url no client can be built for) does: %s", f.Fix)
		}
	}
	if n := len(r.token.Findings); n != 2 {
		t.Errorf("%d findings, want 2 (403 and 422):\n%s", n, text(r.token))
	}
	for i, f := range r.token.Findings {
		if want := i + 2; f.Runner == nil || f.Runner.Index != want || f.Runner.Name != fmt.Sprintf("runner-%d", want) {
			t.Errorf("finding %d names runner %+v, want #%d", i, f.Runner, want)
		}
	}

	r = verify(t, gitlabtest.Options{Tokens: map[string]int{}}, legacy)
	wantSays(t, r.token, checks.StatusFail, "403 to a legacy token")
}

func TestAnyOtherAnswerIsUnknown(t *testing.T) {
	r := verify(t, gitlabtest.Options{Tokens: map[string]int{good: 500}}, good)
	wantSays(t, r.token, checks.StatusUnknown, "500 Internal Server Error, which says nothing about the token")
}

func TestUnreachableGitLabCannotJudgeAToken(t *testing.T) {
	gl := gitlabtest.NewGitLab(t, gitlabtest.Options{})
	_, port, _ := net.SplitHostPort(gitlabtest.Silent(t))
	r := verifyAt(t, gl, "https://"+gitlabtest.Host+":"+port+"/", good)
	wantSays(t, r.token, checks.StatusSkipped, "needs gitlab-reachability")
	if len(gl.Verifies()) != 0 {
		t.Error("the token was sent although GitLab did not answer")
	}
}

// A verify that never answers is unknown within the HTTP stage's deadline;
// a 200 with a 1 GiB body is judged by its status, and the body (which
// echoes the token in GitLab's real answer) is never read.
func TestHostileVerifyAnswers(t *testing.T) {
	hang := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// With the body read, the server notices the client leave and ends r's context.
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	})
	start := time.Now()
	r := verify(t, gitlabtest.Options{Verify: hang}, good)
	took := time.Since(start)
	t.Logf("silent verify: %s", took.Round(time.Millisecond))
	wantSays(t, r.token, checks.StatusUnknown, "no answer within 1s")
	if took > 4*stage {
		t.Errorf("took %s", took)
	}

	body := &gitlabtest.Endless{Size: 1 << 30}
	start = time.Now()
	r = verify(t, gitlabtest.Options{Verify: body}, good)
	t.Logf("1 GiB verify body: %s, server wrote %d KiB", time.Since(start).Round(time.Millisecond), body.Written.Load()>>10)
	wantSays(t, r.token, checks.StatusPass)
	if n := body.Written.Load(); n > 64<<20 {
		t.Errorf("the server wrote %d MiB: the client read the body", n>>20)
	}
}

func TestKindNeverShowsTheToken(t *testing.T) {
	for tok, want := range map[string]string{good: "a glrt- runner authentication token", legacy: "a legacy token", "": "a legacy token"} {
		if got := runnertoken.Kind(tok); got != want || (tok != "" && strings.Contains(got, tok)) {
			t.Errorf("Kind(%.5q…) = %q, want %q", tok, got, want)
		}
	}
}

func TestPatternsMatchTheUnhealthyLine(t *testing.T) {
	// commands/health_helper.go markHealth, v19.3.0, with the default unhealthy_interval.
	line := `ERROR: Runner "https://gitlab.example.invalid/t1_abc12" is unhealthy and will be disabled for 1h0m0s seconds!  runner=t1_abc12 unhealthy_requests=3 unhealthy_requests_limit=3`
	if !checktest.Matches(runnertoken.Check.Doc, line) {
		t.Errorf("no pattern matches %q", line)
	}
	if checktest.Matches(runnertoken.Check.Doc, "Checking for jobs... received                       job=42 repo_url=https://gitlab.example.invalid/g/p.git") {
		t.Error("a pattern matches a job received")
	}
}
