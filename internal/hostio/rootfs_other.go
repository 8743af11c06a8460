//go:build !linux

package hostio

import (
	"os"
	"syscall"

	securejoin "github.com/cyphar/filepath-securejoin"
)

// Without openat2 the root's paths are resolved by securejoin's walk, which
// a concurrent rename inside the root could race; doctor diagnoses Linux
// hosts, and this keeps it building elsewhere.

func openInRoot(root, p string) (*os.File, error) {
	j, err := securejoin.SecureJoin(root, p)
	if err != nil {
		return nil, err
	}
	return os.OpenFile(j, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}

func reopenForRead(h *os.File) (*os.File, error) {
	return os.OpenFile(h.Name(), os.O_RDONLY|syscall.O_NONBLOCK, 0)
}

func reopenDir(h *os.File) (*os.File, error) { return os.Open(h.Name()) }

func fdPath(h *os.File) string { return h.Name() }

func joinInRoot(root, p string) (string, error) { return securejoin.SecureJoin(root, p) }
