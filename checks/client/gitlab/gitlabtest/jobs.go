package gitlabtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// The Jobs API of GitLab's documentation (doc/api/jobs.md: "Get a single
// job", "Get a log file"), as the stand-in serves it:
//
//	GET /api/v4/projects/:id/jobs/:job_id
//	GET /api/v4/projects/:id/jobs/:job_id/trace
//
// :id is the project's number or its URL-encoded path (group%2Fproject).
// A token comes in PRIVATE-TOKEN (an access token) or Authorization:
// Bearer (an OAuth token, or an access token); without one GitLab knows,
// 401 {"message":"401 Unauthorized"}; one that may not read the project's
// jobs, 403 {"message":"403 Forbidden"}; an unknown project 404
// {"message":"404 Project Not Found"}, an unknown job 404 {"message":"404
// Not found"}.

// Access is what a token may do.
type Access int

const (
	// Reader may read the jobs of every project.
	Reader Access = iota + 1
	// Guest is known but may not read jobs: 403.
	Guest
)

// Job is a job the stand-in serves.
type Job struct {
	ProjectID   int64
	ProjectPath string // "group/sub/project"
	ID          int64
	Name, Stage string
	Status      string // "failed", "running", "success", ...
	// FailureReason is GitLab's failure_reason: "script_failure",
	// "runner_system_failure", ...
	FailureReason string
	// RunnerID and RunnerDescription are the runner GitLab recorded; 0 for
	// a job no runner took.
	RunnerID          int64
	RunnerDescription string
	// ManagerSystemID and ManagerVersion are its runner manager's.
	ManagerSystemID, ManagerVersion string
	// Trace is the log; TraceHandler, when set, serves it instead.
	Trace        string
	TraceHandler http.Handler
}

// JobRequest is one Jobs API request as the stand-in saw it.
type JobRequest struct {
	Path string // the escaped path
	// Auth is how the token came: "PRIVATE-TOKEN", "Bearer" or "".
	Auth  string
	Token string
}

// AddJob serves j; tokens are the access tokens GitLab knows.
func (g *GitLab) AddJob(j Job) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.jobs = append(g.jobs, j)
}

// JobRequests returns the Jobs API requests seen so far.
func (g *GitLab) JobRequests() []JobRequest {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]JobRequest(nil), g.jobReqs...)
}

// WebURL is the job's page, as GitLab's web_url gives it.
func (g *GitLab) WebURL(j Job) string {
	return fmt.Sprintf("https://%s:%s/%s/-/jobs/%d", Host, g.Port, j.ProjectPath, j.ID)
}

func apiMessage(w http.ResponseWriter, status int, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"message": message})
}

// authorize finds the request's token and what it may do, and records the
// request; false when it answered already.
func (g *GitLab) authorize(w http.ResponseWriter, r *http.Request) bool {
	req := JobRequest{Path: r.URL.EscapedPath()}
	if t := r.Header.Get("PRIVATE-TOKEN"); t != "" {
		req.Auth, req.Token = "PRIVATE-TOKEN", t
	} else if t, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		req.Auth, req.Token = "Bearer", t
	}
	g.mu.Lock()
	g.jobReqs = append(g.jobReqs, req)
	access := g.users[req.Token]
	g.mu.Unlock()
	switch {
	case req.Token == "" || access == 0:
		apiMessage(w, http.StatusUnauthorized, "401 Unauthorized")
		return false
	case access == Guest:
		apiMessage(w, http.StatusForbidden, "403 Forbidden")
		return false
	}
	return true
}

