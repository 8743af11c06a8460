package gitlab

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/socialwebcomputer/doctor/internal/hostio"
)

// The Jobs API as GitLab documents it (doc/api/jobs.md, "Get a single job"
// and "Get a log file"): GET /projects/:id/jobs/:job_id and
// GET /projects/:id/jobs/:job_id/trace, :id the project's number or its
// URL-encoded path, with an access token in PRIVATE-TOKEN or an OAuth
// token in Authorization: Bearer. An error is {"message": "401
// Unauthorized"}, "403 Forbidden", "404 Project Not Found", "404 Not found".

// Job is what doctor reads of a job: the fields that say how it ended and
// where it ran. Nothing of its user, commit or artifacts is kept.
type Job struct {
	ID            int64          `json:"id"`
	Name          string         `json:"name"`
	Stage         string         `json:"stage"`
	Status        string         `json:"status"`
	FailureReason string         `json:"failure_reason"`
	WebURL        string         `json:"web_url"`
	Ref           string         `json:"ref"`
	CreatedAt     string         `json:"created_at"`
	StartedAt     string         `json:"started_at"`
	FinishedAt    string         `json:"finished_at"`
	Duration      *float64       `json:"duration"`
	Runner        *JobRunner     `json:"runner"`
	RunnerManager *RunnerManager `json:"runner_manager"`
	Pipeline      *struct {
		ID        int64 `json:"id"`
		ProjectID int64 `json:"project_id"`
	} `json:"pipeline"`
}

// JobRunner is the job's runner as GitLab records it (API_Entities_Ci_Runner).
type JobRunner struct {
	ID          int64  `json:"id"`
	Description string `json:"description"`
	RunnerType  string `json:"runner_type"`
	IsShared    bool   `json:"is_shared"`
	Status      string `json:"status"`
}

// RunnerManager is the runner process (one config.toml's entry on one
// host, its system_id) that ran the job (API_Entities_Ci_RunnerManager).
type RunnerManager struct {
	ID           int64  `json:"id"`
	SystemID     string `json:"system_id"`
	Version      string `json:"version"`
	Revision     string `json:"revision"`
	Platform     string `json:"platform"`
	Architecture string `json:"architecture"`
	IPAddress    string `json:"ip_address"`
	Status       string `json:"status"`
}

// Running says the job has not ended: its log is not whole yet
// (GitLab's job statuses, doc/api/jobs.md "Job status values").
func (j *Job) Running() bool {
	switch j.Status {
	case "created", "pending", "running", "preparing", "waiting_for_resource", "waiting_for_callback", "scheduled", "manual", "canceling":
		return true
	}
	return false
}

// APIError is GitLab's refusal: its status and its own message.
type APIError struct {
	Status  int
	Line    string // "401 Unauthorized"
	Message string // {"message": ...} or {"error": ...}, as GitLab wrote it
}

func (e *APIError) Error() string {
	if strings.HasPrefix(e.Message, strconv.Itoa(e.Status)+" ") {
		return e.Message // GitLab's own: "404 Project Not Found"
	}
	if e.Message != "" && e.Message != e.Line {
		return fmt.Sprintf("%s (%s)", e.Line, e.Message)
	}
	return e.Line
}

// Jobs is GitLab's Jobs API reached as the runner reaches GitLab (its
// resolver, its TLS files), with a user's token. The token is sent to
// Target only, in a header; it is in no error, log line or record.
type Jobs struct {
	Env    *hostio.Env
	Target *Target
	Token  string
	DL     Deadlines
	// TraceTimeout bounds the trace's whole read.
	TraceTimeout time.Duration
}

// TraceTail bounds what is kept of a trace: its last bytes, where a job's
// failure is. The runner's default output_limit (4096 KiB) is a whole
// trace of a job that kept to it.
const TraceTail = 4 << 20

// maxTrace bounds what is read of a trace to reach its end.
const maxTrace = 1 << 30

// ProjectPath is a project's :id in the API's path: a number as is, a
// namespaced path URL-encoded (group/sub/project is group%2Fsub%2Fproject).
func ProjectPath(project string) string {
	if _, err := strconv.ParseInt(project, 10, 64); err == nil {
		return project
	}
	return url.PathEscape(project)
}

