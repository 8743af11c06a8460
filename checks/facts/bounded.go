package facts

import (
	"fmt"
	"io"
	"net/http"
	"sync/atomic"

	"k8s.io/klog/v2"
)

// Every API byte comes through one bounded door: a response body larger
// than MaxResponseBytes, or a run whose bodies together pass MaxRunBytes,
// ends in an error instead of memory. client-go reads whole bodies; a
// hostile or broken server (a list that never ends, a 1 GB answer) must not
// take the host with it.
const (
	MaxResponseBytes = 32 << 20
	MaxRunBytes      = 256 << 20
)

// runBytes is what every API client of this process has read.
var runBytes atomic.Int64

// ErrBodyTooLarge is a response past a bound.
type ErrBodyTooLarge struct {
	URL   string
	Limit int64
	Run   bool // the run's budget, not one response's
}

func (e *ErrBodyTooLarge) Error() string {
	if e.Run {
		return fmt.Sprintf("%s: the API answers of this run passed %d MiB; doctor stopped reading", e.URL, e.Limit>>20)
	}
	return fmt.Sprintf("%s: response body larger than %d MiB; doctor stopped reading (a broken or hostile server)", e.URL, e.Limit>>20)
}

// boundBodies wraps a transport so each response body is counted against
// both bounds as it is read.
func boundBodies(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(r)
		if err != nil || resp.Body == nil {
			return resp, err
		}
		if resp.ContentLength > MaxResponseBytes {
			resp.Body.Close()
			return nil, &ErrBodyTooLarge{URL: r.URL.Redacted(), Limit: MaxResponseBytes}
		}
		resp.Body = &boundedBody{rc: resp.Body, url: r.URL.Redacted()}
		return resp, nil
	})
}

type boundedBody struct {
	rc  io.ReadCloser
	url string
	n   int64
}

func (b *boundedBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	b.n += int64(n)
	total := runBytes.Add(int64(n))
	switch {
	case b.n > MaxResponseBytes:
		return n, &ErrBodyTooLarge{URL: b.url, Limit: MaxResponseBytes}
	case total > MaxRunBytes:
		return n, &ErrBodyTooLarge{URL: b.url, Limit: MaxRunBytes, Run: true}
	}
	return n, err
}

func (b *boundedBody) Close() error { return b.rc.Close() }

func init() {
	// client-go logs through klog to stderr (a body it could not read, a
	// retry), with URLs and server text in it: doctor reports what it learnt
	// as findings, and its stderr is pasted into tickets.
	klog.LogToStderr(false)
	klog.SetOutput(io.Discard)
}
