//go:build unix

package atomicfile

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/socialwebcomputer/doctor/internal/hostio"
)

// testHookTempCreated, set by a test, runs once the temporary file exists
// and before anything is written to it: a test's helper process blocks in
// it to be killed mid-write.
var testHookTempCreated func(name string)

// WriteMode replaces path with b atomically: a temporary file (tempName:
// the file's name and doctor's pid) in path's directory, mode perm, synced,
// then renamed over path. The directory is reached as openDir does and must
// be one doctor may trust (dir.trusted); the temporary file is created
// relative to it, never through a symlink, and the temporary files that
// earlier writes of path left behind (their process killed) are removed
// first (sweep). It never replaces a directory, FIFO or device. On any
// error path is left as it was and the temporary file is removed.
func WriteMode(path string, b []byte, perm fs.FileMode) error {
	return write(path, b, perm, own)
}

// Publish is WriteMode for a file left for another program (the textfile
// a collector reads, a bundle for a ticket): its directory may be another
// user's, if writable by that user alone (trust.PublishDir).
func Publish(path string, b []byte, perm fs.FileMode) error {
	return write(path, b, perm, published)
}

func write(path string, b []byte, perm fs.FileMode, k kind) error {
	base := filepath.Base(path)
	d, err := openDir(parent(path))
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.trusted(base, k); err != nil {
		return err
	}
	var st unix.Stat_t
	if err := unix.Fstatat(d.fd(), base, &st, unix.AT_SYMLINK_NOFOLLOW); err == nil {
		// A symlink is replaced itself, never written through.
		if m := st.Mode & unix.S_IFMT; m != unix.S_IFREG && m != unix.S_IFLNK {
			return errors.New(notRegular(fileType(uint32(m))))
		}
	}
	d.sweep(base)
	tmp, err := d.createTemp(base, perm)
	if err != nil {
		return err
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			_ = unix.Unlinkat(d.fd(), tmp.Name(), 0)
		}
	}()
	if testHookTempCreated != nil {
		testHookTempCreated(filepath.Join(d.path, tmp.Name()))
	}
	// The mode is perm whatever the umask.
	if err := tmp.Chmod(perm); err != nil {
		return hostio.FileCause(err)
	}
	if _, err := tmp.Write(b); err != nil {
		return hostio.FileCause(err)
	}
	if err := tmp.Sync(); err != nil {
		return hostio.FileCause(err)
	}
	if err := tmp.Close(); err != nil {
		return hostio.FileCause(err)
	}
	if err := unix.Renameat(d.fd(), tmp.Name(), d.fd(), base); err != nil {
		_ = unix.Unlinkat(d.fd(), tmp.Name(), 0)
		done = true
		return fmt.Errorf("rename into %s: %w", d.path, err)
	}
	done = true
	// The rename is durable once the directory is synced; a failure here
	// leaves a correct file that may not survive a crash, so it is not one.
	_ = d.f.Sync()
	return nil
}

// fileType is the fs.FileMode type of a stat's S_IFMT bits.
func fileType(m uint32) fs.FileMode {
	switch m {
	case unix.S_IFDIR:
		return fs.ModeDir
	case unix.S_IFIFO:
		return fs.ModeNamedPipe
	case unix.S_IFSOCK:
		return fs.ModeSocket
	case unix.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		return fs.ModeDevice
	}
	return fs.ModeIrregular
}

// createTemp creates a new temporary file for base in d, named by
// tempName, exclusively and without following a symlink. Its os.File's
// Name is the name within d.
func (d *dir) createTemp(base string, perm fs.FileMode) (*os.File, error) {
	for range 10 {
		var r [4]byte
		_, _ = rand.Read(r[:])
		name := tempName(base, os.Getpid(), hex.EncodeToString(r[:]))
		fd, err := unix.Openat(d.fd(), name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(perm.Perm()))
		if errors.Is(err, unix.EEXIST) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("create a temporary file in %s: %w", d.path, err)
		}
		return os.NewFile(uintptr(fd), name), nil
	}
	return nil, fmt.Errorf("create a temporary file in %s: %w", d.path, unix.EEXIST)
}
