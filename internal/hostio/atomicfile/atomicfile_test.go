//go:build unix

package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// readBounded runs Read with a deadline: a Read that blocks on a FIFO fails
// the test instead of hanging it.
func readBounded(t *testing.T, path string, max int64) ([]byte, error) {
	t.Helper()
	type out struct {
		b   []byte
		err error
	}
	done := make(chan out, 1)
	go func() {
		b, err := Read(path, max)
		done <- out{b, err}
	}()
	select {
	case o := <-done:
		return o.b, o.err
	case <-time.After(5 * time.Second):
		t.Fatalf("Read(%s) blocked", path)
		return nil, nil
	}
}

func TestReadRefusesWhatIsNotASmallRegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, make([]byte, 2<<10), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, path, want string }{
		{"FIFO", fifo, "not a regular file (a FIFO)"},
		{"directory", dir, "is a directory"},
		{"character device", "/dev/null", "not a regular file (a character device)"},
		{"over the bound", big, "is 2048 bytes, larger than 1 KiB"},
	} {
		_, err := readBounded(t, c.path, 1<<10)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), c.path) {
			t.Errorf("%s: %v names the path, which the caller does", c.name, err)
		}
	}
	if _, err := readBounded(t, filepath.Join(dir, "missing"), 1<<10); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: %v, want fs.ErrNotExist", err)
	}
}

// The open itself must not block on a FIFO swapped in after the stat.
func TestOpenNonblockFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		f, err := OpenNonblock(fifo)
		if err == nil {
			f.Close()
		}
		done <- err
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("OpenNonblock blocked on a FIFO")
	}
}

func TestWriteReplacesAtomicallyWithMode0600(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f.json")
	for _, body := range []string{"one\n", "two\n"} {
		if err := Write(p, []byte(body)); err != nil {
			t.Fatal(err)
		}
		b, err := Read(p, 1<<10)
		if err != nil || string(b) != body {
			t.Fatalf("Read after Write(%q) = %q, %v", body, b, err)
		}
	}
	fi, err := os.Stat(p)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, %v; want 0600", fi.Mode(), err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("the directory holds %d entries, want the file alone (no temporary left)", len(ents))
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Write(fifo, []byte("x")); err == nil {
		t.Errorf("Write over a FIFO succeeded")
	}
	if err := Write(filepath.Join(dir, "no-such-dir", "f"), []byte("x")); err == nil {
		t.Errorf("Write into a missing directory succeeded")
	}
}
