package kubefacts

import (
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
)

// Every API byte comes through one bounded door: a response body larger
// than MaxResponseBytes, bodies being read at once past MaxInFlightBytes, or
// a run whose bodies together pass MaxRunBytes, end in an error instead of
// memory. client-go reads whole bodies; a hostile or broken server (a list
// that never ends, a 1 GB answer, the same to every check at once) must not
// take the host with it.
//
// A list page is at most cluster.PageSize (1,000) objects: 16 MiB is 16
// KiB an object, more than a pod with its managedFields (a page past it is
// asked again in quarters). The checks list in
// parallel, and io.ReadAll holds up to twice what it read while it grows,
// so the in-flight bound is what keeps a run under its 150 MiB (measured
// by cmd/doctor/e2e's TestHostileServersAreBoundedInTimeAndMemory).
const (
	MaxResponseBytes = 16 << 20
	MaxInFlightBytes = 24 << 20
	MaxRunBytes      = 256 << 20
	// MaxErrorBodyBytes is what doctor reads of an error answer (4xx, 5xx):
	// an apiserver's Status is a few hundred bytes. The rest is cut
	// silently, so client-go still reports the status (a 401 stays a 401)
	// instead of a failed read.
	MaxErrorBodyBytes = 64 << 10
	// MaxHeaderBytes bounds a response's header block: an apiserver's is
	// under a KiB; net/http's default allows 10 MB.
	MaxHeaderBytes = 64 << 10
)

// smallBody is what a body may read past the in-flight bound: the bound is
// for the big readers, and a self-review's few hundred bytes, read while a
// hostile server's endless lists fill it, must not fail api-auth (it did,
// one run in many, in TestHostileServersAreBoundedInTimeAndMemory's
// endless-body case). Each such body overshoots by 64 KiB at most.
const smallBody = 64 << 10

// runBytes is what every API client of this process has read; inFlight
// what the bodies not yet closed have read.
var runBytes, inFlight atomic.Int64

// ErrBodyTooLarge is a response past a bound.
type ErrBodyTooLarge struct {
	URL   string
	Limit int64
	Run   bool // the run's budget, not one response's
	// InFlight: the bodies being read at once passed MaxInFlightBytes.
	InFlight bool
}

func (e *ErrBodyTooLarge) Error() string {
	switch {
	case e.Run:
		return fmt.Sprintf("%s: the API answers of this run passed %d MiB; doctor stopped reading", e.URL, e.Limit>>20)
	case e.InFlight:
		return fmt.Sprintf("%s: the API answers being read at once passed %d MiB; doctor stopped reading (a broken or hostile server)", e.URL, e.Limit>>20)
	}
	return fmt.Sprintf("%s: response body larger than %d MiB; doctor stopped reading (a broken or hostile server)", e.URL, e.Limit>>20)
}

// boundBodies wraps a transport so each response body is counted against
// both bounds as it is read.
// rt is the transport client-go made: the *http.Transport under it gets
// the header bound too.
func boundBodies(rt http.RoundTripper) http.RoundTripper {
	if t := httpTransport(rt); t != nil && t != http.DefaultTransport {
		t.MaxResponseHeaderBytes = MaxHeaderBytes
	}
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(r)
		if err != nil || resp.Body == nil {
			return resp, err
		}
		if resp.StatusCode >= 400 {
			// Only the first bytes, and no error: the status says it.
			resp.Body = &boundedBody{rc: resp.Body, url: r.URL.Redacted(), cut: MaxErrorBodyBytes}
			return resp, nil
		}
		if resp.ContentLength > MaxResponseBytes {
			resp.Body.Close()
			return nil, &ErrBodyTooLarge{URL: r.URL.Redacted(), Limit: MaxResponseBytes}
		}
		resp.Body = &boundedBody{rc: resp.Body, url: r.URL.Redacted()}
		return resp, nil
	})
}

// httpTransport is the *http.Transport under client-go's wrappers (its TLS
// cache wraps it in a trackedTransport), or nil.
func httpTransport(rt http.RoundTripper) *http.Transport {
	for range 8 {
		switch t := rt.(type) {
		case *http.Transport:
			return t
		case interface{ WrappedRoundTripper() http.RoundTripper }:
			rt = t.WrappedRoundTripper()
		default:
			return nil
		}
	}
	return nil
}

type boundedBody struct {
	rc  io.ReadCloser
	url string
	n   int64
	// cut > 0 ends the body with EOF after cut bytes.
	cut    int64
	closed atomic.Bool
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.cut > 0 {
		if b.n >= b.cut {
			return 0, io.EOF
		}
		p = p[:min(int64(len(p)), b.cut-b.n)]
	}
	n, err := b.rc.Read(p)
	b.n += int64(n)
	total := runBytes.Add(int64(n))
	now := inFlight.Add(int64(n))
	switch {
	case b.n > MaxResponseBytes:
		return n, &ErrBodyTooLarge{URL: b.url, Limit: MaxResponseBytes}
	case now > MaxInFlightBytes && b.n > smallBody:
		return n, &ErrBodyTooLarge{URL: b.url, Limit: MaxInFlightBytes, InFlight: true}
	case total > MaxRunBytes:
		return n, &ErrBodyTooLarge{URL: b.url, Limit: MaxRunBytes, Run: true}
	}
	return n, err
}

// Close gives back what the body held to the in-flight bound, once.
func (b *boundedBody) Close() error {
	if !b.closed.Swap(true) {
		inFlight.Add(-b.n)
	}
	return b.rc.Close()
}
