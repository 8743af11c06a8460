package kubefacts

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// oneConnWorld is a real HTTP/2 TLS server on loopback and a transport to
// it whose dial takes dialDelay, so requests sent meanwhile are held.
func oneConnWorld(t *testing.T, dialDelay time.Duration) (rt http.RoundTripper, url string, conns *atomic.Int64) {
	t.Helper()
	conns = &atomic.Int64{}
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(r.Proto))
	}))
	s.EnableHTTP2 = true
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	s.StartTLS()
	t.Cleanup(s.Close)
	tr := s.Client().Transport.(*http.Transport).Clone()
	tr.ForceAttemptHTTP2 = true
	var d net.Dialer
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		time.Sleep(dialDelay)
		return d.DialContext(ctx, network, addr)
	}
	t.Cleanup(tr.CloseIdleConnections)
	return oneConnection(tr), s.URL, conns
}

// TestOneConnectionCarriesEveryRead: requests sent at once share the
// first one's connection, over HTTP/2.
func TestOneConnectionCarriesEveryRead(t *testing.T) {
	rt, url, conns := oneConnWorld(t, 20*time.Millisecond)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			req, _ := http.NewRequest("GET", url, nil)
			resp, err := rt.RoundTrip(req)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			if resp.Proto != "HTTP/2.0" {
				t.Errorf("proto %s, want HTTP/2.0", resp.Proto)
			}
		})
	}
	wg.Wait()
	if n := conns.Load(); n != 1 {
		t.Errorf("16 requests opened %d connections, want 1", n)
	}
}
