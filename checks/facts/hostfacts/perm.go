package hostfacts

import (
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"syscall"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/internal/hostio"
)

// The access a check asks for, as the permission bits of one class.
const (
	Read    fs.FileMode = 4
	Write   fs.FileMode = 2
	Execute fs.FileMode = 1
)

// Blocker is a path component that denies the runner.
type Blocker struct {
	Path         string
	Mode         fs.FileMode // permission bits
	Owner, Group int
}

// Denied applies the permission bits the kernel would for the runner's uid
// and groups: the file needs want, every directory above it search (x). It
// returns what denies access, the file first, then directories from the
// nearest up; nil when the runner may. Root reads and writes anything and
// executes a file with any x bit, as the kernel's capability checks allow.
func Denied(env *hostio.Env, file string, st fs.FileInfo, ra *RunAs, want fs.FileMode) []Blocker {
	var out []Blocker
	owner, group := Ownership(st)
	if !Permits(st.Mode(), owner, group, ra, want) {
		out = append(out, Blocker{file, st.Mode().Perm(), owner, group})
	}
	for dir := path.Dir(file); ; dir = path.Dir(dir) {
		if st, err := env.Stat(dir); err == nil {
			owner, group := Ownership(st)
			if !Permits(st.Mode(), owner, group, ra, Execute) {
				out = append(out, Blocker{dir, st.Mode().Perm(), owner, group})
			}
		}
		if dir == "/" || dir == "." {
			return out
		}
	}
}

// Permits applies the kernel's order: owner bits if the uid owns the file,
// else group bits if the primary or a supplementary group matches, else
// other bits; no fallthrough from a denying class to a more permissive one.
func Permits(mode fs.FileMode, owner, group int, ra *RunAs, bit fs.FileMode) bool {
	perm := mode.Perm()
	if ra.UID == 0 {
		// CAP_DAC_OVERRIDE: read, write and directory search always; a
		// regular file's execute needs one x bit somewhere.
		return bit != Execute || mode.IsDir() || perm&0o111 != 0
	}
	switch {
	case owner == ra.UID:
		return perm&(bit<<6) != 0
	case group == ra.GID || slices.Contains(ra.Groups, group):
		return perm&(bit<<3) != 0
	}
	return perm&bit != 0
}

// BlockerPaths names the blockers for a finding's text: "a and b".
func BlockerPaths(bs []Blocker) string {
	names := make([]string, len(bs))
	for i, b := range bs {
		names[i] = b.Path
	}
	return strings.Join(names, " and ")
}

// Evidence is the blocker as a finding shows it.
func (b Blocker) Evidence() checks.Evidence {
	return checks.Evidence{Source: b.Path, Detail: fmt.Sprintf("mode %04o owner %d:%d", b.Mode, b.Owner, b.Group)}
}

// Ownership is a file's uid and gid, -1 when the platform does not say.
func Ownership(st fs.FileInfo) (uid, gid int) {
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		return int(sys.Uid), int(sys.Gid)
	}
	return -1, -1
}
