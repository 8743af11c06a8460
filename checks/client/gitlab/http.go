package gitlab

import (
	"encoding/json"

	"github.com/socialwebcomputer/doctor/checks/client/kube/keep"
	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/internal/redact"

	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Bounds on what doctor reads from a GitLab. The API answers doctor asks for
// are a few hundred bytes; anything near these is not GitLab.
const (
	MaxBody   = 1 << 20  // body bytes read; more is reported, never read
	maxHeader = 64 << 10 // status line and headers
)

// ClockKind is the kind under which GitLab's Date headers are recorded
// (hostio.Env.SawDate), keyed by Target.Origin.
const ClockKind = "GitLab"

// Response is an answer with its body read up to MaxBody.
type Response struct {
	Status    int
	Line      string // "401 Unauthorized"
	Header    http.Header
	Body      []byte
	Truncated bool // the body was longer than MaxBody; the rest was not read
}

// MarshalJSON keeps the body as text, so a bundle's reader can read it
// and the bundle writer redact it.
func (r Response) MarshalJSON() ([]byte, error) {
	type plain Response
	return json.Marshal(struct {
		plain
		Body string
	}{plain(r), string(r.Body)})
}

func (r *Response) UnmarshalJSON(b []byte) error {
	type plain Response
	var v struct {
		plain
		Body string
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*r = Response(v.plain)
	r.Body = []byte(v.Body)
	return nil
}

// Request is one HTTP/1.1 exchange over c, bounded by deadline and by
// size: the whole read, headers included, stops at maxHeader+MaxBody+1 bytes
// whatever the server sends. The connection is closed afterwards (one
// request per connection keeps every stage's deadline its own).
func (c *Conn) Request(ctx context.Context, method string, u *url.URL, header http.Header, body []byte, readBody bool, d time.Duration) (*Response, error) {
	if c.env == nil {
		return c.request(ctx, method, u, header, body, readBody, d)
	}
	// A bundle keeps the answer; the key holds the body with its token
	// replaced by the stand-in the bundle's config.toml has, so analyze
	// finds it.
	sum := sha256.Sum256(redact.StandInJSON(body))
	key := fmt.Sprintf("%s %s %s %s %x", c.Addr, method, u.Redacted(), strconv.FormatBool(readBody), sum[:6])
	sent := time.Now()
	resp, err := hostio.Probe(c.env, "gitlab-http", key, func() (*Response, error) {
		r, err := c.request(ctx, method, u, header, body, readBody, d)
		sec := requestSecrets(header, body)
		return r.kept(sec), sec.Err(err)
	})
	if resp != nil {
		c.env.SawDate(ClockKind, c.origin, resp.Header, sent)
	}
	return resp, err
}

// keptHeaders are the answer's headers a check reads: Date (clock-skew)
// and Location (gitlab-reachability, for a redirect).
var keptHeaders = []string{"Date", "Location"}

// kept is what the checks read of an answer, and all a bundle records:
// the status, the kept headers and, of a body, GitLab's version (all
// gitlab-reachability reads of /api/v4/version), with the request's own
// credential replaced wherever the server echoed it. A body that is not
// the version document keeps nothing: the check reads it as none.
func (r *Response) kept(sec *keep.Secrets) *Response {
	if r == nil {
		return nil
	}
	out := &Response{Status: r.Status, Line: sec.ReplaceString(r.Line), Header: http.Header{}, Truncated: r.Truncated}
	for _, h := range keptHeaders {
		for _, v := range r.Header.Values(h) {
			out.Header.Add(h, sec.ReplaceString(v))
		}
	}
	var v struct {
		Version string `json:"version"`
	}
	if !r.Truncated && json.Unmarshal(r.Body, &v) == nil && v.Version != "" {
		out.Body, _ = json.Marshal(struct {
			Version string `json:"version"`
		}{sec.ReplaceString(v.Version)})
	}
	return out
}

// requestSecrets are the credentials a request presents: its header values
// (RUNNER-TOKEN, PRIVATE-TOKEN, Authorization) and the strings of its JSON
// body ({"token": ...}).
func requestSecrets(header http.Header, body []byte) *keep.Secrets {
	var vals []string
	for k, vs := range header {
		switch http.CanonicalHeaderKey(k) {
		case "Content-Type", "Accept", "User-Agent":
			continue
		}
		vals = append(vals, vs...)
	}
	var fields map[string]any
	if json.Unmarshal(body, &fields) == nil {
		for _, v := range fields {
			if s, ok := v.(string); ok {
				vals = append(vals, s)
			}
		}
	}
	return keep.NewSecrets(vals...)
}

// bound sets the connection's deadline to d from now, or ctx's deadline
// when that is sooner, and ends it at once when ctx is cancelled: a
// cancelled check must not wait out the deadline. The returned func stops
// watching ctx.
func (c *Conn) bound(ctx context.Context, d time.Duration) (stop func() bool) {
	dl := time.Now().Add(d)
	if cd, ok := ctx.Deadline(); ok && cd.Before(dl) {
		dl = cd
	}
	_ = c.SetDeadline(dl)
	return context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Unix(1, 0)) })
}

func (c *Conn) request(ctx context.Context, method string, u *url.URL, header http.Header, body []byte, readBody bool, d time.Duration) (*Response, error) {
	defer c.Close()
	defer c.bound(ctx, d)()

	req, err := http.NewRequest(method, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header = header.Clone()
	if req.Header == nil {
		req.Header = http.Header{}
	}
	req.Header.Set("User-Agent", "doctor (gitlab-runner diagnosis)")
	req.Close = true
	if err := req.Write(c.Conn); err != nil {
		return nil, timeoutWords(err, d)
	}
	br := bufio.NewReader(io.LimitReader(c.Conn, maxHeader+MaxBody+1))
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		return nil, timeoutWords(err, d)
	}
	defer resp.Body.Close()
	r := &Response{Status: resp.StatusCode, Line: resp.Status, Header: resp.Header}
	if !readBody {
		return r, nil
	}
	r.Body, err = io.ReadAll(io.LimitReader(resp.Body, MaxBody+1))
	if len(r.Body) > MaxBody {
		r.Body, r.Truncated = r.Body[:MaxBody], true
		return r, nil
	}
	if err != nil {
		return r, timeoutWords(err, d)
	}
	return r, nil
}

func timeoutWords(err error, d time.Duration) error {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return errors.New("the connection closed before a complete HTTP answer")
	}
	return errors.New(describeNetErr(err, d))
}

// BodyTooLarge is the error text for an answer over MaxBody.
func BodyTooLarge() string {
	return fmt.Sprintf("the body is longer than %d KiB; doctor read that much and stopped", MaxBody>>10)
}
