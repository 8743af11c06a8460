//go:build integration

package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/checks/client/gitlab/gitlabtest"
	"github.com/socialwebcomputer/doctor/cmd/doctor/cli"
	"github.com/socialwebcomputer/doctor/report"
	"github.com/socialwebcomputer/doctor/testkit/testenv"
	"github.com/socialwebcomputer/doctor/testkit/testroot"
)

// TestJobOfAMissingNamespaceLive is the case end to end: a job
// failed with `namespaces "gitlab-runner" not found`, GitLab's Jobs API
// (the stand-in) has it, the runner's cluster is a real kube-apiserver
// where the namespace is missing. doctor job URL names the runner entry,
// the job's failure_reason, the namespace check and its live finding from
// the cluster, exits as doctor run would (2: an error), and never prints
// the token.
func TestJobOfAMissingNamespaceLive(t *testing.T) {
	env := testenv.Start(t)
	env.BindOwnersToClusterAdmin()
	kc := ownerKubeconfig(env, env.URL, time.Now().Add(12*time.Hour))

	gl := gitlabtest.NewGitLab(t, gitlabtest.Options{
		Tokens:    map[string]int{jobRunnerToken: 200},
		RunnerIDs: map[string]int64{jobRunnerToken: 7},
		Users:     map[string]gitlabtest.Access{jobReaderToken: gitlabtest.Reader},
	})
	gl.AddJob(gitlabtest.Job{ProjectID: 12, ProjectPath: "group/project", ID: 42, Name: "rspec", Stage: "test", Status: "failed",
		FailureReason: "runner_system_failure", RunnerID: 7, RunnerDescription: "kcp-tenant-kubernetes",
		ManagerSystemID: "s_0123456789ab", ManagerVersion: "19.3.0",
		Trace: "Running with gitlab-runner 19.3.0 (9cbf0074)\nPreparing the \"kubernetes\" executor\n" + namespaceLine + "\n"})
	dns := gitlabtest.NewDNS(t, map[string][]string{gitlabtest.Host: {"127.0.0.1"}})

	config := strings.Replace(testroot.GuideConfig, `  url = "https://gitlab.example.invalid:8443/"
  token = "glrt-not-a-real-token-0000"`, fmt.Sprintf("  url = %q\n  token = %q\n  tls-ca-file = %q", gl.URL(), jobRunnerToken, gitlabtest.CAPath), 1)
	root := testroot.New(t)
	root.GuideRunner(config, kc)
	root.Write(gitlabtest.CAPath, string(gl.CA.CertPEM), 0o644)

	url := fmt.Sprintf("https://%s:%s/group/project/-/jobs/42", gitlabtest.Host, gl.Port)
	outputs := map[string]string{}
	codes := map[string]int{}
	for _, format := range []string{"table", "json"} {
		var out, errb bytes.Buffer
		codes[format] = cli.Main([]string{"job", url, "--root", root.Dir, "--resolver", dns.Addr, "--public-dns", dns.Addr,
			"--timeout", "60s", "-o", format}, cli.IO{Out: &out, Err: &errb, Getenv: func(k string) string {
			if k == tokenEnv {
				return jobReaderToken
			}
			return ""
		}})
		outputs[format] = out.String()
		noToken(t, out.String(), errb.String())
		if errb.Len() > 0 {
			t.Logf("-o %s stderr: %s", format, errb.String())
		}
	}
	if codes["table"] != report.ExitError || codes["json"] != report.ExitError {
		t.Errorf("exit codes %v, want 2 (namespace's error) in every format", codes)
	}
	table := strings.Join(strings.Fields(outputs["table"]), " ")
	for _, want := range []string{
		"failure_reason runner_system_failure",
		`[[runners]] #1 "kcp-tenant-kubernetes" of this host: GitLab's runner id 7 is this entry's token`,
		"→ namespace: The runner namespace exists",
		"ERROR namespace", `kubectl --context tenant-ci create namespace gitlab-runner`,
	} {
		if !strings.Contains(table, want) {
			t.Errorf("the table lacks %q:\n%s", want, outputs["table"])
		}
	}
	var rep report.Report
	if err := json.Unmarshal([]byte(outputs["json"]), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Findings) == 0 || rep.Findings[0].Check != "namespace" || rep.Findings[0].Runner == nil || rep.Findings[0].Runner.Index != 1 ||
		!strings.Contains(rep.Findings[0].Cause, `the namespace "gitlab-runner" does not exist: every job fails with`) {
		t.Errorf("the first finding is not namespace's for [[runners]] #1: %+v", rep.Findings)
	}
	if rep.Job == nil || rep.Job.FailureReason != "runner_system_failure" || rep.Job.Entry == nil || rep.Job.Entry.Index != 1 {
		t.Errorf("the report's job: %+v", rep.Job)
	}
}
