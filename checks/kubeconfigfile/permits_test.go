package kubeconfigfile

import (
	"io/fs"
	"testing"

	"github.com/socialwebcomputer/doctor/checks/facts"
)

// permits applies the kernel's order: owner bits if the uid owns the file,
// else group bits if any of its groups matches, else other bits; no
// fallthrough from a denying class to a more permissive one.
func TestPermits(t *testing.T) {
	runner := &facts.RunAs{UIDKnown: true, UID: 999, GID: 999, Groups: []int{4, 1001}}
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
		if got := permits(tc.mode, tc.owner, tc.group, runner, 4); got != tc.want {
			t.Errorf("%s: permits = %v, want %v", tc.name, got, tc.want)
		}
	}
	if permits(0o600|fs.ModeDir, 999, 999, runner, 1) {
		t.Error("a 0600 directory lets its owner traverse it")
	}
}
