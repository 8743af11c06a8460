package hostio

import (
	"fmt"
	"net/http"
	"sync"
	"time"
)

// ServerDate is the clock of a server as its last response's Date header
// gave it, beside this host's wall clock when the response arrived.
type ServerDate struct {
	Kind   string    // "apiserver", "GitLab"
	Server string    // the URL or origin asked
	Date   time.Time // the Date header (one-second resolution)
	Local  time.Time // this host's wall clock when the headers arrived
	// RTT is how long the request took: the server stamped Date somewhere
	// inside it, so the skew is only known to within RTT plus a second.
	RTT time.Duration
}

// Skew is how far the server's clock runs ahead of this host's (negative:
// behind).
func (d ServerDate) Skew() time.Duration { return d.Date.Sub(d.Local) }

// ServerClocks records the Date header of the responses doctor already
// receives, per server, so clock-skew compares clocks without a request of
// its own. The engine makes one per run (Env.Clocks).
type ServerClocks struct {
	mu    sync.Mutex
	seen  map[string]ServerDate // by Kind+" "+Server
	count map[string]int        // answers seen, by the same key
}

// SawDate records a response's Date header; a missing or unparsable one
// is ignored. The local time is the wall clock, not --now: the Date of a
// live server can only be compared with the clock TLS verification uses,
// and --now stands in for a clock the servers do not share.
func (e *Env) SawDate(kind, server string, h http.Header, sent time.Time) {
	if e == nil || e.Clocks == nil || h == nil {
		return
	}
	raw := h.Get("Date")
	if raw == "" {
		return
	}
	date, err := http.ParseTime(raw)
	if err != nil {
		return
	}
	e.Clocks.mu.Lock()
	defer e.Clocks.mu.Unlock()
	if e.Clocks.seen == nil {
		e.Clocks.seen, e.Clocks.count = map[string]ServerDate{}, map[string]int{}
	}
	id := kind + " " + server
	e.Clocks.count[id]++
	// A bundle keeps when each answer arrived: analyze compares the
	// server's Date with this host's clock as it was then.
	type arrival struct {
		Local time.Time
		RTT   time.Duration
	}
	a, _ := Probe(e, "clock", fmt.Sprintf("%s #%d", id, e.Clocks.count[id]), func() (arrival, error) {
		now := time.Now()
		return arrival{now, now.Sub(sent)}, nil
	})
	e.Clocks.seen[id] = ServerDate{Kind: kind, Server: server, Date: date, Local: a.Local, RTT: a.RTT}
}

// Date returns what was recorded of one server, and whether anything was.
func (c *ServerClocks) Date(kind, server string) (ServerDate, bool) {
	if c == nil {
		return ServerDate{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	d, ok := c.seen[kind+" "+server]
	return d, ok
}
