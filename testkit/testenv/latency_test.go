package testenv

import (
	"testing"
	"time"
)

// RoundTrips on a made-up log: a connection, a TLS flight, a wave of
// reads, a read that needs their answer, a closing chunk that gets no
// answer (it ends no chain), and on a second connection a closing alert the
// server answers with its own (it deepens nothing).
func TestRoundTripsCountsTheLongestChain(t *testing.T) {
	const d = 10 * time.Millisecond
	t0 := time.Unix(0, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	up := func(conn, read, sent int) ProxyEvent {
		return ProxyEvent{Conn: conn, Kind: Up, Read: at(read), Sent: at(sent)}
	}
	down := func(conn, read, sent int) ProxyEvent {
		return ProxyEvent{Conn: conn, Kind: Down, Read: at(read), Sent: at(sent)}
	}
	alert := func(conn, read, sent int) ProxyEvent {
		return ProxyEvent{Conn: conn, Kind: Up, Read: at(read), Sent: at(sent), Bytes: 24}
	}
	evs := []ProxyEvent{
		{Conn: 1, Kind: Connect, Read: at(0), Sent: at(0)},
		up(1, 1, 30),    // ClientHello, held for the SYN-ACK: 2
		down(1, 31, 41), // ServerHello: 2
		up(1, 42, 52),   // Finished and the reads: 3
		up(1, 43, 53),   // another read of the same wave: 3
		down(1, 54, 64), // their answers: 3
		up(1, 66, 76),   // the read that needed them: 4
		down(1, 77, 87), // its answer: 4
		up(1, 90, 100),  // a closing alert, unanswered
		{Conn: 2, Kind: Connect, Read: at(5), Sent: at(5)},
		up(2, 6, 30),     // a second connection's handshake
		down(2, 31, 41),  // 2
		up(2, 42, 52),    // its request: 3
		down(2, 53, 63),  // its answer: 3
		alert(2, 88, 98), // its close_notify, after the deepest answer (4)
		down(2, 99, 109), // the server's close_notify back: no 5
	}
	if n := RoundTrips(evs, d); n != 4 {
		t.Errorf("RoundTrips = %d, want 4", n)
	}
	// The same reads sent without waiting for the answers: 3.
	evs[6], evs[7] = up(1, 44, 54), down(1, 55, 65)
	if n := RoundTrips(evs, d); n != 3 {
		t.Errorf("RoundTrips with every read at once = %d, want 3", n)
	}
}
