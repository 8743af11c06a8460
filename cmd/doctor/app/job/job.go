// Package job is doctor job: from a failed job's URL (or its project and
// id), read the job and its log from GitLab's Jobs API with the operator's
// token, and name the [[runners]] entry of this host it ran on, for the
// CLI to run doctor why on the log for that runner.
//
// The token is sent to one GitLab only: the one a [[runners]] entry of this
// host talks to, or --gitlab-url; a job URL on another host is refused
// before anything is sent. It is in no error, finding or output.
package job

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/client/gitlab"
	"github.com/socialwebcomputer/doctor/checks/facts/configfacts"
	"github.com/socialwebcomputer/doctor/internal/hostio"
)

// Ref names a job: its web URL, or --project and --job with --gitlab-url.
type Ref struct {
	URL       string
	Project   string // a number or a namespaced path
	ID        int64
	GitLabURL string
}

// InputError is a reference doctor cannot use, or a GitLab it will not
// send the token to: the CLI's exit 3, before any request.
type InputError struct{ msg string }

func (e *InputError) Error() string { return e.msg }

func inputError(format string, a ...any) error { return &InputError{fmt.Sprintf(format, a...)} }

// jobPath is the part of a job's page URL after the project:
// /<project path>/-/jobs/<id>, optionally /raw or a trailing slash.
const jobMarker = "/-/jobs/"

// Located is the job to read and the GitLab that has it.
type Located struct {
	Project string // the project's path or number
	ID      int64
	Target  *gitlab.Target
	// Entries are this host's [[runners]] that talk to that GitLab.
	Entries []Entry
}

// Entry is one [[runners]] entry of this host.
type Entry struct {
	Ref    checks.RunnerRef
	Name   string
	Token  string // its runner token: sent to its own GitLab, to ask its id
	Target *gitlab.Target
}

// Locate finds the job's GitLab among this host's runners' (or
// --gitlab-url) and its project and id, and refuses a job whose host is
// neither: the token goes nowhere else.
func Locate(env *hostio.Env, cfg *configfacts.ConfigFile, ref Ref) (*Located, error) {
	var entries []Entry
	if cfg != nil && cfg.Decoded() {
		for i, r := range cfg.Config.Runners {
			t, err := configfacts.GitLabTarget(env, cfg, configfacts.RunnerLabel(i, r), r)
			if err != nil {
				continue
			}
			entries = append(entries, Entry{Ref: *configfacts.RefOf(i, r), Name: r.Name, Token: r.Token, Target: t})
		}
	}
	var given *gitlab.Target
	if ref.GitLabURL != "" {
		t, err := gitlab.ParseURL(ref.GitLabURL, true, "--gitlab-url")
		if err != nil {
			return nil, inputError("--gitlab-url: %v", err)
		}
		given = t
	}
	loc := &Located{Project: ref.Project, ID: ref.ID}
	var origin, rest string
	if ref.URL != "" {
		u, err := url.Parse(strings.TrimSpace(ref.URL))
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			// url's error would quote the input, which may hold a credential.
			return nil, inputError("%s is not a job's URL: a job's page is https://GITLAB/GROUP/PROJECT/-/jobs/ID", describe(ref.URL))
		}
		u.User = nil
		p, idPart, ok := strings.Cut(u.EscapedPath(), jobMarker)
		idPart = strings.TrimSuffix(strings.TrimSuffix(idPart, "/raw"), "/")
		id, err := strconv.ParseInt(idPart, 10, 64)
		if !ok || err != nil || id <= 0 || strings.Trim(p, "/") == "" {
			return nil, inputError("%s is not a job's URL: a job's page is https://GITLAB/GROUP/PROJECT/-/jobs/ID (a pipeline's, a merge request's or a project's is not)", describe(u.String()))
		}
		loc.ID = id
		origin = originOf(u)
		rest = p
	} else {
		if ref.Project == "" || ref.ID <= 0 {
			return nil, inputError("doctor job needs a job: its URL, or --project and --job with --gitlab-url")
		}
	}
	// The GitLab: --gitlab-url, else the runners' whose origin the URL has.
	switch {
	case given != nil:
		if origin != "" && origin != given.Origin() {
			return nil, inputError("the job's URL is on %s, not on --gitlab-url %s: doctor sends the token to --gitlab-url only", origin, given.Origin())
		}
		loc.Target = given
		for _, e := range entries {
			if e.Target.Origin() == given.Origin() {
				// The runner's TLS files are what trusts this GitLab.
				t := *e.Target
				t.Base, t.From = given.Base, []string{"--gitlab-url"}
				loc.Target = &t
				break
			}
		}
	case origin == "":
		return nil, inputError("--project and --job need --gitlab-url: the GitLab to ask")
	default:
		for _, e := range entries {
			if e.Target.Origin() == origin {
				loc.Target = e.Target
				break
			}
		}
		if loc.Target == nil {
			var have []string
			for _, e := range entries {
				if !contains(have, e.Target.Origin()) {
					have = append(have, e.Target.Origin())
				}
			}
			known := "config.toml names no GitLab"
			if len(have) > 0 {
				known = "this host's runners talk to " + strings.Join(have, ", ")
			}
			return nil, inputError("the job's URL is on %s, which is not the GitLab of any [[runners]] entry of this host (%s): doctor sends the token "+
				"only there; give --gitlab-url to name another GitLab on purpose", origin, known)
		}
	}
	for _, e := range entries {
		if e.Target.Origin() == loc.Target.Origin() {
			loc.Entries = append(loc.Entries, e)
		}
	}
	if rest != "" {
		// A GitLab under a relative URL root has it before the project.
		root := strings.TrimSuffix(loc.Target.Base.EscapedPath(), "/")
		p := strings.TrimPrefix(rest, root)
		project, err := url.PathUnescape(strings.Trim(p, "/"))
		if err != nil || project == "" {
			return nil, inputError("%s names no project before /-/jobs/", describe(ref.URL))
		}
		loc.Project = project
	}
	return loc, nil
}

