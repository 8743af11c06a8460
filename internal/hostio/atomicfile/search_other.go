//go:build unix && !linux

package atomicfile

import "golang.org/x/sys/unix"

// searchOnly is a plain read-only open where O_PATH does not exist.
const searchOnly = unix.O_RDONLY
