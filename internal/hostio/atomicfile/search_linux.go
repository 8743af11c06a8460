package atomicfile

import "golang.org/x/sys/unix"

// searchOnly opens a directory on the way for the *at calls alone, which
// needs search permission on it and not read permission.
const searchOnly = unix.O_PATH
