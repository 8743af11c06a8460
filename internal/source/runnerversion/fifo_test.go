//go:build unix

package runnerversion

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A FIFO must be refused at once, not opened (which would wait for a
// writer) nor read.
func TestFromBinaryFIFO(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "usr", "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(root, "usr", "bin", "gitlab-runner"), 0o644); err != nil {
		t.Skip("mkfifo:", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := FromBinary(root, "/usr/bin/gitlab-runner")
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, ErrNotRegular) {
			t.Errorf("err = %v, want %v", err, ErrNotRegular)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("FromBinary blocked on a FIFO")
	}
}
