package kubefacts

import (
	"net/http"
	"net/http/httptrace"
	"sync"
	"sync/atomic"
)

// oneConnection holds every request of a target until the first one has a
// connection. Left alone, Go's transport dials one connection for each
// request that finds none open: it cannot know before ALPN that the server
// speaks HTTP/2 and that one connection would carry them all. doctor sends
// its reads at once, so a run opened seventeen connections to one
// apiserver, each a TCP and a TLS handshake with a client certificate:
// 50 ms of CPU on loopback, and through a front across the internet as many
// handshakes as requests. Held for the first connection's handshake, the
// others leave on it the moment it is up, which costs them no round trip.
func oneConnection(rt http.RoundTripper) http.RoundTripper {
	f := &firstConn{rt: rt, up: make(chan struct{})}
	f.release = sync.OnceFunc(func() { close(f.up) })
	return f
}

type firstConn struct {
	rt      http.RoundTripper
	leader  atomic.Bool
	up      chan struct{} // closed when the first request has a connection, or gave up
	release func()
}

func (f *firstConn) RoundTrip(r *http.Request) (*http.Response, error) {
	if f.leader.CompareAndSwap(false, true) {
		trace := &httptrace.ClientTrace{GotConn: func(httptrace.GotConnInfo) { f.release() }}
		resp, err := f.rt.RoundTrip(r.WithContext(httptrace.WithClientTrace(r.Context(), trace)))
		f.release() // no connection (refused, a deadline): the others try their own
		return resp, err
	}
	select {
	case <-f.up:
	case <-r.Context().Done():
		return nil, r.Context().Err()
	}
	return f.rt.RoundTrip(r)
}

// WrappedRoundTripper is the transport underneath, as client-go's wrappers
// expose theirs: boundBodies finds the *http.Transport through it.
func (f *firstConn) WrappedRoundTripper() http.RoundTripper { return f.rt }
