// Package atomicfile reads and writes the files doctor keeps between runs
// (the --state file, the cache under --cache-dir) and the ones it leaves
// for others (--textfile, --bundle): a read that refuses anything but a
// regular file of bounded size and never blocks on a FIFO, and a write that
// replaces the file atomically, in a directory no one else may write, or
// leaves it as it was, sweeping the temporary files a killed write left.
package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/socialwebcomputer/doctor/internal/hostio"
)

// Read returns the contents of the regular file at path, at most max
// bytes. A missing file is an error that wraps fs.ErrNotExist. Anything
// that is not a regular file, or is larger than max, is an error saying
// so, without the path (the caller names the file in its own words).
func Read(path string, max int64) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, hostio.FileCause(err)
	}
	if why := NotRegular(fi, max); why != "" {
		return nil, errors.New(why)
	}
	f, err := OpenNonblock(path)
	if err != nil {
		return nil, hostio.FileCause(err)
	}
	defer f.Close()
	// The path may have been replaced between the stat and the open.
	if fi, err = f.Stat(); err != nil {
		return nil, hostio.FileCause(err)
	}
	if why := NotRegular(fi, max); why != "" {
		return nil, errors.New(why)
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, hostio.FileCause(err)
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
	case !m.IsRegular():
		return notRegular(m)
	case fi.Size() > max:
		return fmt.Sprintf("is %d bytes, larger than %s", fi.Size(), size(max))
	}
	return ""
}

// notRegular says what a file of mode m, not a regular one, is.
func notRegular(m fs.FileMode) string {
	if m.IsDir() {
		return "is a directory, not a file"
	}
	return fmt.Sprintf("is not a regular file (%s)", hostio.FileType(m))
}

func size(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d KiB", n>>10)
}

// Write is WriteMode with mode 0600: doctor's own files.
func Write(path string, b []byte) error {
	return WriteMode(path, b, 0o600)
}
