package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/checks/client/gitlab/gitlabtest"
	"github.com/socialwebcomputer/doctor/cmd/doctor/cli"
	"github.com/socialwebcomputer/doctor/report"
	"github.com/socialwebcomputer/doctor/testkit/cmdtest"
	"github.com/socialwebcomputer/doctor/testkit/fixture"
)

// The tokens of these tests: a user's access token (PRIVATE-TOKEN), an
// OAuth token (Bearer), a guest's, and the runner's own.
const (
	jobReaderToken = "glpat-jobreader0123456789ab"
	oauthToken     = "4f9c0aa1e2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f7081920304050"
	guestToken     = "glpat-guestonly0123456789ab"
	jobRunnerToken = "glrt-job-runner-token-0123456789"
)

// namespaceLine is the job log's last line when the runner's namespace is
// missing (checks/namespace's symptom).
const namespaceLine = `ERROR: Job failed (system failure): prepare environment: setting up build pod: namespaces "gitlab-runner" not found. Check https://docs.gitlab.com/runner/shells/#shell-profile-loading for more information`

// jobWorld is a GitLab stand-in with jobs, a resolver that sends its name
// to loopback, and a host whose one runner (GitLab's runner 7) talks to it.
type jobWorld struct {
	gl   *gitlabtest.GitLab
	dns  *gitlabtest.DNS
	root string
}

func newJobWorld(t *testing.T) *jobWorld {
	t.Helper()
	gl := gitlabtest.NewGitLab(t, gitlabtest.Options{
		Tokens:    map[string]int{jobRunnerToken: 200},
		RunnerIDs: map[string]int64{jobRunnerToken: 7},
		Users:     map[string]gitlabtest.Access{jobReaderToken: gitlabtest.Reader, oauthToken: gitlabtest.Reader, guestToken: gitlabtest.Guest},
	})
	failed := "Running with gitlab-runner 19.3.0 (9cbf0074)\n  on kcp-tenant-kubernetes t1_abc12, system ID: s_0123456789ab\n" +
		"Preparing the \"kubernetes\" executor\nUsing Kubernetes namespace: gitlab-runner\n" + namespaceLine + "\n"
	for _, j := range []gitlabtest.Job{
		{ID: 42, Name: "rspec", Stage: "test", Status: "failed", FailureReason: "runner_system_failure", Trace: failed},
		{ID: 43, Name: "build", Stage: "build", Status: "running", Trace: "Running with gitlab-runner 19.3.0\n"},
		{ID: 44, Name: "lint", Stage: "test", Status: "failed", FailureReason: "script_failure", RunnerID: 99,
			RunnerDescription: "another-host", Trace: "ERROR: Job failed: exit code 1\n"},
		{ID: 46, Name: "unit", Stage: "test", Status: "failed", FailureReason: "script_failure",
			Trace: "$ make test\nFAIL\nERROR: Job failed: exit code 2\n"},
	} {
		j.ProjectID, j.ProjectPath = 12, "group/sub/project"
		if j.RunnerID == 0 {
			j.RunnerID, j.RunnerDescription = 7, "kcp-tenant-kubernetes"
		}
		j.ManagerSystemID, j.ManagerVersion = "s_0123456789ab", "19.3.0"
		gl.AddJob(j)
	}
	dns := gitlabtest.NewDNS(t, map[string][]string{gitlabtest.Host: {"127.0.0.1"}})
	root := gitlabtest.NewRoot(t, gitlabtest.Config(gitlabtest.Runner{Name: "kcp-tenant-kubernetes", URL: gl.URL(), Token: jobRunnerToken,
		CAFile: gitlabtest.CAPath}), gl.CA)
	return &jobWorld{gl: gl, dns: dns, root: root.Dir}
}

func (w *jobWorld) url(id int64) string {
	return fmt.Sprintf("https://%s:%s/group/sub/project/-/jobs/%d", gitlabtest.Host, w.gl.Port, id)
}

// tokenEnv is the variable doctor job reads its GitLab token from, as its
// help and docs/usage.md name it to the operator.
const tokenEnv = "GITLAB_TOKEN"

// run is doctor job with the world's flags, token given in GITLAB_TOKEN.
func (w *jobWorld) run(token string, args ...string) (int, string, string) {
	full := append([]string{"job"}, args...)
	full = append(full, "--root", w.root, "--resolver", w.dns.Addr, "--public-dns", w.dns.Addr, "--timeout", "20s")
	var out, errb bytes.Buffer
	code := cli.Main(full, cli.IO{Out: &out, Err: &errb, Getenv: func(k string) string {
		if k == tokenEnv {
			return token
		}
		return ""
	}})
	return code, out.String(), errb.String()
}

