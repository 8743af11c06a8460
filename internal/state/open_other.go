//go:build !unix

package state

import "os"

// openNonblock is a plain read-only open where O_NONBLOCK does not exist;
// Load has already refused anything but a regular file.
func openNonblock(p string) (*os.File, error) {
	return os.Open(p)
}