// find is the job of the path's :id and :job_id, or the 404 GitLab gives.
func (g *GitLab) find(w http.ResponseWriter, r *http.Request) (Job, bool) {
	project, id := r.PathValue("id"), r.PathValue("job")
	// The mux matches the escaped path: group%2Fproject is one segment,
	// whose value GitLab unescapes.
	if p, err := url.PathUnescape(project); err == nil {
		project = p
	}
	jobID, _ := strconv.ParseInt(id, 10, 64)
	g.mu.Lock()
	defer g.mu.Unlock()
	known := false
	for _, j := range g.jobs {
		if strconv.FormatInt(j.ProjectID, 10) != project && j.ProjectPath != project {
			continue
		}
		known = true
		if j.ID == jobID {
			return j, true
		}
	}
	if !known {
		apiMessage(w, http.StatusNotFound, "404 Project Not Found")
	} else {
		apiMessage(w, http.StatusNotFound, "404 Not found")
	}
	return Job{}, false
}

func (g *GitLab) getJob(w http.ResponseWriter, r *http.Request) {
	if !g.authorize(w, r) {
		return
	}
	j, ok := g.find(w, r)
	if !ok {
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(g.jobJSON(j))
}

func (g *GitLab) getTrace(w http.ResponseWriter, r *http.Request) {
	if !g.authorize(w, r) {
		return
	}
	j, ok := g.find(w, r)
	if !ok {
		return
	}
	if j.TraceHandler != nil {
		j.TraceHandler.ServeHTTP(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprint(w, j.Trace)
}

// jobJSON is the job as "Get a single job" shows it (doc/api/jobs.md): its
// fields, its runner and runner manager, and the commit, pipeline and
// user doctor must not keep.
func (g *GitLab) jobJSON(j Job) map[string]any {
	var runner, manager any
	if j.RunnerID != 0 {
		runner = map[string]any{"id": j.RunnerID, "description": j.RunnerDescription, "ip_address": nil, "active": true,
			"paused": false, "is_shared": false, "runner_type": "project_type", "name": "gitlab-runner", "online": true, "status": "online"}
		manager = map[string]any{"id": j.RunnerID*10 + 1, "system_id": j.ManagerSystemID, "version": j.ManagerVersion,
			"revision": "9cbf0074", "platform": "linux", "architecture": "amd64", "created_at": "2026-11-28T10:12:02.507Z",
			"contacted_at": "2026-11-29T11:58:09.355Z", "ip_address": "127.0.0.1", "status": "online"}
	}
	finished := any("2026-11-29T11:54:31.198Z")
	if j.Status == "running" || j.Status == "pending" {
		finished = nil
	}
	out := map[string]any{
		"commit": map[string]any{"author_email": "admin@example.invalid", "author_name": "Administrator",
			"created_at": "2026-11-29T10:51:14.000+01:00", "id": "0ff3ae198f8601a285adcf5c0fff204ee6fba5fd",
			"message": "Test the CI integration.", "short_id": "0ff3ae19", "title": "Test the CI integration."},
		"coverage": nil, "archived": false, "source": "push", "allow_failure": false,
		"created_at": "2026-11-29T11:51:21.880Z", "started_at": "2026-11-29T11:54:30.733Z", "finished_at": finished,
		"erased_at": nil, "duration": 0.465, "queued_duration": 0.010, "artifacts_expire_at": nil,
		"tag_list": []string{"docker runner"}, "id": j.ID, "name": j.Name,
		"pipeline": map[string]any{"id": 6, "project_id": j.ProjectID, "ref": "main",
			"sha": "0ff3ae198f8601a285adcf5c0fff204ee6fba5fd", "status": "failed"},
		"ref": "main", "artifacts": []any{}, "runner": runner, "runner_manager": manager,
		"stage": j.Stage, "status": j.Status, "tag": false, "web_url": g.WebURL(j),
		"project": map[string]any{"ci_job_token_scope_enabled": false},
		"user": map[string]any{"id": 1, "name": "Administrator", "username": "root", "state": "active",
			"web_url": "https://" + Host + "/root", "created_at": "2026-11-21T13:14:24.077Z", "public_email": ""},
	}
	if j.FailureReason != "" {
		out["failure_reason"] = j.FailureReason
	}
	return out
}
