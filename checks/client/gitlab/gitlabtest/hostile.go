package gitlabtest

import (
	"crypto/rand"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/socialwebcomputer/doctor/testkit/testenv"
)

// Silent accepts connections and never writes a byte: every read of the
// client's must end at its own deadline.
func Silent(t testing.TB) string {
	return listen(t, func(c net.Conn) {
		_, _ = io.Copy(io.Discard, c) // read the ClientHello and all else; answer nothing
	})
}

// Garbage answers every connection with random bytes, which no TLS
// handshake or HTTP parser accepts.
func Garbage(t testing.TB) string {
	return listen(t, func(c net.Conn) {
		junk := make([]byte, 4096)
		_, _ = rand.Read(junk)
		junk[0] = 0xff // never a TLS record type, never an HTTP status line
		_, _ = c.Write(junk)
		_, _ = c.Read(make([]byte, 1))
	})
}

// listen serves each connection with fn on 127.0.0.1 until the test ends:
// the hostile servers' listener (testenv.ServeConns).
func listen(t testing.TB, fn func(net.Conn)) string {
	return testenv.ServeConns(t, "tcp", "127.0.0.1:0", fn)
}

// Endless is a /api/v4/version handler answering 200 with a body of Size
// bytes, streamed from one small buffer so the server allocates nothing per
// byte. Written counts what the client let it write before it stopped.
type Endless struct {
	Size    int64
	Written atomic.Int64
}

func (e *Endless) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.FormatInt(e.Size, 10))
	w.WriteHeader(http.StatusOK)
	chunk := make([]byte, 32<<10)
	for left := e.Size; left > 0; {
		n := min(int64(len(chunk)), left)
		m, err := w.Write(chunk[:n])
		e.Written.Add(int64(m))
		if err != nil {
			return
		}
		left -= int64(m)
	}
}
