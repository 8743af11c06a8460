package facts

import "io/fs"

// Permits applies the permission bits the kernel checks for the runner's
// uid and groups: the owner's bits when it owns the file, else the group's
// when its primary or a supplementary group owns it, else the others'. bit
// is 4 (read), 2 (write) or 1 (execute/search). Root's override of the
// bits is the caller's to decide, as it differs by what is asked.
func Permits(mode fs.FileMode, owner, group int, ra *RunAs, bit fs.FileMode) bool {
	perm := mode.Perm()
	switch {
	case owner == ra.UID:
		return perm&(bit<<6) != 0
	case group == ra.GID || hasGroup(ra.Groups, group):
		return perm&(bit<<3) != 0
	}
	return perm&bit != 0
}

func hasGroup(groups []int, g int) bool {
	for _, x := range groups {
		if x == g {
			return true
		}
	}
	return false
}
