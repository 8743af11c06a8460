package hostfacts

import (
	"io/fs"
	"testing"
)

// Permits applies the kernel's order: owner bits if the uid owns the file,
// else group bits if any of its groups matches, else other bits; no
// fallthrough from a denying class to a more permissive one.
func TestPermits(t *testing.T) {
	runner := &RunAs{UIDKnown: true, UID: 999, GID: 999, Groups: []int{4, 1001}}
	for _, tc := range []struct {
		name         string
		mode         fs.FileMode
		owner, group int
		want         bool
	}{
		{"owner 0600", 0o600, 999, 0, true},
		{"owner 0060 denies the owner", 0o060, 999, 999, false},
		{"primary group 0640", 0o640, 0, 999, true},
		{"supplementary group 0640", 0o640, 0, 1001, true},
		{"group 0604 denies the group", 0o604, 0, 999, false},
		{"other 0604", 0o604, 0, 0, true},
		{"root's 0600", 0o600, 0, 0, false},
	} {
		if got := Permits(tc.mode, tc.owner, tc.group, runner, 4); got != tc.want {
			t.Errorf("%s: permits = %v, want %v", tc.name, got, tc.want)
		}
	}
	if Permits(0o600|fs.ModeDir, 999, 999, runner, Execute) {
		t.Error("a 0600 directory lets its owner traverse it")
	}
}

// Root reads anything, but executes only a file with an x bit: the
// kernel's CAP_DAC_OVERRIDE grants exec on a regular file only then.
func TestPermitsRoot(t *testing.T) {
	root := &RunAs{UIDKnown: true, UID: 0, GID: 0}
	if !Permits(0o400, 1001, 1001, root, Read) {
		t.Error("root cannot read another user's 0400 file")
	}
	if Permits(0o644, 0, 0, root, Execute) {
		t.Error("root may execute a file without an x bit")
	}
	if !Permits(0o744, 1001, 1001, root, Execute) || !Permits(0o700|fs.ModeDir, 1001, 1001, root, Execute) {
		t.Error("root cannot execute a 0744 file or search a 0700 directory")
	}
}
