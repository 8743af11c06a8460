package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/all"
	"github.com/socialwebcomputer/doctor/checks/client/gitlab"
	"github.com/socialwebcomputer/doctor/checks/facts/configfacts"
	"github.com/socialwebcomputer/doctor/cmd/doctor/app/job"
	"github.com/socialwebcomputer/doctor/cmd/doctor/app/symptom"
	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/internal/text/safetext"
	"github.com/socialwebcomputer/doctor/report"
)

// jobFlags are doctor job's own flags, and what it found before the checks.
type jobFlags struct {
	url, gitlabURL, project, tokenFile string
	id                                 int64
	traceTimeout                       time.Duration
	// found is the job as the report carries it; stop, when set, is why
	// no check runs (the job runs, ran elsewhere, has no log).
	found *report.Job
	stop  string
}

// tokenEnv is the variable doctor job reads its GitLab token from.
const tokenEnv = "GITLAB_TOKEN"

// maxTokenFile bounds --token-file: a token is a line.
const maxTokenFile = 4 << 10

func (a *app) jobCommand() *cobra.Command {
	f := &runFlags{why: true, program: a.program(), job: &jobFlags{}}
	cmd := &cobra.Command{
		Use:   "job [URL]",
		Short: "Read a failed job from GitLab and run doctor why on its log, for the runner of this host it ran on",
		Long: `Read a job from GitLab's Jobs API: its status, failure_reason, the runner it
ran on, and its log (the end of it, where the failure is: the last 4 MiB,
read to its end within --trace-timeout). Name the [[runners]] entry of this
host it ran on (the one whose token GitLab says is the job's runner, else
the one named as its description), then do what doctor why does with the
log: print each line that names a check, run those checks, and what they
require, for that runner, and report their findings first, with the job's
status and failure_reason beside them. The output formats and exit codes
are doctor run's.

The job is its page's URL (https://GITLAB/GROUP/PROJECT/-/jobs/ID), or
--project and --job with --gitlab-url. The token, a personal, project or
group access token with read_api (sent as PRIVATE-TOKEN; another, as
Authorization: Bearer), comes from $GITLAB_TOKEN or --token-file. It is
sent only to the GitLab a [[runners]] entry of this host talks to, or to
--gitlab-url: a job URL on another host is refused before anything is sent.
It is never printed.

A job still running has no whole log: doctor job says so and names doctor
trace. A job that ran on another host's runner says which, and runs nothing
here (exit 3, as a log that names no check).`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usageError("doctor job reads one job: its URL, or --project and --job, not %d arguments", len(args))
			}
			if len(args) == 0 && (f.job.project == "" || f.job.id == 0) {
				return usageError("doctor job needs a job: its URL (https://GITLAB/GROUP/PROJECT/-/jobs/ID), or --project and --job with --gitlab-url")
			}
			if len(args) == 1 && (f.job.project != "" || f.job.id != 0) {
				return usageError("give the job's URL or --project and --job, not both")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				f.job.url = args[0]
			}
			code, err := a.run(cmd, f)
			a.code = code
			return err
		},
	}
	registerRunFlags(cmd, f)
	fs := cmd.Flags()
	fs.StringVar(&f.job.gitlabURL, "gitlab-url", "", "the GitLab to ask, a `URL` (default: the one of the [[runners]] entry whose GitLab the job's URL is on)")
	fs.StringVar(&f.job.project, "project", "", "the job's project, its `ID` or path (group/project), with --job")
	fs.Int64Var(&f.job.id, "job", 0, "the job's `ID`, with --project")
	fs.StringVar(&f.job.tokenFile, "token-file", "", "read the GitLab token from `FILE` (default: $"+tokenEnv+"); never printed")
	fs.DurationVar(&f.job.traceTimeout, "trace-timeout", 30*time.Second, "read the job's log to its end within `DURATION`")
	// The job decides the runner (the one it ran on), as the log decides
	// the checks.
	_ = fs.MarkHidden("runner")
	_ = cmd.MarkFlagFilename("token-file")
	for _, name := range []string{"gitlab-url", "project", "job", "trace-timeout"} {
		_ = cmd.RegisterFlagCompletionFunc(name, cobra.NoFileCompletions)
	}
	return cmd
}

