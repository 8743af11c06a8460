package gitlab

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"
)

// Bounds on what doctor reads from a GitLab. The API answers doctor asks for
// are a few hundred bytes; anything near these is not GitLab.
const (
	MaxBody   = 1 << 20  // body bytes read; more is reported, never read
	maxHeader = 64 << 10 // status line and headers
)

// ClockKind is the kind under which GitLab's Date headers are recorded
// (checks.Env.SawDate), keyed by Target.Origin.
const ClockKind = "GitLab"

// Response is an answer with its body read up to MaxBody.
type Response struct {
	Status    int
	Line      string // "401 Unauthorized"
	Header    http.Header
	Body      []byte
	Truncated bool // the body was longer than MaxBody; the rest was not read
}

// Request is one HTTP/1.1 exchange over c, bounded by deadline and by
// size: the whole read, headers included, stops at maxHeader+MaxBody+1 bytes
// whatever the server sends. The connection is closed afterwards (one
// request per connection keeps every stage's deadline its own).
func (c *Conn) Request(ctx context.Context, method string, u *url.URL, header http.Header, body []byte, readBody bool, d time.Duration) (*Response, error) {
	defer c.Close()
	dl := time.Now().Add(d)
	if cd, ok := ctx.Deadline(); ok && cd.Before(dl) {
		dl = cd
	}
	_ = c.SetDeadline(dl)
	// A cancelled check must not wait out the deadline.
	stop := context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Unix(1, 0)) })
	defer stop()

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
	sent := time.Now()
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		return nil, timeoutWords(err, d)
	}
	defer resp.Body.Close()
	c.env.SawDate(ClockKind, c.origin, resp.Header, sent)
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
