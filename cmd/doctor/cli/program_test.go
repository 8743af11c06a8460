package cli

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/socialwebcomputer/doctor/testkit/cmdtest"
)

// The verify line names doctor as the operator invoked it: the name alone
// when the doctor on PATH is this one (or it was found on PATH), the path
// it was run by otherwise (./doctor after the README's build), never go
// run's temporary binary.
func TestProgramName(t *testing.T) {
	dir := t.TempDir()
	here := filepath.Join(dir, "doctor")
	other := filepath.Join(dir, "other-doctor")
	for _, p := range []string{here, other} {
		cmdtest.NoErr(t, os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755))
	}
	self := func() (string, error) { return here, nil }
	onPath := func(p string) func(string) (string, error) {
		return func(string) (string, error) { return p, nil }
	}
	none := func(string) (string, error) { return "", errors.New("not found") }
	for _, tc := range []struct {
		arg0 string
		look func(string) (string, error)
		want string
	}{
		{"doctor", none, "doctor"},
		{"./doctor", none, "./doctor"},
		{"./doctor", onPath(other), "./doctor"},
		{here, onPath(here), "doctor"},
		{"/tmp/go-build1234/b001/exe/doctor", none, "doctor"},
		{"", none, "doctor"},
	} {
		if got := ProgramName(tc.arg0, tc.look, self); got != tc.want {
			t.Errorf("ProgramName(%q) = %q, want %q", tc.arg0, got, tc.want)
		}
	}
}
