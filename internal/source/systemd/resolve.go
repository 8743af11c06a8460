package systemd

import (
	"errors"
	"io/fs"
	"path"
	"strings"

	"github.com/socialwebcomputer/doctor/internal/hostio"
)

// chaseMax bounds symlink hops, as CHASE_MAX in src/basic/chase.h.
const chaseMax = 32

var errLoop = errors.New("too many levels of symbolic links")

// resolve follows the symlinks in host path p component by component, the
// way chase() with a root does (src/basic/chase.c): an absolute link
// target is taken relative to env's root, never the machine running
// doctor, and ".." cannot climb above the root. followLast=false leaves a
// final symlink unfollowed (CHASE_NOFOLLOW). The result is a host path
// free of symlinks (but for the last component when not followed); err is
// the *hostio.FileError of the first component that could not be looked
// at, returned with the path resolved so far joined to the rest (as
// CHASE_NONEXISTENT would).
func resolve(env *hostio.Env, p string, followLast bool) (string, error) {
	todo := splitPath(p)
	cur := "/"
	hops := 0
	for len(todo) > 0 {
		c := todo[0]
		todo = todo[1:]
		switch c {
		case ".":
			continue
		case "..":
			cur = path.Dir(cur)
			continue
		}
		next := path.Join(cur, c)
		if len(todo) == 0 && !followLast {
			return next, nil
		}
		st, err := env.Lstat(next)
		if err != nil {
			return path.Join(append([]string{next}, todo...)...), err
		}
		if st.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		if hops++; hops > chaseMax {
			return next, &hostio.FileError{Path: p, Err: errLoop}
		}
		target, err := env.Readlink(next)
		if err != nil {
			return next, err
		}
		if strings.HasPrefix(target, "/") {
			cur = "/"
		}
		todo = append(splitPath(target), todo...)
	}
	return cur, nil
}

func splitPath(p string) []string {
	var out []string
	for _, c := range strings.Split(p, "/") {
		if c != "" {
			out = append(out, c)
		}
	}
	return out
}

func dirOf(p string) string { return path.Dir(p) }

// underDir reports whether host path p is dir or inside it.
func underDir(p, dir string) bool {
	if dir == "/" {
		return true
	}
	return p == dir || strings.HasPrefix(p, dir+"/")
}

// lexicalJoin joins a symlink target to the directory holding the link
// and cleans "." and ".." without following anything (what
// unit_file_resolve_symlink() gets from chase(CHASE_NOFOLLOW|
// CHASE_NONEXISTENT) for a target whose parents are not symlinks).
func lexicalJoin(dir, target string) string {
	if strings.HasPrefix(target, "/") {
		return path.Clean(target)
	}
	return path.Clean(path.Join(dir, target))
}