func noToken(t *testing.T, outputs ...string) {
	t.Helper()
	for _, o := range outputs {
		for _, tok := range []string{jobReaderToken, oauthToken, guestToken, jobRunnerToken, "jobreader0123", "4f9c0aa1e2b3"} {
			if strings.Contains(o, tok) {
				t.Errorf("the output holds a token (%.8s…):\n%s", tok, o)
			}
		}
	}
	fixture.AssertNoSecrets(t, map[string]string{"out": strings.Join(outputs, "\n")})
}

// TestJobNamesTheRunnerEntryAndTheCheck is the case: a job failed
// with a missing namespace. doctor job names the [[runners]] entry it ran
// on (by the runner id runners/verify gives its token), the job's status
// and failure_reason, the line of its log and the namespace check, runs
// that check for that runner, and never prints the token; every format
// exits alike.
func TestJobNamesTheRunnerEntryAndTheCheck(t *testing.T) {
	w := newJobWorld(t)
	outputs := map[string]string{}
	codes := map[string]int{}
	for _, format := range []string{"table", "json", "markdown"} {
		code, out, stderr := w.run(jobReaderToken, w.url(42), "-o", format)
		outputs[format], codes[format] = out, code
		noToken(t, out, stderr)
	}
	if codes["table"] != codes["json"] || codes["json"] != codes["markdown"] {
		t.Errorf("exit codes differ by format: %v", codes)
	}
	table := strings.Join(strings.Fields(outputs["table"]), " ")
	for _, want := range []string{
		`Job 42 "rspec" (stage test) of group/sub/project: failed, failure_reason runner_system_failure.`,
		`It ran on GitLab's runner #7 "kcp-tenant-kubernetes" (runner manager s_0123456789ab, gitlab-runner 19.3.0): [[runners]] #1`,
		`GitLab's runner id 7 is this entry's token (POST /api/v4/runners/verify)`,
		"the log of job 42: 1 of its 5 lines names a check.",
		`namespaces "gitlab-runner" not found.`, "→ namespace: The runner namespace exists",
		`Running namespace, and what it requires, for [[runners]] #1 "kcp-tenant-kubernetes" on this host:`,
	} {
		if !strings.Contains(table, want) {
			t.Errorf("the table lacks %q:\n%s", want, table)
		}
	}
	var rep report.Report
	if err := json.Unmarshal([]byte(outputs["json"]), &rep); err != nil {
		t.Fatalf("json: %v\n%s", err, outputs["json"])
	}
	j := rep.Job
	if j == nil || j.ID != 42 || j.Status != "failed" || j.FailureReason != "runner_system_failure" || j.Project != "group/sub/project" ||
		j.Entry == nil || j.Entry.Index != 1 || j.Runner == nil || j.Runner.ID != 7 {
		t.Fatalf("the report's job: %+v", j)
	}
	if len(rep.Matches) != 1 || rep.Matches[0].Check != "namespace" {
		t.Errorf("matches %+v, want the namespace line", rep.Matches)
	}
	ran := false
	for _, c := range rep.Checks {
		if c.ID == "namespace" {
			ran = true
			if c.Runner == nil || c.Runner.Index != 1 {
				t.Errorf("namespace ran for %v, want [[runners]] #1", c.Runner)
			}
		}
	}
	if !ran {
		t.Errorf("namespace is not among the checks: %+v", rep.Checks)
	}
	if !strings.Contains(outputs["markdown"], "`failure_reason` `runner_system_failure`") {
		t.Errorf("the markdown lacks the failure_reason:\n%s", outputs["markdown"])
	}
	// The token went to the Jobs API only, as PRIVATE-TOKEN, and the
	// project's path URL-encoded.
	for _, r := range w.gl.JobRequests() {
		if r.Auth != "PRIVATE-TOKEN" || r.Token != jobReaderToken {
			t.Errorf("request %s carried %q auth", r.Path, r.Auth)
		}
		if !strings.HasPrefix(r.Path, "/api/v4/projects/group%2Fsub%2Fproject/jobs/42") {
			t.Errorf("request path %s", r.Path)
		}
	}
	for _, v := range w.gl.Verifies() {
		if v.HeaderToken != jobRunnerToken || v.SystemID {
			t.Errorf("runners/verify got %+v: the runner's own token, no system_id", v)
		}
	}
}