func (c *Jobs) endpoint(project string, id int64, suffix string) *url.URL {
	rest := "/jobs/" + strconv.FormatInt(id, 10) + suffix
	u := c.Target.Endpoint("api/v4/projects/" + project + rest)
	// The project's path is one segment: its slashes are sent encoded.
	u.RawPath = strings.TrimSuffix(c.Target.Base.EscapedPath(), "/") + "/api/v4/projects/" + ProjectPath(project) + rest
	return u
}

// header carries the token: PRIVATE-TOKEN for a GitLab access token
// (personal, project, group: glpat-), Authorization: Bearer for another
// (an OAuth token).
func (c *Jobs) header() http.Header {
	h := http.Header{"Accept": {"application/json"}}
	if strings.HasPrefix(c.Token, "glpat-") {
		h.Set("PRIVATE-TOKEN", c.Token)
	} else {
		h.Set("Authorization", "Bearer "+c.Token)
	}
	return h
}

// connect resolves and connects to Target, each stage under its deadline.
func (c *Jobs) connect(ctx context.Context) (*Conn, error) {
	sys, err := ResolveSystem(ctx, c.Env, c.Target.Host, c.DL)
	if err != nil {
		return nil, err
	}
	if !sys.Resolved() {
		return nil, fmt.Errorf("%s does not resolve (%s)", c.Target.Host, sys.Why())
	}
	conn, fail := connect(ctx, c.Env, c.Target, sys.Addrs, c.DL)
	if fail != nil {
		return nil, fail
	}
	return conn, nil
}

// Job reads the job.
func (c *Jobs) Job(ctx context.Context, project string, id int64) (*Job, error) {
	conn, err := c.connect(ctx)
	if err != nil {
		return nil, err
	}
	u := c.endpoint(project, id, "")
	resp, err := conn.request(ctx, http.MethodGet, u, c.header(), nil, true, c.DL.HTTP)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %v", u.Redacted(), err)
	}
	if resp.Status != http.StatusOK {
		return nil, apiError(resp.Status, resp.Line, resp.Body)
	}
	if resp.Truncated {
		return nil, fmt.Errorf("GET %s: %s", u.Redacted(), BodyTooLarge())
	}
	var j Job
	if err := json.Unmarshal(resp.Body, &j); err != nil || j.ID == 0 {
		return nil, fmt.Errorf("GET %s answered 200 with no job in it: not GitLab's Jobs API", u.Redacted())
	}
	return &j, nil
}

// apiError is GitLab's refusal in its own words.
func apiError(status int, line string, body []byte) *APIError {
	e := &APIError{Status: status, Line: line}
	var m struct {
		Message any    `json:"message"`
		Error   string `json:"error"`
	}
	if json.Unmarshal(body, &m) == nil {
		switch v := m.Message.(type) {
		case string:
			e.Message = v
		case nil:
			e.Message = m.Error
		default:
			b, _ := json.Marshal(v)
			e.Message = string(b)
		}
	}
	if len(e.Message) > 300 {
		e.Message = e.Message[:300] + "…"
	}
	return e
}

// Trace is the end of a job's log.
type Trace struct {
	Tail []byte // the last TraceTail bytes at most, from a line's start
	Read int64  // bytes read
	// Cut says the log was longer than Tail: what came before is not kept.
	Cut bool
}

// Trace reads the job's log to its end under TraceTimeout, keeping its
// tail: memory is bounded by TraceTail, the read by the deadline and by
// maxTrace. A log that does not end within them is an error, never a
// middle piece taken for the end.
func (c *Jobs) Trace(ctx context.Context, project string, id int64) (*Trace, error) {
	conn, err := c.connect(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	u := c.endpoint(project, id, "/trace")
	d := c.TraceTimeout
	if d <= 0 {
		d = 30 * time.Second
	}
	defer conn.bound(ctx, d)()
	req, err := http.NewRequest(http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.URL = u
	req.Header = c.header()
	req.Header.Set("Accept", "text/plain")
	req.Header.Set("User-Agent", "doctor (gitlab-runner diagnosis)")
	req.Close = true
	if err := req.Write(conn.Conn); err != nil {
		return nil, timeoutWords(err, d)
	}
	// The status line and headers are bounded; the body, once they are
	// read, only by the deadline and maxTrace.
	g := &headerGate{r: conn.Conn, limit: maxHeader + 64<<10}
	resp, err := http.ReadResponse(bufio.NewReaderSize(g, 64<<10), req)
	if err != nil {
		return nil, timeoutWords(err, d)
	}
	g.open = true
	body := resp.Body
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		loc := resp.Header.Get("Location")
		where := "another address"
		if l, err := url.Parse(loc); err == nil && l.Host != "" {
			where = l.Host
		}
		return nil, fmt.Errorf("GitLab answers the log with a redirect (%s) to %s, its object storage: doctor sends nothing there; "+
			"download the log from the job's page and run doctor why with it", resp.Status, where)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(body, 64<<10))
		return nil, apiError(resp.StatusCode, resp.Status, b)
	}
	t, err := tail(body, d)
	if err != nil {
		return nil, err
	}
	return t, nil
}

