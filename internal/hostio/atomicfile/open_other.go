//go:build !unix

package atomicfile

import "os"

// OpenNonblock is a plain read-only open where O_NONBLOCK does not exist;
// its callers have already refused anything but a regular file.
func OpenNonblock(p string) (*os.File, error) {
	return os.Open(p)
}
