package hostilefix

import (
	"fmt"
	"path"
	"strings"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/testkit/shellshape"
)

// changers are the programs whose path arguments a fix changes: owner,
// mode, a directory made or removed, a file written or replaced.
var changers = map[string]bool{
	"chown": true, "chmod": true, "chgrp": true, "install": true, "mkdir": true, "rmdir": true,
	"rm": true, "tee": true, "mv": true, "cp": true, "ln": true, "touch": true, "truncate": true,
}

// sensitive are files no fix changes, whoever asks.
var sensitive = []string{"/etc/shadow", "/etc/gshadow", "/etc/passwd", "/etc/group", "/etc/sudoers", "/etc/sudoers.d",
	"/etc/ssh", "/etc/pam.d", "/etc/cron.d", "/etc/crontab", "/etc/profile.d", "/etc/ld.so.preload", "/root/.ssh", "/root/.bashrc"}

// TouchesSystem is the first path a shell block's commands change that
// is a system path (a directory of the system's trees itself, anything
// under /proc, /sys, /dev, /boot, or one of the sensitive files), or one
// that is relative (it would resolve in the operator's directory); "" when
// there is none. Each program's arguments are read as it reads them: the
// owner of chown and the mode of chmod are no paths, install's sources
// and the sources of cp, mv and ln are read, not changed.
func TouchesSystem(block string) string {
	shape, err := shellshape.Parse(block)
	if err != nil {
		return ""
	}
	for _, call := range shape.Calls {
		for _, p := range changedPaths(call) {
			if !path.IsAbs(p) {
				return p
			}
			c := path.Clean(p)
			if hostio.SystemDir(c) {
				return c
			}
			for _, d := range append([]string{"/proc", "/sys", "/dev", "/boot"}, sensitive...) {
				if c == d || strings.HasPrefix(c, d+"/") {
					return c
				}
			}
		}
	}
	return ""
}

// valued are the options of the changers that take a value.
var valued = map[string]bool{"-o": true, "-g": true, "-m": true, "-t": true, "-S": true, "--owner": true, "--group": true, "--mode": true, "--reference": true}

// changedPaths are the paths a command changes, past sudo and env.
func changedPaths(call []string) []string {
	for len(call) > 0 && (call[0] == "sudo" || call[0] == "env" || strings.Contains(call[0], "=")) {
		call = call[1:]
	}
	if len(call) == 0 || !changers[path.Base(call[0])] {
		return nil
	}
	prog := path.Base(call[0])
	var operands []string
	dirs := false
	for i := 1; i < len(call); i++ {
		a := call[i]
		switch {
		case a == "-d" && prog == "install":
			dirs = true
		case valued[a]:
			i++
		case strings.HasPrefix(a, "-") && a != "-":
		default:
			operands = append(operands, a)
		}
	}
	switch prog {
	case "chown", "chgrp", "chmod":
		if len(operands) > 0 {
			return operands[1:] // the owner, group or mode first
		}
	case "install", "cp", "mv", "ln":
		if dirs {
			return operands
		}
		if len(operands) > 0 {
			return operands[len(operands)-1:] // the target; the sources are read
		}
	default:
		return operands
	}
	return nil
}

// AssertTouchesNoSystemPath is TouchesSystem over every shell block of
// steps, an error naming the first one.
func AssertTouchesNoSystemPath(where string, steps checks.Steps) error {
	for i, s := range steps {
		if s.Kind != checks.KindShell {
			continue
		}
		if p := TouchesSystem(s.Text); p != "" {
			return fmt.Errorf("%s: step %d changes %s, which is not the runner's own:\n%s", where, i+1, p, s.Text)
		}
	}
	return nil
}
