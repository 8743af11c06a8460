//go:build !unix

package atomicfile

import "os"

// openNonblock is a plain read-only open where O_NONBLOCK does not exist;
// Read has already refused anything but a regular file.
func openNonblock(p string) (*os.File, error) {
	return os.Open(p)
}
