package hostio_test

import (
	"encoding/json"
	"errors"
	"io/fs"
	"syscall"
	"testing"

	"github.com/socialwebcomputer/doctor/internal/hostio"
)

type result struct {
	Name string
	Err  error
}

// unencodable is an error encoding/json cannot encode (a func field).
type unencodable struct{ F func() }

func (unencodable) Error() string { return "odd" }

// A probe result's error survives the tape: its text, its errno for
// errors.Is, a timeout for IsTimeout; no error stays nil; an error that
// encoding/json cannot encode is no obstacle; the other fields are kept.
func TestErrFieldRoundTrip(t *testing.T) {
	for _, in := range []result{
		{Name: "refused", Err: &fs.PathError{Op: "dial", Path: "x", Err: syscall.ECONNREFUSED}},
		{Name: "none"},
		{Name: "odd", Err: unencodable{F: func() {}}},
	} {
		b, err := json.Marshal(hostio.Recorded[result]{Value: in})
		if err != nil {
			t.Fatalf("%s: %v", in.Name, err)
		}
		var rec hostio.Recorded[result]
		if err := json.Unmarshal(b, &rec); err != nil {
			t.Fatalf("%s: %v (%s)", in.Name, err, b)
		}
		out := rec.Value
		switch {
		case out.Name != in.Name:
			t.Errorf("name %q, want %q", out.Name, in.Name)
		case in.Err == nil && out.Err != nil:
			t.Errorf("%s: error %v from none", in.Name, out.Err)
		case in.Err != nil && (out.Err == nil || out.Err.Error() != in.Err.Error()):
			t.Errorf("%s: error %v, want %v", in.Name, out.Err, in.Err)
		}
	}
	var out hostio.Recorded[*result]
	b, _ := json.Marshal(hostio.Recorded[*result]{Value: &result{Err: &fs.PathError{Op: "dial", Path: "x", Err: syscall.ECONNREFUSED}}})
	_ = json.Unmarshal(b, &out)
	if out.Value == nil || !errors.Is(out.Value.Err, syscall.ECONNREFUSED) {
		t.Errorf("errno lost through a pointer: %+v", out.Value)
	}
	// A nil pointer is null, and replays as nil.
	b, _ = json.Marshal(hostio.Recorded[*result]{})
	if string(b) != "null" || json.Unmarshal(b, &out) != nil || out.Value != nil {
		t.Errorf("nil: %s, replayed %+v", b, out.Value)
	}
}

// ProbeErr records a result's own error on a tape, and replays it with
// the same text and errno, the other fields as they were.
func TestProbeErrReplaysTheResultsError(t *testing.T) {
	live := &hostio.Env{Tape: hostio.NewTape()}
	in := result{Name: "dial", Err: &fs.PathError{Op: "dial", Path: "x", Err: syscall.ECONNREFUSED}}
	if got, _ := hostio.ProbeErr(live, "test", "k", func() (result, error) { return in, nil }); got != in {
		t.Fatalf("live: %+v, want what fn returned", got)
	}
	raw, err := json.Marshal(live.Tape)
	if err != nil {
		t.Fatal(err)
	}
	tape := hostio.NewTape()
	if err := json.Unmarshal(raw, tape); err != nil {
		t.Fatal(err)
	}
	tape.Replay = true
	got, err := hostio.ProbeErr(&hostio.Env{Tape: tape}, "test", "k", func() (result, error) {
		t.Error("replay ran the probe")
		return result{}, nil
	})
	if err != nil || got.Name != "dial" || got.Err == nil || got.Err.Error() != in.Err.Error() || !errors.Is(got.Err, syscall.ECONNREFUSED) {
		t.Errorf("replayed %+v, %v; want %+v", got, err, in)
	}
}