// readToken is the token: --token-file's first line, else $GITLAB_TOKEN.
// A file is the operator's, read as given (not under --root), bounded.
func (a *app) readToken(f *jobFlags) (string, error) {
	if f.tokenFile != "" {
		fh, err := os.OpenFile(f.tokenFile, os.O_RDONLY|syscall.O_NONBLOCK, 0)
		if err != nil {
			return "", usageError("--token-file %s: %v", f.tokenFile, unwrapPath(err))
		}
		defer fh.Close()
		if st, err := fh.Stat(); err != nil || !st.Mode().IsRegular() {
			return "", usageError("--token-file %s is not a regular file", f.tokenFile)
		}
		b, err := io.ReadAll(io.LimitReader(fh, maxTokenFile+1))
		if err != nil {
			return "", usageError("--token-file %s: %v", f.tokenFile, err)
		}
		if len(b) > maxTokenFile {
			return "", usageError("--token-file %s is longer than %d KiB: a token is one line", f.tokenFile, maxTokenFile>>10)
		}
		line, _, _ := strings.Cut(string(b), "\n")
		if t := strings.TrimSpace(line); t != "" {
			return t, nil
		}
		return "", usageError("--token-file %s holds no token on its first line", f.tokenFile)
	}
	if t := strings.TrimSpace(a.io.Getenv(tokenEnv)); t != "" {
		return t, nil
	}
	return "", usageError("doctor job needs a GitLab token that may read the job: $%s, or --token-file FILE (a personal, project or group access token with read_api)", tokenEnv)
}

// readJob reads the job and its log and returns the log's scan, and the
// runner to run the checks for; f.job.stop says why nothing runs. An
// error is exit 3: bad input, a token GitLab refuses, no such job.
func (a *app) readJob(ctx context.Context, f *runFlags, env *hostio.Env) (*symptom.Scan, string, error) {
	jf := f.job
	if env.Offline {
		return nil, "", usageError("doctor job reads the job from GitLab; it cannot run --offline")
	}
	token, err := a.readToken(jf)
	if err != nil {
		return nil, "", err
	}
	cfgCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	values, err := checks.Evaluate(cfgCtx, env, configfacts.ConfigFact, checks.Options{Timeout: 30 * time.Second})
	cancel()
	if err != nil {
		return nil, "", usageError("%v", err)
	}
	var cfg *configfacts.ConfigFile
	if len(values) == 1 {
		cfg = values[0].Value
	}
	loc, err := job.Locate(env, cfg, job.Ref{URL: jf.url, Project: jf.project, ID: jf.id, GitLabURL: jf.gitlabURL})
	if err != nil {
		return nil, "", usageError("%v", err)
	}
	rctx := ctx
	if f.timeout > 0 {
		var cancel context.CancelFunc
		rctx, cancel = context.WithTimeout(ctx, f.timeout)
		defer cancel()
	}
	res, err := job.Read(rctx, env, loc, job.Options{Token: token, Deadlines: gitlab.StageDeadlines(env), TraceTimeout: jf.traceTimeout})
	if err != nil {
		return nil, "", &exitError{code: report.ExitCantRun, msg: scrub(err.Error(), token)}
	}
	jf.found = jobReport(loc, res, token)
	j := res.Job
	switch {
	case j.Running():
		jf.stop = fmt.Sprintf("job %d is %s: its log is not whole yet, and doctor job reads a job that has ended. doctor trace --next "+
			"follows a Kubernetes runner's next job pod through its stages while it runs; run doctor job again when it ends.", j.ID, j.Status)
	case j.Runner == nil || j.Runner.ID == 0:
		jf.stop = fmt.Sprintf("job %d ran on no runner (status %s): nothing of this host's took it.", j.ID, j.Status)
	case res.Entry == nil:
		jf.stop = fmt.Sprintf("job %d ran on GitLab's runner #%d %s, which is none of this host's [[runners]] (%s): run doctor job on that runner's host.",
			j.ID, j.Runner.ID, strconv.Quote(j.Runner.Description), entriesOf(loc))
	case res.TraceErr != nil:
		jf.stop = fmt.Sprintf("the log of job %d could not be read: %s", j.ID, scrub(res.TraceErr.Error(), token))
	}
	if jf.stop != "" {
		return nil, "", nil
	}
	m, err := symptom.New(all.Checks())
	if err != nil {
		return nil, "", &exitError{code: report.ExitCantRun, msg: "invalid catalog: " + err.Error()}
	}
	// A log is the job's output: it may echo anything, the token too.
	text := bytes.ReplaceAll(res.Trace.Tail, []byte(token), []byte("[MASKED]"))
	source := fmt.Sprintf("the log of job %d", j.ID)
	if res.Trace.Cut {
		source += fmt.Sprintf(" (its last %d MiB of %d MiB)", gitlab.TraceTail>>20, (res.Trace.Read+1<<20-1)>>20)
	}
	s, err := m.Scan(source, bytes.NewReader(text))
	if err != nil {
		return nil, "", &exitError{code: report.ExitCantRun, msg: err.Error()}
	}
	return s, strconv.Itoa(res.Entry.Index), nil
}

