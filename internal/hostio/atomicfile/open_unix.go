//go:build unix

package atomicfile

import (
	"os"
	"syscall"
)

// OpenNonblock opens read-only with O_NONBLOCK: should the path have turned
// into a FIFO since it was checked, the open does not wait for a writer.
func OpenNonblock(p string) (*os.File, error) {
	return os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
}