// The same job by --project and --job with --gitlab-url, with an OAuth
// token, which goes as Authorization: Bearer.
func TestJobByProjectAndIDWithABearerToken(t *testing.T) {
	w := newJobWorld(t)
	code, out, stderr := w.run(oauthToken, "--gitlab-url", w.gl.URL(), "--project", "12", "--job", "42")
	noToken(t, out, stderr)
	if !strings.Contains(out, "failure_reason runner_system_failure") || !strings.Contains(out, "→ namespace") {
		t.Errorf("exit %d, stderr %s:\n%s", code, stderr, out)
	}
	for _, r := range w.gl.JobRequests() {
		if r.Auth != "Bearer" || !strings.HasPrefix(r.Path, "/api/v4/projects/12/jobs/42") {
			t.Errorf("request %+v", r)
		}
	}
	// The token from a file, its first line.
	file := filepath.Join(t.TempDir(), "token")
	cmdtest.NoErr(t, os.WriteFile(file, []byte(jobReaderToken+"\n"), 0o600))
	code, out, stderr = w.run("", w.url(42), "--token-file", file)
	noToken(t, out, stderr)
	if !strings.Contains(out, "→ namespace") {
		t.Errorf("--token-file: exit %d, stderr %s:\n%s", code, stderr, out)
	}
}

// Bad input gets a clear answer, exit 3, within its deadline, and never
// the token; a job URL on another host is refused before anything is
// sent.
func TestJobBadInput(t *testing.T) {
	w := newJobWorld(t)
	for _, c := range []struct {
		name  string
		token string
		args  []string
		says  string
		out   bool // the answer is on stdout (a report), not stderr
	}{
		{"not a job", jobReaderToken, []string{fmt.Sprintf("https://%s:%s/group/sub/project/-/pipelines/5", gitlabtest.Host, w.gl.Port)},
			"is not a job's URL: a job's page is https://GITLAB/GROUP/PROJECT/-/jobs/ID", false},
		{"not a URL", jobReaderToken, []string{"group/project#42"}, "is not a job's URL", false},
		{"another host", jobReaderToken, []string{"https://gitlab.other.invalid/group/project/-/jobs/42"},
			"the job's URL is on https://gitlab.other.invalid:443, which is not the GitLab of any [[runners]] entry of this host", false},
		{"credentials in the URL", jobReaderToken, []string{"https://user:s3cr3t-pass@gitlab.other.invalid/g/p/-/jobs/1"}, "is not the GitLab", false},
		{"no token", "", []string{w.url(42)}, "doctor job needs a GitLab token that may read the job: $GITLAB_TOKEN, or --token-file FILE", false},
		{"unknown token", "glpat-unknown0123456789abcd", []string{w.url(42)}, "refuses the token (401 Unauthorized)", false},
		{"guest token", guestToken, []string{w.url(42)}, "lets it not read the jobs of group/sub/project (403 Forbidden)", false},
		{"no such job", jobReaderToken, []string{w.url(4242)}, "has no job 4242 in group/sub/project the token can see (404 Not found)", false},
		{"no such project", jobReaderToken, []string{fmt.Sprintf("https://%s:%s/nope/nope/-/jobs/42", gitlabtest.Host, w.gl.Port)},
			"has no project nope/nope the token can see (404 Project Not Found)", false},
		{"another host's runner", jobReaderToken, []string{w.url(44)},
			`job 44 ran on GitLab's runner #99 "another-host", which is none of this host's [[runners]] ([[runners]] #1 "kcp-tenant-kubernetes"): run doctor job on that runner's host.`, true},
		{"still running", jobReaderToken, []string{w.url(43)}, "job 43 is running: its log is not whole yet", true},
		{"offline", jobReaderToken, []string{w.url(42), "--offline"}, "it cannot run --offline", false},
		// Nothing of doctor job is bundled: it has no --bundle.
		{"no bundle", jobReaderToken, []string{w.url(42), "--bundle", "b.tar.gz"}, "unknown flag: --bundle", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := len(w.gl.JobRequests())
			start := time.Now()
			code, out, stderr := w.run(c.token, c.args...)
			took := time.Since(start)
			noToken(t, out, stderr)
			if strings.Contains(out+stderr, "s3cr3t-pass") {
				t.Error("the URL's password was printed")
			}
			if code != report.ExitCantRun {
				t.Errorf("exit %d, want 3", code)
			}
			got := stderr
			if c.out {
				got = out
			}
			if !strings.Contains(strings.Join(strings.Fields(got), " "), c.says) {
				t.Errorf("want %q in\nstdout: %s\nstderr: %s", c.says, out, stderr)
			}
			if took > 10*time.Second {
				t.Errorf("took %s", took)
			}
			if c.name == "another host" || c.name == "credentials in the URL" || c.name == "not a job" {
				if n := len(w.gl.JobRequests()) - before; n != 0 {
					t.Errorf("%d requests reached GitLab for a refused input", n)
				}
			}
		})
	}
	// The running job points at doctor trace, and the other host's says so,
	// in every format.
	_, out, _ := w.run(jobReaderToken, w.url(43))
	if out = strings.Join(strings.Fields(out), " "); !strings.Contains(out, "doctor trace --next") || !strings.Contains(out, "Job 43 \"build\" (stage build) of group/sub/project: running.") {
		t.Errorf("running job:\n%s", out)
	}
	code, out, _ := w.run(jobReaderToken, w.url(44), "-o", "json")
	var rep report.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != report.ExitCantRun || rep.Job == nil || rep.Job.Entry != nil ||
		len(rep.Summary.Incomplete) == 0 || !strings.Contains(rep.Summary.Incomplete[0], "none of this host's") {
		t.Errorf("another host's job as json: exit %d, %v\n%s", code, err, out)
	}
}