func originOf(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"https": "443", "http": "80"}[u.Scheme]
	}
	return u.Scheme + "://" + strings.ToLower(u.Hostname()) + ":" + port
}

// describe shows what the operator gave without what may be a credential
// in it (user info).
func describe(raw string) string {
	if u, err := url.Parse(strings.TrimSpace(raw)); err == nil && u.User != nil {
		u.User = nil
		return fmt.Sprintf("%q", u.String())
	}
	if len(raw) > 200 {
		raw = raw[:200] + "…"
	}
	return fmt.Sprintf("%q", raw)
}

func contains(list []string, s string) bool {
	for _, l := range list {
		if l == s {
			return true
		}
	}
	return false
}

// Result is what GitLab said of the job.
type Result struct {
	Job *gitlab.Job
	// Entry is the [[runners]] entry of this host that ran it; nil when
	// none did (another host's runner, or no runner took it).
	Entry *checks.RunnerRef
	// How says how Entry was found: "runner id 7 (runners/verify)",
	// "description".
	How   string
	Trace *gitlab.Trace
	// TraceErr says why the log was not read (a running job's is not read).
	TraceErr error
}

// Options bound the reads.
type Options struct {
	Token        string
	Deadlines    gitlab.Deadlines
	TraceTimeout time.Duration
}

// Read reads the job, names its runner entry and, once it has ended, reads
// its log.
func Read(ctx context.Context, env *hostio.Env, loc *Located, o Options) (*Result, error) {
	jobs := &gitlab.Jobs{Env: env, Target: loc.Target, Token: o.Token, DL: o.Deadlines, TraceTimeout: o.TraceTimeout}
	j, err := jobs.Job(ctx, loc.Project, loc.ID)
	if err != nil {
		return nil, refusal(err, loc)
	}
	res := &Result{Job: j}
	res.Entry, res.How = whichEntry(ctx, env, loc, j, o.Deadlines)
	if j.Running() {
		return res, nil
	}
	res.Trace, res.TraceErr = jobs.Trace(ctx, loc.Project, loc.ID)
	if res.TraceErr != nil {
		res.TraceErr = refusal(res.TraceErr, loc)
	}
	return res, nil
}

// refusal says GitLab's answer in words an operator acts on.
func refusal(err error, loc *Located) error {
	var ae *gitlab.APIError
	if !errors.As(err, &ae) {
		return fmt.Errorf("GitLab at %s: %v", loc.Target.Origin(), err)
	}
	switch {
	case ae.Status == 401:
		return fmt.Errorf("GitLab at %s refuses the token (%s): it is unknown, expired or revoked. Give a personal, project or group "+
			"access token with the read_api scope in GITLAB_TOKEN or --token-file", loc.Target.Origin(), ae)
	case ae.Status == 403:
		return fmt.Errorf("GitLab at %s knows the token but lets it not read the jobs of %s (%s): it needs the read_api scope, "+
			"of a user who may see the project's job logs", loc.Target.Origin(), loc.Project, ae)
	case ae.Status == 404 && strings.Contains(strings.ToLower(ae.Message), "project"):
		return fmt.Errorf("GitLab at %s has no project %s the token can see (%s)", loc.Target.Origin(), loc.Project, ae)
	case ae.Status == 404:
		return fmt.Errorf("GitLab at %s has no job %d in %s the token can see (%s)", loc.Target.Origin(), loc.ID, loc.Project, ae)
	}
	return fmt.Errorf("GitLab at %s answers %s", loc.Target.Origin(), ae)
}

// whichEntry is the [[runners]] entry of this host the job ran on: the
// one whose token GitLab says is the job's runner (runners/verify gives a
// token's runner id), else the one named as the runner's description.
func whichEntry(ctx context.Context, env *hostio.Env, loc *Located, j *gitlab.Job, dl gitlab.Deadlines) (*checks.RunnerRef, string) {
	if j.Runner == nil || j.Runner.ID == 0 {
		return nil, ""
	}
	for _, e := range loc.Entries {
		if e.Token == "" {
			continue
		}
		id, err := gitlab.RunnerID(ctx, env, e.Target, dl, e.Token)
		if err == nil && id == j.Runner.ID {
			ref := e.Ref
			return &ref, fmt.Sprintf("GitLab's runner id %d is this entry's token (POST /api/v4/runners/verify)", id)
		}
	}
	if d := strings.TrimSpace(j.Runner.Description); d != "" {
		var found []checks.RunnerRef
		for _, e := range loc.Entries {
			if e.Name == d {
				found = append(found, e.Ref)
			}
		}
		if len(found) == 1 {
			return &found[0], fmt.Sprintf("its name is the runner's description %q", d)
		}
	}
	return nil, ""
}
