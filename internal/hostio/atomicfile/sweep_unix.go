//go:build unix

package atomicfile

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// A write killed between creating its temporary file and renaming it (kill
// -9, the OOM killer, a power cut) leaves the temporary file behind, and
// nothing else would ever remove it: a cron every five minutes fills the
// directory. Each temporary file's name says whose it is (tempName): the
// file's name and the writer's pid. Before it writes, doctor removes those
// of the same file that are the invoker's own and whose writer is gone: its
// pid is not alive, or the file is older than StaleTemp (the pid was reused;
// no write takes that long).

// StaleTemp is the age past which a temporary file is left over whatever
// its pid.
const StaleTemp = time.Hour

// tempName is the temporary file of base written by pid: hidden, and
// recognisably doctor's and that file's. A long base is cut so the name
// stays within NAME_MAX.
func tempName(base string, pid int, random string) string {
	return tempPrefix(base) + strconv.Itoa(pid) + "-" + random
}

func tempPrefix(base string) string {
	if len(base) > 200 {
		base = base[:200]
	}
	return "." + base + ".doctor-tmp-"
}

// tempPID is the writer's pid of name, a temporary file of base.
func tempPID(base, name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, tempPrefix(base))
	if !ok {
		return 0, false
	}
	pid, random, ok := strings.Cut(rest, "-")
	if !ok || random == "" {
		return 0, false
	}
	n, err := strconv.Atoi(pid)
	return n, err == nil && n > 0
}

// sweep removes base's temporary files in d that are left over: regular
// files of the invoker's own uid whose writer is gone. Failures are not
// the write's: a file that cannot be removed stays.
func (d *dir) sweep(base string) {
	f, err := dupDir(d)
	if err != nil {
		return
	}
	defer f.Close()
	now := time.Now()
	for {
		names, err := f.Readdirnames(256)
		for _, name := range names {
			pid, ok := tempPID(base, name)
			if !ok {
				continue
			}
			var st unix.Stat_t
			if unix.Fstatat(d.fd(), name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil ||
				st.Mode&unix.S_IFMT != unix.S_IFREG || int64(st.Uid) != int64(os.Geteuid()) {
				continue
			}
			age := now.Sub(time.Unix(st.Mtim.Unix()))
			if pid == os.Getpid() || alive(pid) && age < StaleTemp {
				continue
			}
			_ = unix.Unlinkat(d.fd(), name, 0)
		}
		if err != nil { // io.EOF at the end
			return
		}
	}
}

// dupDir is a second handle on d's directory, to list it from the start
// whatever was read of d before.
func dupDir(d *dir) (*os.File, error) {
	fd, err := unix.Openat(d.fd(), ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), d.path), nil
}

// alive says whether a process of pid exists (one of another user's
// answers EPERM, and exists).
func alive(pid int) bool {
	err := unix.Kill(pid, 0)
	return err == nil || errors.Is(err, unix.EPERM)
}
