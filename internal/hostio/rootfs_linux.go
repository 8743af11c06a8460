//go:build linux

package hostio

import (
	"os"
	"strconv"

	securejoin "github.com/cyphar/filepath-securejoin"
	pathrs "github.com/cyphar/filepath-securejoin/pathrs-lite"
	"golang.org/x/sys/unix"
)

// openInRoot is an O_PATH handle of p resolved inside root, the last
// component followed.
func openInRoot(root, p string) (*os.File, error) { return pathrs.OpenInRoot(root, p) }

// reopenForRead opens what the O_PATH handle h names for reading, without
// blocking: a file that became a FIFO after its fstat still does not wait.
func reopenForRead(h *os.File) (*os.File, error) {
	return pathrs.Reopen(h, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC)
}

// reopenDir opens the directory h names for listing.
func reopenDir(h *os.File) (*os.File, error) {
	return pathrs.Reopen(h, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC)
}

// fdPath names the file h holds open, wherever it is.
func fdPath(h *os.File) string { return "/proc/self/fd/" + strconv.Itoa(int(h.Fd())) }

func joinInRoot(root, p string) (string, error) { return securejoin.SecureJoin(root, p) }