// headerGate lets limit bytes through until open is set: a server that
// sends headers without end is refused, not buffered.
type headerGate struct {
	r     io.Reader
	n     int64
	limit int64
	open  bool
}

func (g *headerGate) Read(p []byte) (int, error) {
	if !g.open {
		if g.n >= g.limit {
			return 0, errors.New("the answer's headers are longer than 128 KiB")
		}
		p = p[:min(int64(len(p)), g.limit-g.n)]
	}
	n, err := g.r.Read(p)
	g.n += int64(n)
	return n, err
}

// errTooLong ends a log that does not end within maxTrace.
var errTooLong = fmt.Errorf("the log is longer than %d GiB: doctor stopped before its end", maxTrace>>30)

// tail reads r to its end, keeping the last TraceTail bytes.
func tail(r io.Reader, d time.Duration) (*Trace, error) {
	buf := make([]byte, 0, 2*TraceTail)
	chunk := make([]byte, 256<<10)
	t := &Trace{}
	for {
		n, err := r.Read(chunk)
		t.Read += int64(n)
		buf = append(buf, chunk[:n]...)
		if len(buf) > 2*TraceTail-len(chunk) {
			keep := buf[len(buf)-TraceTail:]
			buf = append(buf[:0], keep...)
			t.Cut = true
		}
		if t.Read > maxTrace {
			return nil, errTooLong
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if hostio.IsTimeout(err) {
				return nil, fmt.Errorf("the log did not end within %s (%d MiB read): doctor reads it to its end, where the failure is; "+
					"download it from the job's page and run doctor why with its end", d, t.Read>>20)
			}
			return nil, fmt.Errorf("reading the log: %v", timeoutWords(err, d))
		}
	}
	if len(buf) > TraceTail {
		buf, t.Cut = buf[len(buf)-TraceTail:], true
	}
	if t.Cut {
		// The first line kept is likely cut: start at the next one.
		if i := bytes.IndexByte(buf, '\n'); i >= 0 {
			buf = buf[i+1:]
		}
	}
	t.Tail = buf
	return t, nil
}

// RunnerID asks GitLab which runner a runner token is, with the call the
// runner makes (POST /api/v4/runners/verify, network/gitlab.go
// VerifyRunner, gitlab-runner v19.3.0, without a system_id, so GitLab
// records nothing): the id of its 200 answer. The answer echoes the token;
// only the id is read of it, and nothing of it is kept.
func RunnerID(ctx context.Context, env *hostio.Env, t *Target, dl Deadlines, token string) (int64, error) {
	sys, err := ResolveSystem(ctx, env, t.Host, dl)
	if err != nil {
		return 0, err
	}
	if !sys.Resolved() {
		return 0, fmt.Errorf("%s does not resolve", t.Host)
	}
	conn, fail := connect(ctx, env, t, sys.Addrs, dl)
	if fail != nil {
		return 0, fail
	}
	body, err := json.Marshal(map[string]string{"token": token})
	if err != nil {
		return 0, err
	}
	h := http.Header{"Content-Type": {"application/json"}}
	h.Set("RUNNER-TOKEN", token)
	u := t.Endpoint("api/v4/runners/verify")
	resp, err := conn.request(ctx, http.MethodPost, u, h, body, true, dl.HTTP)
	if err != nil {
		return 0, fmt.Errorf("POST %s: %v", u.Redacted(), err)
	}
	if resp.Status != http.StatusOK {
		return 0, &APIError{Status: resp.Status, Line: resp.Line}
	}
	var v struct {
		ID int64 `json:"id"`
	}
	if json.Unmarshal(resp.Body, &v) != nil || v.ID == 0 {
		return 0, fmt.Errorf("POST %s answered 200 with no runner id", u.Redacted())
	}
	return v.ID, nil
}
