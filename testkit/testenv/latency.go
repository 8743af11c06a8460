package testenv

import (
	"net"
	"sort"
	"sync"
	"testing"
	"time"
)

// LatencyProxy is a TCP proxy on loopback that delays every byte by a fixed
// one-way delay in each direction, so a client on this machine sees a server
// across the internet: the round trip time is twice the delay. It changes
// nothing for any other process (no tc, no netem): only connections to its
// own address are slowed.
//
// The TCP handshake is emulated too: a client's first bytes on a connection
// cannot leave before one round trip after connect, as on a real network
// where the SYN-ACK must come back first.
//
// It logs every chunk it forwards, which is what RoundTrips reads.
type LatencyProxy struct {
	Addr  string        // 127.0.0.1:port
	Delay time.Duration // one way

	ln       net.Listener
	upstream string
	mu       sync.Mutex
	conns    int
	events   []ProxyEvent
	wg       sync.WaitGroup
	closed   bool
	open     map[net.Conn]struct{}
}

// ProxyEvent is one chunk the proxy forwarded, or a connection it accepted.
type ProxyEvent struct {
	Conn int
	Kind EventKind
	// Read is when the proxy read the chunk (for Up, when the client sent
	// it; for Down, when the server answered); Sent is when the proxy wrote
	// it on (when it reached the server, or the client).
	Read, Sent time.Time
	Bytes      int
}

// EventKind says which way a chunk went.
type EventKind int

const (
	Connect EventKind = iota // the client connected (its SYN)
	Up                       // client to server
	Down                     // server to client
)

// StartLatencyProxy listens on a free loopback port and forwards to
// upstream (host:port) with delay each way; it stops with the test.
func StartLatencyProxy(t testing.TB, upstream string, delay time.Duration) *LatencyProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("testenv: latency proxy: %v", err)
	}
	p := &LatencyProxy{Addr: ln.Addr().String(), Delay: delay, ln: ln, upstream: upstream, open: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.Close)
	return p
}

// Close stops accepting, cuts every open connection and waits for the
// forwarding goroutines.
func (p *LatencyProxy) Close() {
	p.mu.Lock()
	p.closed = true
	for c := range p.open {
		c.Close()
	}
	p.mu.Unlock()
	p.ln.Close()
	p.wg.Wait()
}

// Events returns the log so far, in the order the proxy recorded it.
func (p *LatencyProxy) Events() []ProxyEvent {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]ProxyEvent(nil), p.events...)
}

// Reset forgets the log (between measured runs).
func (p *LatencyProxy) Reset() {
	p.mu.Lock()
	p.events = nil
	p.mu.Unlock()
}

func (p *LatencyProxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		now := time.Now()
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			c.Close()
			return
		}
		p.conns++
		id := p.conns
		p.events = append(p.events, ProxyEvent{Conn: id, Kind: Connect, Read: now, Sent: now})
		p.open[c] = struct{}{}
		p.mu.Unlock()
		p.wg.Add(1)
		go p.serve(id, c, now)
	}
}

func (p *LatencyProxy) serve(id int, client net.Conn, accepted time.Time) {
	defer p.wg.Done()
	defer p.forget(client)
	server, err := net.DialTimeout("tcp", p.upstream, 5*time.Second)
	if err != nil {
		client.Close()
		return
	}
	p.mu.Lock()
	p.open[server] = struct{}{}
	p.mu.Unlock()
	defer p.forget(server)
	var wg sync.WaitGroup
	wg.Add(2)
	// The client's bytes leave, at the earliest, one round trip after its
	// SYN: the handshake a real network makes it wait for.
	go func() { defer wg.Done(); p.pipe(id, Up, client, server, accepted.Add(2*p.Delay)) }()
	go func() { defer wg.Done(); p.pipe(id, Down, server, client, time.Time{}) }()
	wg.Wait()
}

func (p *LatencyProxy) forget(c net.Conn) {
	c.Close()
	p.mu.Lock()
	delete(p.open, c)
	p.mu.Unlock()
}

type chunk struct {
	data []byte
	read time.Time
}

