package docker

import (
	"errors"
	"fmt"
	"os"
	"path"
	"strconv"
	"strings"

	"github.com/socialwebcomputer/doctor/checks/facts/hostfacts"
	"github.com/socialwebcomputer/doctor/internal/hostio"
)

// socketView is the path of the socket as the runner opens it, and where
// doctor finds that file. A runner in a container (the Deckhouse shape: the
// host's socket bind-mounted at /var/run/docker.sock) sees its own mount
// namespace, which /proc/<pid>/root shows to doctor on the host; without a
// live process, or when that is not there, the path under --root.
func socketView(env *hostio.Env, proc *hostfacts.Process, sock string) string {
	if proc != nil {
		nsRoot := "/proc/" + strconv.Itoa(proc.PID) + "/root"
		if _, err := env.Lstat(nsRoot); err == nil {
			return nsRoot + sock
		}
	}
	return sock
}

// inRoot maps a host path to a file under root with symlinks resolved as
// if root were /: an absolute link target starts again at root, and ".."
// never climbs above it. So under a --root other than / nothing doctor
// stats or dials lies outside that root (a fixture's /var/run -> /run link
// must not lead to the real /run of the machine running doctor). Under /
// the kernel resolves the path itself, magic links of /proc included.
// It returns the resolved host path; Env.Path of it is the local file.
// Every step goes through the Env, so a bundle records it.
func inRoot(env *hostio.Env, p string) (string, error) {
	if env.Root == "" || env.Root == "/" {
		return p, nil
	}
	rest := strings.Split(strings.TrimPrefix(path.Clean("/"+p), "/"), "/")
	cur := "/"
	for links := 0; len(rest) > 0; {
		name := rest[0]
		rest = rest[1:]
		if name == "" || name == "." {
			continue
		}
		next := path.Join(cur, name) // Join cleans "..", and "/.." is "/"
		st, err := env.Lstat(next)
		if err != nil || st.Mode()&os.ModeSymlink == 0 {
			// A missing component is left to the stat that follows.
			cur = next
			continue
		}
		if links++; links > 40 {
			return "", &hostio.FileError{Path: p, Err: errors.New("too many levels of symbolic links")}
		}
		target, err := env.Readlink(next)
		if err != nil {
			return "", &hostio.FileError{Path: p, Err: hostio.FileCause(err)}
		}
		if !path.IsAbs(target) {
			target = path.Join(cur, target)
		}
		rest = append(strings.Split(strings.TrimPrefix(path.Clean(target), "/"), "/"), rest...)
		cur = "/"
	}
	return cur, nil
}

// Socket is what doctor saw of a unix socket, and whether the runner may
// connect to it.
type Socket struct {
	Path  string // as the runner opens it (/var/run/docker.sock)
	Seen  string // the host path doctor read: Path, or /proc/<pid>/root + Path
	Local string // where that is on this machine (under --root)
	Err   error  // stat failed: missing, or unreadable
	Mode  os.FileMode
	Owner int
	Group int
	// Denied lists what keeps the runner's uid out: the socket (needs w:
	// connect(2) on a unix socket needs write permission on it, unix(7)),
	// or a directory above it (needs x).
	Denied []string
}

// IsSocket reports whether the file is a unix socket.
func (s *Socket) IsSocket() bool { return s.Err == nil && s.Mode&os.ModeSocket != 0 }

func statSocket(env *hostio.Env, proc *hostfacts.Process, sock string) *Socket {
	s := &Socket{Path: sock, Seen: socketView(env, proc, sock)}
	resolved, err := inRoot(env, s.Seen)
	if err != nil {
		s.Err = err
		return s
	}
	s.Local = env.Path(resolved)
	st, err := env.Stat(resolved)
	if err != nil {
		s.Err = &hostio.FileError{Path: s.Seen, Err: hostio.FileCause(err)}
		return s
	}
	s.Mode = st.Mode()
	s.Owner, s.Group = hostfacts.Ownership(st)
	return s
}

// FindDenied fills Denied for the runner's identity: the socket and the
// directories above it the runner may not use. Root passes the bits.
func (s *Socket) FindDenied(env *hostio.Env, ra *hostfacts.RunAs) {
	s.Denied = nil
	if ra.UID == 0 {
		return
	}
	if !hostfacts.Permits(s.Mode, s.Owner, s.Group, ra, 2) {
		s.Denied = append(s.Denied, fmt.Sprintf("%s (%s, owner %d, group %d)", s.Path, s.Mode.Perm(), s.Owner, s.Group))
	}
	ns := strings.TrimSuffix(s.Seen, s.Path) // "/proc/<pid>/root", or ""
	for dir := path.Dir(s.Seen); dir != "/" && dir != "." && dir != ns; dir = path.Dir(dir) {
		resolved, err := inRoot(env, dir)
		if err != nil {
			continue
		}
		st, err := env.Stat(resolved)
		if err != nil {
			continue
		}
		o, g := hostfacts.Ownership(st)
		if !hostfacts.Permits(st.Mode(), o, g, ra, 1) {
			s.Denied = append(s.Denied, fmt.Sprintf("directory %s (%s, owner %d, group %d)", strings.TrimPrefix(dir, ns), st.Mode().Perm(), o, g))
		}
	}
}
