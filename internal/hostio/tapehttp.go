package hostio

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// HTTPRecord is one answer an HTTP client got: API responses, which the
// bundle keeps as the API objects the checks looked at.
type HTTPRecord struct {
	Status  int         `json:"status"`
	Header  http.Header `json:"header,omitempty"`
	Body    string      `json:"body,omitempty"`    // JSON, as text a reader of the bundle can read
	Err     *ErrRecord  `json:"err,omitempty"`     // the request failed: no answer
	BodyErr *ErrRecord  `json:"bodyErr,omitempty"` // the body broke off after Body
	// Pending is a request that had not been answered when the run ended
	// (a server that never answers, past the check's deadline): replay
	// waits for the request's own deadline, as the live run did.
	Pending bool `json:"pending,omitempty"`
	// Canceled is a request its caller gave up on (its context ended
	// first): replay answers with Err only when the replayed caller's
	// context ends too, so its deadline decides, as it did live.
	Canceled bool `json:"canceled,omitempty"`
}

// keptHeaders are the response headers a check may read; the rest (cookies,
// audit IDs, anything a proxy adds) stays out of the bundle.
var keptHeaders = []string{"Content-Type", "Date", "Server", "Www-Authenticate", "Retry-After", "Warning"}

// httpKey names a request without its credentials: method, URL without
// userinfo, and a hash of the body (access reviews differ only there).
func httpKey(who string, r *http.Request, body []byte) string {
	u := *r.URL
	u.User = nil
	sum := sha256.Sum256(body)
	return who + " " + r.Method + " " + u.String() + " " + hex.EncodeToString(sum[:6])
}

// RoundTripper records what rt answers, or on replay answers from the
// tape without sending anything. Without a tape it is rt. who names the
// credential the client presents, in a form the bundle's redaction keeps
// (a certificate's subject and serial, a token's stand-in): two runners
// asking the same URL as different users get different answers.
func (e *Env) RoundTripper(rt http.RoundTripper, who string) http.RoundTripper {
	t := e.Tape
	if t == nil {
		return rt
	}
	return tapeTransport{t, rt, who}
}

type tapeTransport struct {
	t   *Tape
	rt  http.RoundTripper
	who string
}

func (tt tapeTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	var body []byte
	if r.Body != nil && r.Body != http.NoBody {
		b, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		r.Body.Close()
		if err != nil {
			return nil, err
		}
		body = b
		r.Body = io.NopCloser(bytes.NewReader(b))
	}
	key := httpKey(tt.who, r, body)
	if tt.t.Replay {
		return tt.t.replayHTTP(r, key)
	}
	// Recorded before it is sent, so one that never returns is still on
	// the tape, as pending.
	rec := &HTTPRecord{Pending: true}
	tt.t.mu.Lock()
	tt.t.HTTP[key] = append(tt.t.HTTP[key], rec)
	tt.t.mu.Unlock()
	resp, err := tt.rt.RoundTrip(r)
	// A request that ended because its caller's deadline did (the
	// context, or http.Client's Timeout, which cancels it as
	// "request canceled") is replayed as waiting for that deadline.
	canceled := err != nil && (r.Context().Err() != nil || IsTimeout(err) || strings.Contains(err.Error(), "request canceled"))
	done := &HTTPRecord{Err: RecordErr(err), Canceled: canceled}
	if err == nil {
		done.Status = resp.StatusCode
		done.Header = http.Header{}
		for _, h := range keptHeaders {
			if v := resp.Header.Values(h); len(v) > 0 {
				done.Header[h] = v
			}
		}
		// Upgrades and watches stream: the bundle keeps their status only.
		if resp.StatusCode != http.StatusSwitchingProtocols && !strings.Contains(r.URL.RawQuery, "watch=true") {
			b, berr := io.ReadAll(resp.Body)
			resp.Body.Close()
			done.Body, done.BodyErr = string(b), RecordErr(berr)
			resp.Body = &replayBody{bytes.NewReader(b), berr}
		}
	}
	tt.t.mu.Lock()
	*rec = *done
	tt.t.mu.Unlock()
	return resp, err
}

// replayHTTP answers a request with the recorded answers of its key in
// order, the last one again when the live run asked fewer times.
func (t *Tape) replayHTTP(r *http.Request, key string) (*http.Response, error) {
	t.mu.Lock()
	recs := t.HTTP[key]
	if t.next == nil {
		t.next = map[string]int{}
	}
	i := t.next[key]
	if i < len(recs)-1 {
		t.next[key] = i + 1
	}
	t.mu.Unlock()
	if len(recs) == 0 {
		return nil, fmt.Errorf("%s %s: not recorded in the bundle", r.Method, r.URL.Redacted())
	}
	rec := recs[i]
	if rec.Pending || rec.Canceled {
		<-r.Context().Done()
		if rec.Canceled {
			return nil, rec.Err.Err()
		}
		return nil, r.Context().Err()
	}
	if rec.Err != nil {
		return nil, rec.Err.Err()
	}
	h := rec.Header.Clone()
	if h == nil {
		h = http.Header{}
	}
	return &http.Response{
		Status: fmt.Sprintf("%d %s", rec.Status, http.StatusText(rec.Status)), StatusCode: rec.Status,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Header: h, Request: r,
		// A reader of the recorded string itself: a copy of every body of
		// a large tape is what analyze's memory would go to.
		Body: &replayBody{strings.NewReader(rec.Body), rec.BodyErr.Err()}, ContentLength: int64(len(rec.Body)),
	}, nil
}

// replayBody gives the recorded body, then the error it broke off with.
type replayBody struct {
	r   io.Reader
	err error
}

func (b *replayBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err == io.EOF && b.err != nil {
		return n, b.err
	}
	return n, err
}

func (b *replayBody) Close() error { return nil }