// scrub removes the token from text a server wrote (an error's message).
func scrub(s, token string) string {
	if token == "" {
		return s
	}
	return strings.ReplaceAll(s, token, "[MASKED]")
}

func entriesOf(loc *job.Located) string {
	if len(loc.Entries) == 0 {
		return "none talks to " + loc.Target.Origin()
	}
	var names []string
	for _, e := range loc.Entries {
		names = append(names, e.Ref.String())
	}
	return strings.Join(names, ", ")
}

// jobReport is the job as the report carries it.
func jobReport(loc *job.Located, res *job.Result, token string) *report.Job {
	j := res.Job
	out := &report.Job{ID: j.ID, Project: loc.Project, Name: scrub(j.Name, token), Stage: scrub(j.Stage, token), Status: j.Status,
		FailureReason: j.FailureReason, WebURL: scrub(j.WebURL, token), Entry: res.Entry, How: res.How}
	if j.Runner != nil && j.Runner.ID != 0 {
		out.Runner = &report.JobRunner{ID: j.Runner.ID, Description: scrub(j.Runner.Description, token)}
		if m := j.RunnerManager; m != nil {
			out.Runner.SystemID, out.Runner.ManagerVersion = m.SystemID, m.Version
		}
	}
	return out
}

// jobHeader is what the output says of the job before anything else: its
// status and failure_reason, and where it ran. GitLab's strings are
// escaped as any input is.
func (a *app) jobHeader(w io.Writer, f *runFlags) {
	if f.job == nil || f.job.found == nil || f.output == "json" || f.output == "yaml" {
		return
	}
	j := f.job.found
	md := f.output == "markdown" || f.output == "md"
	esc := safetext.Line
	if md {
		esc = report.MarkdownText
	}
	p := para(w, md, a.width())
	reason := ""
	if j.FailureReason != "" {
		key := "failure_reason"
		if md {
			key = "`failure_reason`"
		}
		reason = ", " + key + " " + esc(j.FailureReason)
	}
	p("Job %d %s (stage %s) of %s: %s%s.", j.ID, esc(strconv.Quote(j.Name)), esc(j.Stage), esc(j.Project), esc(j.Status), reason)
	if j.Runner != nil {
		mgr := ""
		if j.Runner.SystemID != "" || j.Runner.ManagerVersion != "" {
			mgr = fmt.Sprintf(" (runner manager %s, gitlab-runner %s)", esc(orUnknown(j.Runner.SystemID)), esc(orUnknown(j.Runner.ManagerVersion)))
		}
		where := "none of this host's [[runners]]"
		if j.Entry != nil {
			where = esc(j.Entry.String()) + " of this host: " + esc(j.How)
		}
		p("It ran on GitLab's runner #%d %s%s: %s.", j.Runner.ID, esc(strconv.Quote(j.Runner.Description)), mgr, where)
	}
	fmt.Fprintln(w)
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// jobStop ends a doctor job that runs no check: the job is running, ran
// on another host, or has no log to read. It says so in every format,
// with the job, and exits 3 (nothing was proved here).
func (a *app) jobStop(f *runFlags, started time.Time) (int, error) {
	rep := report.Build(&checks.Result{StartedAt: started}, nil, resolvedVersion(), started)
	rep.Job = f.job.found
	rep.Summary.Incomplete = append([]string{f.job.stop}, rep.Summary.Incomplete...)
	switch f.output {
	case "json", "yaml":
		if err := report.RenderWith(a.io.Out, rep, f.output, report.Options{}); err != nil {
			return 0, usageError("%v", err)
		}
	default:
		md := f.output == "markdown" || f.output == "md"
		esc := safetext.Line
		if md {
			esc = report.MarkdownText
		}
		a.jobHeader(a.io.Out, f)
		p := para(a.io.Out, md, a.width())
		p("%s", esc(f.job.stop))
		p("doctor job ran no check (exit %d: nothing was proved on this host).", rep.Summary.ExitCode)
	}
	return rep.Summary.ExitCode, nil
}
