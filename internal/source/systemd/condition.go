package systemd

import (
	"errors"
	"io/fs"
	"strings"

	"github.com/socialwebcomputer/doctor/internal/hostio"
)

// Condition is one ConditionFileIsExecutable= setting: the only Condition*=
// doctor reads, the one `gitlab-runner install` writes (the
// kardianos/service template, service_systemd_linux.go, v1.3.0, used by
// gitlab-runner v19.3.0: ConditionFileIsExecutable={{.Path|cmdEscape}}).
type Condition struct {
	Type    string // "ConditionFileIsExecutable"
	Path    string // specifiers resolved, simplified
	Negate  bool   // "!": the test's result is inverted
	Trigger bool   // "|": one of the triggering conditions must hold
	Source  Source
}

// String is the condition as systemd prints it: "Type=!path".
func (c Condition) String() string {
	neg := ""
	if c.Negate {
		neg = "!"
	}
	return c.Type + "=" + neg + c.Path
}

// setCondition is config_parse_unit_condition_path() (src/core/load-
// fragment.c, v252): an empty value resets the unit's conditions, "|" then
// "!" prefixes (each followed by optional whitespace), specifiers, and an
// absolute path or the setting is ignored.
func (u *Unit) setCondition(d *diag, typ, value string) {
	if value == "" {
		u.Conditions = nil
		return
	}
	trigger := strings.HasPrefix(value, "|")
	if trigger {
		value = strings.TrimLeft(value[1:], " \t\n\r")
	}
	negate := strings.HasPrefix(value, "!")
	if negate {
		value = strings.TrimLeft(value[1:], " \t\n\r")
	}
	n, err := d.specifiers(value)
	if err != nil {
		d.warn("failed to resolve unit specifiers in %s, ignoring", quoteForMessage(value))
		return
	}
	p, why := checkPath(n)
	if why != "" {
		d.warn("%s= path %s %s, ignoring", typ, quoteForMessage(n), why)
		return
	}
	u.Conditions = append(u.Conditions, Condition{Type: typ, Path: p, Negate: negate, Trigger: trigger, Source: d.src})
}

// UnmetCondition is the condition that makes systemd skip the unit's start,
// nil when they hold (or there are none). It is condition_test_list()
// (src/shared/condition.c, v252) over the conditions doctor reads: every
// non-triggering condition must hold, and of the triggering ones at least
// one; the test of ConditionFileIsExecutable= is
// condition_test_file_is_executable(): stat(2) of the path (symlinks
// followed) succeeds, it is a regular file, and st_mode & 0111. systemd
// tests as the manager (root), so only the bits matter. Err is the stat
// error, nil when the file exists but is not an executable regular file.
func (u *Unit) UnmetCondition(env *hostio.Env) (c *Condition, info fs.FileInfo, err error) {
	var firstTrigger *Condition
	var firstInfo fs.FileInfo
	var firstErr error
	triggered := -1
	for i := range u.Conditions {
		c := &u.Conditions[i]
		st, err := env.Stat(c.Path)
		ok := err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0
		if c.Negate {
			ok = !ok
		}
		if !c.Trigger && !ok {
			return c, st, err
		}
		if c.Trigger && triggered <= 0 {
			if ok {
				triggered = 1
			} else {
				triggered = 0
				if firstTrigger == nil {
					firstTrigger, firstInfo, firstErr = c, st, err
				}
			}
		}
	}
	if triggered == 0 {
		return firstTrigger, firstInfo, firstErr
	}
	return nil, nil, nil
}

// ExecutableError is why systemd cannot execute the ExecStart= path:
// check_x_access() (src/basic/path-util.c, v252), which the forked child
// calls through find_executable_full() before execve: open(O_PATH) (the
// file's absence: ENOENT), fd_verify_regular() (a directory: EISDIR; any
// other non-regular file: EBADFD), then access(X_OK), which for root grants
// a regular file with any execute bit and refuses one with none (EACCES).
// nil when it is executable as root; doctor judges no other user, so a file
// executable only by its owner is taken as executable.
func ExecutableError(env *hostio.Env, path string) (fs.FileInfo, error) {
	st, err := env.Stat(path)
	switch {
	case err != nil:
		return nil, err
	case st.IsDir():
		return st, errIsDirectory
	case !st.Mode().IsRegular():
		return st, errBadFD
	case st.Mode().Perm()&0o111 == 0:
		return st, ErrNoExecuteBit
	}
	return st, nil
}

// ErrNoExecuteBit is a regular file without any execute bit: access(X_OK)
// refuses it even to root (EACCES). A stat refused to doctor itself is
// fs.ErrPermission, and not this.
var ErrNoExecuteBit = errors.New("no execute bit")

var (
	errIsDirectory = errors.New("is a directory")
	errBadFD       = errors.New("file descriptor in bad state")
)

// Strerror is strerror(3) of a file error, as systemd's %m prints it.
func Strerror(err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "No such file or directory"
	case errors.Is(err, fs.ErrPermission), errors.Is(err, ErrNoExecuteBit):
		return "Permission denied"
	case errors.Is(err, errIsDirectory):
		return "Is a directory"
	case errors.Is(err, errBadFD):
		return "File descriptor in bad state"
	}
	s := hostio.FileCause(err).Error()
	if s != "" {
		s = strings.ToUpper(s[:1]) + s[1:]
	}
	return s
}
