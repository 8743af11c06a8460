// Package trust decides whether a file doctor takes settings from, or a
// directory it writes into, is under the control of the user who runs
// doctor alone, as git's safe.directory and ssh's StrictModes do: it must be
// owned by that user or root, and writable by no one else. doctor often
// runs as root, so a .doctor.yaml another user left in the working
// directory, or a directory another user can swap a file in, would let that
// user hide findings or redirect root's writes.
package trust

import (
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"syscall"
)

// Invoker says whether uid is the user who runs doctor: root, the
// effective uid, or, when doctor runs as root under sudo, the user who
// called sudo (SUDO_UID), as git counts them since CVE-2022-24765.
func Invoker(uid uint32) bool {
	if uid == 0 || int64(uid) == int64(os.Geteuid()) {
		return true
	}
	if os.Geteuid() != 0 {
		return false
	}
	s, err := strconv.ParseUint(os.Getenv("SUDO_UID"), 10, 32)
	return err == nil && uint32(s) == uid
}

// Owner is fi's owner; ok is false where the platform does not say.
func Owner(fi fs.FileInfo) (uid uint32, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return st.Uid, true
}

// Untrusted says why a file or directory is not one doctor trusts.
type Untrusted struct {
	Path string
	UID  uint32
	Mode fs.FileMode
	// Why is what is wrong: owned by another user, or writable by one.
	Why string
}

func (u *Untrusted) Error() string {
	return fmt.Sprintf("%s is owned by uid %d with mode %s: %s", u.Path, u.UID, Mode(u.Mode), u.Why)
}

// Mode is a permission mode as chmod takes it, with the sticky bit: 0644,
// 1777.
func Mode(m fs.FileMode) string {
	p := uint32(m.Perm())
	if m&fs.ModeSticky != 0 {
		p |= 0o1000
	}
	if m&fs.ModeSetgid != 0 {
		p |= 0o2000
	}
	if m&fs.ModeSetuid != 0 {
		p |= 0o4000
	}
	return fmt.Sprintf("%04o", p)
}

// File checks a file doctor takes settings from: owned by the invoker
// (Invoker) and writable by its owner alone.
func File(path string, fi fs.FileInfo) error {
	return check(path, fi, false)
}

// Dir checks a directory doctor reads from or writes into: owned by the
// invoker and writable by its owner alone, or, when sticky is allowed,
// sticky like /tmp (there no one may rename or remove an entry they do not
// own, so a file of doctor's in it stays doctor's; the caller checks that
// the entry it uses is its own).
func Dir(path string, fi fs.FileInfo, sticky bool) error {
	return check(path, fi, sticky)
}

// PublishDir checks a directory doctor leaves a file in for another
// program (node_exporter's textfile collector, a ticket's bundle): owned by
// anyone, but writable by its owner alone, or sticky. Its owner could
// replace what doctor leaves there anyway; what it cannot do is redirect
// the write, which is made relative to the opened directory, without
// following a symlink, under a fresh name renamed over the file. The
// directory a packaged collector reads is often its own user's
// (/var/lib/prometheus/node-exporter is prometheus's on Debian).
func PublishDir(path string, fi fs.FileInfo) error {
	uid, ok := Owner(fi)
	if !ok {
		return nil
	}
	m := fi.Mode()
	if m.Perm()&0o022 == 0 || (m.IsDir() && m&fs.ModeSticky != 0) {
		return nil
	}
	return &Untrusted{Path: path, UID: uid, Mode: m, Why: "writable by " + writers(m) + ", who could change it"}
}

// Link checks a symlink on the way to such a file: owned by the invoker
// (a symlink's own mode means nothing), as the kernel's protected_symlinks
// asks of one in a sticky directory.
func Link(path string, fi fs.FileInfo) error {
	uid, ok := Owner(fi)
	if !ok || Invoker(uid) {
		return nil
	}
	return &Untrusted{Path: path, UID: uid, Mode: fi.Mode(), Why: others()}
}

func others() string {
	return fmt.Sprintf("another user's, not yours (uid %d) nor root's", os.Geteuid())
}

// Fix is what makes the file trusted, once its owner's content is known
// to be what the invoker wants.
func (u *Untrusted) Fix() string {
	if !Invoker(u.UID) {
		return fmt.Sprintf("review it, then `chown %d %s`", os.Geteuid(), u.Path)
	}
	return fmt.Sprintf("`chmod go-w %s`", u.Path)
}

func check(path string, fi fs.FileInfo, sticky bool) error {
	uid, ok := Owner(fi)
	if !ok {
		return nil // no owners to compare (not a Unix): nothing to refuse on
	}
	m := fi.Mode()
	u := &Untrusted{Path: path, UID: uid, Mode: m}
	switch {
	case !Invoker(uid):
		u.Why = others()
	case m.Perm()&0o022 != 0 && !(sticky && m.IsDir() && m&fs.ModeSticky != 0):
		u.Why = "writable by " + writers(m) + ", who could change it"
	default:
		return nil
	}
	return u
}

// writers names who besides the owner may write under mode m.
func writers(m fs.FileMode) string {
	switch p := m.Perm(); {
	case p&0o020 != 0 && p&0o002 != 0:
		return "its group and every user"
	case p&0o020 != 0:
		return "its group"
	}
	return "every user"
}