// A log that names no check runs none and exits 3, with the job's status
// and failure_reason, as doctor why does.
func TestJobWhoseLogNamesNoCheck(t *testing.T) {
	w := newJobWorld(t)
	code, out, _ := w.run(jobReaderToken, w.url(46))
	if code != report.ExitCantRun || !strings.Contains(out, "failure_reason script_failure") ||
		!strings.Contains(out, "doctor job names no check and ran none") {
		t.Errorf("exit %d:\n%s", code, out)
	}
}

// A 100 MB log is read to its end within its deadline, in bounded memory:
// its tail holds the failure, which names the check. One that never ends
// is a clear answer at --trace-timeout.
func TestJobHugeAndEndlessLogs(t *testing.T) {
	w := newJobWorld(t)
	filler := bytes.Repeat([]byte("Downloading artifacts from coordinator... ok\n"), 1<<12) // 184 KiB
	huge := http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "text/plain")
		for written := 0; written < 100<<20; written += len(filler) {
			if _, err := rw.Write(filler); err != nil {
				return
			}
		}
		fmt.Fprintln(rw, namespaceLine)
	})
	endless := http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "text/plain")
		for {
			if _, err := rw.Write([]byte("still running\n")); err != nil {
				return
			}
			rw.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	})
	for _, j := range []gitlabtest.Job{{ID: 45, TraceHandler: huge}, {ID: 47, TraceHandler: endless}} {
		j.ProjectID, j.ProjectPath, j.Name, j.Stage, j.Status, j.FailureReason = 12, "group/sub/project", "big", "test", "failed", "runner_system_failure"
		j.RunnerID, j.RunnerDescription = 7, "kcp-tenant-kubernetes"
		w.gl.AddJob(j)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	_, out, stderr := w.run(jobReaderToken, w.url(45))
	took := time.Since(start)
	runtime.ReadMemStats(&after)
	t.Logf("100 MB log: %s, %d MiB allocated in all", took.Round(time.Millisecond), (after.TotalAlloc-before.TotalAlloc)>>20)
	if !strings.Contains(out, "the log of job 45 (its last 4 MiB of 101 MiB)") || !strings.Contains(out, "→ namespace") {
		t.Errorf("stderr %s:\n%s", stderr, out)
	}
	if took > 20*time.Second {
		t.Errorf("a 100 MB log took %s", took)
	}
	// What this run allocated (HeapSys is the whole test process's,
	// other tests' heaps included).
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 256<<20 {
		t.Errorf("reading a 100 MB log allocated %d MiB", grew>>20)
	}

	start = time.Now()
	code, out, stderr := w.run(jobReaderToken, w.url(47), "--trace-timeout", "2s")
	took = time.Since(start)
	if code != report.ExitCantRun || !strings.Contains(out, "the log did not end within 2s") {
		t.Errorf("endless log: exit %d, stderr %s:\n%s", code, stderr, out)
	}
	if took > 6*time.Second {
		t.Errorf("an endless log took %s with --trace-timeout 2s", took)
	}
}
