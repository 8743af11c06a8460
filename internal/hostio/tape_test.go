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

func (r result) MarshalJSON() ([]byte, error) {
	type plain result
	return hostio.MarshalErrField(plain(r))
}

func (r *result) UnmarshalJSON(b []byte) error {
	type plain result
	return hostio.UnmarshalErrField(b, (*plain)(r))
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
		b, err := json.Marshal(in)
		if err != nil {
			t.Fatalf("%s: %v", in.Name, err)
		}
		var out result
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatalf("%s: %v (%s)", in.Name, err, b)
		}
		switch {
		case out.Name != in.Name:
			t.Errorf("name %q, want %q", out.Name, in.Name)
		case in.Err == nil && out.Err != nil:
			t.Errorf("%s: error %v from none", in.Name, out.Err)
		case in.Err != nil && (out.Err == nil || out.Err.Error() != in.Err.Error()):
			t.Errorf("%s: error %v, want %v", in.Name, out.Err, in.Err)
		}
	}
	var out result
	b, _ := json.Marshal(result{Err: &fs.PathError{Op: "dial", Path: "x", Err: syscall.ECONNREFUSED}})
	_ = json.Unmarshal(b, &out)
	if !errors.Is(out.Err, syscall.ECONNREFUSED) {
		t.Errorf("errno lost: %v", out.Err)
	}
}