// pipe copies src to dst, each chunk delayed to its read time (or
// notBefore, when later) plus the one-way delay. A reader goroutine keeps
// reading while the writer waits, so the delay is latency, never a
// bandwidth limit.
func (p *LatencyProxy) pipe(id int, kind EventKind, src, dst net.Conn, notBefore time.Time) {
	q := make(chan chunk, 4096)
	go func() {
		defer close(q)
		for {
			buf := make([]byte, 64<<10)
			n, err := src.Read(buf)
			if n > 0 {
				q <- chunk{buf[:n], time.Now()}
			}
			if err != nil {
				return
			}
		}
	}()
	for c := range q {
		at := c.read
		if at.Before(notBefore) {
			at = notBefore
		}
		time.Sleep(time.Until(at.Add(p.Delay)))
		if _, err := dst.Write(c.data); err != nil {
			src.Close() // ends the reader
			break
		}
		p.mu.Lock()
		p.events = append(p.events, ProxyEvent{Conn: id, Kind: kind, Read: c.read, Sent: time.Now(), Bytes: len(c.data)})
		p.mu.Unlock()
	}
	// The other side learns of the end after the same delay.
	time.Sleep(p.Delay)
	if tc, ok := dst.(*net.TCPConn); ok {
		tc.CloseWrite()
	} else {
		dst.Close()
	}
	for range q { // what is left, so the reader goroutine ends
	}
}

// RoundTrips is the longest chain of round trips in the log: how many
// times, one after another, the client had to wait for an answer. A
// connection's SYN is one (its SYN-ACK comes back a round trip later); a
// client chunk is one more than the deepest answer it was sent after, on
// any connection; an answer is as deep as the deepest client chunk the
// server had received on its connection when it sent it. Client chunks that
// get no answer (an ACK of settings) end no chain, and a closing alert
// deepens no answer: the server's own close_notify, sent back when it reads
// the client's, is no answer the client waits for (it arrives, or not, as
// the process exits).
//
// On loopback the server and the client take a few milliseconds; with a
// delay well above that, a chunk sent after an answer arrived is a chunk
// that waited for it.
func RoundTrips(events []ProxyEvent, delay time.Duration) int {
	// closingAlertBytes is a TLS 1.3 alert record as it travels: a 5-byte
	// header, the 2-byte alert and its 1-byte inner type, a 16-byte AEAD
	// tag. No request is that small: an HTTP/2 frame header alone is 9
	// bytes (a SETTINGS ACK's record is 31).
	const closingAlertBytes = 5 + 2 + 1 + 16
	type answer struct {
		at    time.Time
		depth int
	}
	var answers []answer // deliveries to the client, in the order made
	deepestBefore := func(t time.Time) int {
		d := 0
		for _, a := range answers {
			if !a.at.After(t) && a.depth > d {
				d = a.depth
			}
		}
		return d
	}
	type upChunk struct {
		sent  time.Time
		depth int
	}
	ups := map[int][]upChunk{}
	// Process in the order things happened: a chunk's depth needs every
	// answer delivered before it was read.
	type ev struct {
		at time.Time
		e  ProxyEvent
	}
	var evs []ev
	for _, e := range events {
		at := e.Read
		if e.Kind == Down {
			at = e.Sent // it counts from when the client had it
		}
		evs = append(evs, ev{at, e})
	}
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].at.Before(evs[j].at) })
	best, syn := 0, map[int]int{}
	for _, x := range evs {
		e := x.e
		switch e.Kind {
		case Connect:
			syn[e.Conn] = 1 + deepestBefore(e.Read)
		case Up:
			if e.Bytes == closingAlertBytes {
				continue
			}
			// The first bytes waited for the SYN-ACK, which the proxy's
			// hold emulates rather than delivers.
			d := max(1+deepestBefore(e.Read), 1+syn[e.Conn])
			ups[e.Conn] = append(ups[e.Conn], upChunk{e.Sent, d})
		case Down:
			d := 0
			for _, u := range ups[e.Conn] {
				if !u.sent.After(e.Read) && u.depth > d {
					d = u.depth
				}
			}
			answers = append(answers, answer{e.Sent, d})
			best = max(best, d)
		}
	}
	return best
}
