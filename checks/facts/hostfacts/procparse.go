package hostfacts

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The /proc entries doctor reads are parsed as the kernel writes them, and
// anything else is an error saying how it differs: a guess (uid -1, an
// empty environment, a process that is not the runner) would be a false
// finding with a fix built from it.

var (
	// ErrCmdlineEmpty is the cmdline of a process that has exited (a
	// zombie) or never had an argv (a kernel thread): fs/proc/base.c
	// proc_pid_cmdline_read returns nothing once the mm is gone.
	ErrCmdlineEmpty = errors.New("empty: the process has exited (a zombie) or has no argv")
	errNoFinalNUL   = errors.New("does not end in NUL, as the kernel ends every argument: truncated")
	errNotText      = errors.New("not text: no argv the kernel shows for an exec'd gitlab-runner")
)

// parseCmdline splits /proc/<pid>/cmdline: every argument followed by a NUL.
func parseCmdline(b []byte) ([]string, error) {
	switch {
	case len(b) == 0:
		return nil, ErrCmdlineEmpty
	case !utf8.Valid(b):
		return nil, errNotText
	case b[len(b)-1] != 0:
		return nil, errNoFinalNUL
	}
	return splitNUL(b), nil
}

// procStatus is what doctor needs of /proc/<pid>/status.
type procStatus struct {
	UID, GID int // effective
	Groups   []int
}

// parseStatus reads the Uid, Gid and Groups lines as fs/proc/array.c
// task_state writes them: "Uid:\t<real>\t<effective>\t<saved>\t<fs>\n", the
// same for Gid, and "Groups:\t" with each supplementary gid followed by a
// space. Only complete lines count: a line without its newline was cut.
func parseStatus(b []byte) (procStatus, error) {
	st := procStatus{UID: -1, GID: -1}
	if !utf8.Valid(b) {
		return procStatus{UID: -1, GID: -1}, errors.New("not text")
	}
	lines := strings.Split(string(b), "\n")
	lines = lines[:len(lines)-1] // after the last newline: empty, or a cut line
	var haveUID, haveGID bool
	for i, line := range lines {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		var err error
		switch k {
		case "Uid":
			if haveUID {
				return procStatus{UID: -1, GID: -1}, fmt.Errorf("line %d: a second Uid line", i+1)
			}
			st.UID, err = fourIDs(v)
			haveUID = true
		case "Gid":
			if haveGID {
				return procStatus{UID: -1, GID: -1}, fmt.Errorf("line %d: a second Gid line", i+1)
			}
			st.GID, err = fourIDs(v)
			haveGID = true
		case "Groups":
			for _, g := range strings.Fields(v) {
				n, gerr := parseID(g)
				if gerr != nil {
					err = gerr
					break
				}
				st.Groups = append(st.Groups, n)
			}
		}
		if err != nil {
			return procStatus{UID: -1, GID: -1}, fmt.Errorf("line %d (%s): %w", i+1, k, err)
		}
	}
	switch {
	case !haveUID:
		return procStatus{UID: -1, GID: -1}, errors.New("no complete Uid line")
	case !haveGID:
		return procStatus{UID: -1, GID: -1}, errors.New("no complete Gid line")
	}
	return st, nil
}

// fourIDs parses "\t<real>\t<effective>\t<saved>\t<fs>" and returns the
// effective id, the one the kernel checks file access against (with fs).
func fourIDs(v string) (int, error) {
	f := strings.Fields(v)
	if len(f) != 4 {
		return -1, fmt.Errorf("%d ids, the kernel writes 4", len(f))
	}
	ids := make([]int, 4)
	for i, s := range f {
		n, err := parseID(s)
		if err != nil {
			return -1, err
		}
		ids[i] = n
	}
	return ids[1], nil
}

// parseID is a uid or gid: decimal, below (uid_t)-1, which means "none".
func parseID(s string) (int, error) {
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil || n == 1<<32-1 {
		return -1, fmt.Errorf("%q is not an id", truncateForEvidence(s))
	}
	return int(n), nil
}

// CheckEnviron tells a block as fs/proc/base.c environ_read shows it (every
// NAME=value followed by a NUL) from one that is cut or is not an
// environment at all, which would otherwise read as "KUBECONFIG is not set".
// An empty block is a process started with no environment (env -i).
func CheckEnviron(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	// Every name first: garbage is "not an environment", and only a
	// block that is one up to its end is "truncated".
	entries := bytes.Split(bytes.TrimSuffix(b, []byte{0}), []byte{0})
	cut := b[len(b)-1] != 0
	for i, kv := range entries {
		name, _, ok := bytes.Cut(kv, []byte("="))
		if cut && i == len(entries)-1 && !ok {
			break // the entry the cut went through: only its name is there
		}
		if !ok || len(name) == 0 {
			return fmt.Errorf("entry %d is not NAME=value: not an environment block", i+1)
		}
		for _, c := range name {
			if c <= ' ' || c >= 0x7f {
				return fmt.Errorf("entry %d's name has byte %#02x: not an environment block", i+1, c)
			}
		}
	}
	if cut {
		return errors.New("does not end in NUL, as the kernel ends every variable: truncated")
	}
	return nil
}

// truncateForEvidence keeps a quoted piece of a hostile file short.
func truncateForEvidence(s string) string {
	if r := []rune(s); len(r) > 20 {
		return string(r[:20]) + "…"
	}
	return s
}
