// Package atomicfile reads and writes the small files doctor keeps between
// runs (the --state file, the cache under --cache-dir): a read that refuses
// anything but a regular file of bounded size and never blocks on a FIFO,
// and a write that replaces the file atomically, mode 0600, or leaves it
// as it was.
package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/socialwebcomputer/doctor/checks"
)

// Read returns the contents of the regular file at path, at most max
// bytes. A missing file is an error that wraps fs.ErrNotExist. Anything
// that is not a regular file, or is larger than max, is an error saying
// so, without the path (the caller names the file in its own words).
func Read(path string, max int64) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, checks.FileCause(err)
	}
	if why := NotRegular(fi, max); why != "" {
		return nil, errors.New(why)
	}
	f, err := OpenNonblock(path)
	if err != nil {
		return nil, checks.FileCause(err)
	}
	defer f.Close()
	// The path may have been replaced between the stat and the open.
	if fi, err = f.Stat(); err != nil {
		return nil, checks.FileCause(err)
	}
	if why := NotRegular(fi, max); why != "" {
		return nil, errors.New(why)
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, checks.FileCause(err)
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("larger than %s", size(max))
	}
	return b, nil
}

// NotRegular says why fi is not a regular file of at most max bytes, ""
// when it is.
func NotRegular(fi fs.FileInfo, max int64) string {
	switch m := fi.Mode(); {
	case m.IsDir():
		return "is a directory, not a file"
	case !m.IsRegular():
		return fmt.Sprintf("is not a regular file (%s)", checks.FileType(m))
	case fi.Size() > max:
		return fmt.Sprintf("is %d bytes, larger than %s", fi.Size(), size(max))
	}
	return ""
}

func size(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d KiB", n>>10)
}

// Write replaces path with b atomically: a temporary file in path's
// directory, mode 0600, synced, then renamed over path. It never replaces
// a directory, FIFO or device. On any error path is left as it was and the
// temporary file is removed.
func Write(path string, b []byte) error {
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		return errors.New(NotRegular(fi, fi.Size()))
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return checks.FileCause(err)
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := tmp.Chmod(0o600); err != nil {
		return checks.FileCause(err)
	}
	if _, err := tmp.Write(b); err != nil {
		return checks.FileCause(err)
	}
	if err := tmp.Sync(); err != nil {
		return checks.FileCause(err)
	}
	if err := tmp.Close(); err != nil {
		return checks.FileCause(err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		done = true
		return checks.FileCause(err)
	}
	done = true
	// The rename is durable once the directory is synced; a failure here
	// leaves a correct file that may not survive a crash, so it is not one.
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}
