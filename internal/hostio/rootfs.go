package hostio

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"syscall"
)

// The files under a --root other than "/" are another machine's, or a copy
// of one, and their symlinks mean what they mean there: an absolute one
// (/etc/alternatives/x -> /usr/bin/x) names a file of that machine, and a
// relative one climbs no higher than its /. Followed on this host, either
// would lead doctor, often run as root, to a file of this host, which a
// bundle would then carry. So under such a root every path is resolved as
// chroot(2) would resolve it, by the kernel (openat2 with RESOLVE_IN_ROOT,
// through github.com/cyphar/filepath-securejoin's pathrs-lite, which falls
// back to a checked walk where the kernel lacks it). Go's os.Root is not
// that: it refuses a symlink that leaves its directory where a chroot
// follows it inside, so a copied host's absolute unit symlinks would turn
// into errors. On a live host (Root "/") paths are the host's own and are
// used as they are.

// chrooted says paths resolve inside Root rather than on the host.
func (e *Env) chrooted() bool { return e.Root != "" && e.Root != "/" }

// inRoot is p as a clean absolute path of the root's own tree.
func inRoot(p string) string { return path.Clean("/" + p) }

// rootReadFile is readHostFile under a root: the file is looked up without
// being opened (an O_PATH handle opens no FIFO and no device), judged by
// its fstat, and only a regular file within the bound is opened to read,
// non-blocking, through that handle.
func rootReadFile(root, p string, limit int64) ([]byte, error) {
	h, st, err := lookUp(root, p)
	if err != nil {
		return nil, &FileError{p, err}
	}
	defer h.Close()
	if err := readable(st, limit); err != nil {
		return nil, &FileError{p, err}
	}
	f, err := reopenForRead(h)
	if err != nil {
		return nil, &FileError{p, rootCause(err)}
	}
	defer f.Close()
	return readBounded(p, f, limit)
}

// readable refuses what ReadFile never reads: a directory, anything that is
// not a regular file, a file over the bound.
func readable(st fs.FileInfo, limit int64) error {
	switch {
	case st.IsDir():
		return errors.New("is a directory")
	case !st.Mode().IsRegular():
		// /proc entries are regular files; a FIFO, socket or device never is
		// what doctor was asked to read.
		return fmt.Errorf("%w (%s)", ErrNotRegular, FileType(st.Mode()))
	case st.Size() > limit:
		return ErrTooLarge
	}
	return nil
}

// readBounded reads f whole, refusing it past limit (a /proc entry's stat
// says size 0, so the read itself is bounded too).
func readBounded(p string, f io.Reader, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, &FileError{p, FileCause(err)}
	}
	if int64(len(b)) > limit {
		return nil, &FileError{p, ErrTooLarge}
	}
	return b, nil
}

// lookUp is an O_PATH handle of p resolved inside root, the last
// component followed, and its fstat; the caller closes the handle.
func lookUp(root, p string) (*os.File, fs.FileInfo, error) {
	h, err := openInRoot(root, inRoot(p))
	if err != nil {
		return nil, nil, rootCause(err)
	}
	st, err := h.Stat()
	if err != nil {
		h.Close()
		return nil, nil, rootCause(err)
	}
	return h, st, nil
}

// rootStat is stat under a root, the last component followed inside it.
func rootStat(root, p string) (fs.FileInfo, error) {
	h, st, err := lookUp(root, p)
	if err != nil {
		return nil, err
	}
	h.Close()
	return namedInfo{st, path.Base(inRoot(p))}, nil
}

// rootLstat is lstat under a root: the directories resolved inside it, the
// last component reported as itself.
func rootLstat(root, p string) (fs.FileInfo, error) {
	var st fs.FileInfo
	err := atParent(root, p, func(dir string, base string) (err error) {
		st, err = os.Lstat(dir + "/" + base)
		return err
	})
	return st, err
}

// rootReadlink reads a symlink under a root: the target as written, which
// the caller resolves (against the root, as a chroot would) if it follows
// it.
func rootReadlink(root, p string) (string, error) {
	var target string
	err := atParent(root, p, func(dir string, base string) (err error) {
		target, err = os.Readlink(dir + "/" + base)
		return err
	})
	return target, err
}

// atParent calls op with a path naming p's parent directory, resolved
// inside root and held open for the call, and p's last component. The root
// itself has no parent: op gets it whole.
func atParent(root, p string, op func(dir, base string) error) error {
	clean := inRoot(p)
	if clean == "/" {
		return rootCause(op(path.Dir(root), path.Base(root)))
	}
	h, err := openInRoot(root, path.Dir(clean))
	if err != nil {
		return rootCause(err)
	}
	defer h.Close()
	// The handle's /proc link is the directory itself, wherever it is: the
	// one component after it cannot leave it.
	return rootCause(op(fdPath(h), path.Base(clean)))
}

// rootReadDir lists a directory under a root, sorted by name as
// os.ReadDir sorts.
func rootReadDir(root, p string) ([]fs.DirEntry, error) {
	h, st, err := lookUp(root, p)
	if err != nil {
		return nil, err
	}
	defer h.Close()
	if !st.IsDir() {
		return nil, syscall.ENOTDIR
	}
	d, err := reopenDir(h)
	if err != nil {
		return nil, rootCause(err)
	}
	defer d.Close()
	ents, err := d.ReadDir(-1)
	sort.Slice(ents, func(i, j int) bool { return ents[i].Name() < ents[j].Name() })
	if err != nil {
		return ents, rootCause(err)
	}
	return ents, nil
}

// rootCause is what went wrong, as the live path reports it: the errno
// under the library's wrapped errors ("too many levels of symbolic links",
// "permission denied"), else FileCause.
func rootCause(err error) error {
	if err == nil {
		return nil
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno
	}
	return FileCause(err)
}

// namedInfo is a FileInfo named by the path asked for, as os.Stat names it,
// not by the target a symlink led to.
type namedInfo struct {
	fs.FileInfo
	name string
}

func (i namedInfo) Name() string { return i.name }

// JoinInRoot is p resolved inside root as a chroot would resolve it,
// joined to root: the path a reader that opens by name (client-go's
// kubeconfig merge, the runner binary's build info) may open, whose
// symlinks are all resolved already. For root "/" it is p.
func JoinInRoot(root, p string) (string, error) {
	if root == "" || root == "/" {
		return p, nil
	}
	return joinInRoot(root, inRoot(p))
}
