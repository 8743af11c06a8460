//go:build unix

package atomicfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/socialwebcomputer/doctor/internal/hostio/trust"
)

// doctor writes its files (--state, --textfile, --bundle, the cache under
// --cache-dir) as root, often into a directory an operator named once in a
// cron line. Whoever else may write that directory may swap what doctor
// writes, or point it elsewhere, between one run and the next or between a
// check and the write. So, as ssh (StrictModes) and systemd (chase's
// CHASE_SAFE) decide it, the directory is reached one component at a time,
// each opened relative to the one before without following a symlink (the
// directory named last may not be one at all; one on the way is followed
// only when the invoker or root made it), and the file is created and
// renamed relative to the opened directory: a swap after the check changes
// nothing doctor touches.

// maxHops bounds the symlinks followed on the way, as the kernel's 40.
const maxHops = 40

// dir is a directory opened for writing in.
type dir struct {
	f    *os.File
	path string // as named, for messages
}

func (d *dir) fd() int { return int(d.f.Fd()) }

func (d *dir) Close() error { return d.f.Close() }

// openDir opens path, a directory, without following a symlink at its last
// component, nor one on the way that a user other than the invoker made.
// A relative path starts at the working directory itself.
func openDir(path string) (*dir, error) {
	start := "."
	if filepath.IsAbs(path) {
		start = "/"
	}
	// Each step needs only search permission (searchOnly), as the kernel's
	// own walk does; the directory reached is opened again to be read.
	fd, err := unix.Open(start, searchOnly|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("directory %s: %w", path, err)
	}
	parts := components(path)
	hops := 0
	for len(parts) > 0 {
		name := parts[0]
		parts = parts[1:]
		next, err := unix.Openat(fd, name, searchOnly|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err == nil {
			unix.Close(fd)
			fd = next
			continue
		}
		var st unix.Stat_t
		if serr := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); serr != nil || st.Mode&unix.S_IFMT != unix.S_IFLNK {
			unix.Close(fd)
			return nil, fmt.Errorf("directory %s: %w", path, err)
		}
		target, err := readlinkat(fd, name)
		switch {
		case err != nil:
		case len(parts) == 0:
			err = fmt.Errorf("is a symlink (to %s); doctor does not write through one: name the directory itself", target)
		case !trust.Invoker(st.Uid):
			err = fmt.Errorf("%s on the way is a symlink (to %s) of uid %d, who is neither you (uid %d) nor root", name, target, st.Uid, os.Geteuid())
		case hops >= maxHops:
			err = unix.ELOOP
		}
		if err != nil {
			unix.Close(fd)
			return nil, fmt.Errorf("directory %s: %w", path, err)
		}
		hops++
		if filepath.IsAbs(target) {
			unix.Close(fd)
			if fd, err = unix.Open("/", searchOnly|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err != nil {
				return nil, fmt.Errorf("directory %s: %w", path, err)
			}
		}
		parts = append(components(target), parts...)
	}
	// Readable, it can be listed (sweep) and synced; a directory doctor may
	// write but not read is still written, through the search-only handle.
	if rd, err := unix.Openat(fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err == nil {
		unix.Close(fd)
		fd = rd
	}
	return &dir{f: os.NewFile(uintptr(fd), path), path: path}, nil
}

// components are path's names, "." and empty ones left out; ".." stays
// (opened relative to the directory reached, as the kernel resolves it).
func components(path string) []string {
	var out []string
	for _, c := range strings.Split(path, "/") {
		if c != "" && c != "." {
			out = append(out, c)
		}
	}
	return out
}

func readlinkat(fd int, name string) (string, error) {
	buf := make([]byte, unix.PathMax)
	n, err := unix.Readlinkat(fd, name, buf)
	if err != nil {
		return "", err
	}
	return string(buf[:n]), nil
}

// kind is what doctor writes in a directory, which decides who may own it.
type kind int

const (
	// own is a file doctor reads back (--state): the directory is the
	// invoker's or root's and writable by its owner alone, or sticky.
	own kind = iota
	// private is doctor's own directory (--cache-dir): the invoker's or
	// root's, writable by its owner alone; sticky is not enough.
	private
	// published is a file left for another program (--textfile, --bundle):
	// the directory may be another user's, writable by that user alone.
	published
)

// trusted says why doctor may not write base in d, nil when it may, by
// what it writes there (kind); in a sticky directory (like /tmp) base must
// be absent or the invoker's, since there no one else may rename or remove
// it.
func (d *dir) trusted(base string, k kind) error {
	fi, err := d.f.Stat()
	if err != nil {
		return err
	}
	var err2 error
	if k == published {
		err2 = trust.PublishDir(d.path, fi)
	} else {
		err2 = trust.Dir(d.path, fi, k == own)
	}
	if err := err2; err != nil {
		fix := "choose a directory that is yours or root's and writable by you alone"
		var u *trust.Untrusted
		if errors.As(err, &u) {
			fix = u.Fix() + ", or " + fix
		}
		return fmt.Errorf("directory %w; doctor does not write in it: %s", err, fix)
	}
	if base == "" || fi.Mode().Perm()&0o022 == 0 {
		return nil
	}
	var st unix.Stat_t
	switch err := unix.Fstatat(d.fd(), base, &st, unix.AT_SYMLINK_NOFOLLOW); {
	case errors.Is(err, unix.ENOENT):
		return nil
	case err != nil:
		return err
	case !trust.Invoker(st.Uid):
		return fmt.Errorf("%s in sticky directory %s is uid %d's, not yours (uid %d) nor root's: remove it, or choose another name",
			base, d.path, st.Uid, os.Geteuid())
	}
	return nil
}

// CheckDir says, before a run, whether Write may write path: its directory
// is reached and trusted as Write requires. The write checks again.
func CheckDir(path string) error { return checkDir(path, own) }

// CheckPublishDir is CheckDir for Publish.
func CheckPublishDir(path string) error { return checkDir(path, published) }

func checkDir(path string, k kind) error {
	d, err := openDir(parent(path))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.trusted(filepath.Base(path), k)
}

// PrivateDir says whether dir, doctor's own directory (--cache-dir), is
// one to read from and write in: not a symlink, the invoker's or root's,
// and writable by its owner alone; sticky is not enough, since doctor
// reads back what is in it.
func PrivateDir(path string) error {
	d, err := openDir(path)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.trusted("", private)
}

func parent(path string) string {
	if d := filepath.Dir(path); d != "" {
		return d
	}
	return "."
}
