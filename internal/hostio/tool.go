package hostio

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Live says doctor looks at the machine it runs on (--root / or none), not
// at a copy of one: only then may it ask the system's own programs.
func (e *Env) Live() bool { return e.Root == "" || e.Root == "/" }

// ToolDirs are where a system tool is looked for: the system's own
// directories, never the caller's PATH, so a program the operator's PATH
// puts first is not run in its place.
var ToolDirs = []string{"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"}

// ErrToolMissing is RunTool's error for a program this host does not have.
var ErrToolMissing = errors.New("not installed")

// RunTool runs one of the system's own read-only programs (systemctl show)
// on a live host, the other door doctor has besides files and dials:
// argv[0] found in ToolDirs, its arguments as given (never from an input
// file but for names validated first), in the C locale with no pager and
// no colour, no stdin, in a process group of its own that is killed with
// everything it forked when timeout passes, and its stdout cut at limit
// bytes (an answer longer than that is an error, not a truncated answer).
// Nothing runs under any other --root: the caller checks Live first, or
// asks the tape (Probe) on replay.
func RunTool(ctx context.Context, argv []string, timeout time.Duration, limit int) ([]byte, error) {
	bin := ""
	for _, d := range ToolDirs {
		p := filepath.Join(d, argv[0])
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			bin = p
			break
		}
	}
	if bin == "" {
		return nil, fmt.Errorf("%s: %w (looked in %s)", argv[0], ErrToolMissing, strings.Join(ToolDirs, ", "))
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, argv[1:]...)
	cmd.Env = []string{"PATH=" + strings.Join(ToolDirs, ":"), "LC_ALL=C", "SYSTEMD_PAGER=", "SYSTEMD_COLORS=0", "SYSTEMD_URLIFY=0"}
	stdout := &cappedBuffer{max: limit}
	stderr := &cappedBuffer{max: 4 << 10}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	switch {
	case ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		return nil, fmt.Errorf("%s did not answer within %s", argv[0], timeout)
	case err != nil:
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return nil, fmt.Errorf("%s: %s", argv[0], firstLine(msg))
	case stdout.over:
		return nil, fmt.Errorf("%s wrote more than %d KiB", argv[0], limit>>10)
	}
	return stdout.Bytes(), nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// cappedBuffer keeps the first max bytes written to it.
type cappedBuffer struct {
	bytes.Buffer
	max  int
	over bool
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	if room := c.max - c.Len(); room < len(p) {
		c.over = true
		if room > 0 {
			c.Buffer.Write(p[:room])
		}
		return len(p), nil
	}
	return c.Buffer.Write(p)
}

// ProbeRecorded says whether a replayed tape holds the probe kind key: false
// only on replay of a bundle made without it (an older doctor's, or one
// made under another --root), where the caller falls back to what it would
// do without the probe.
func ProbeRecorded(env *Env, kind, key string) bool {
	t := env.Tape
	if t == nil || !t.Replay {
		return true
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	_, ok := t.Probes[kind+" "+key]
	return ok
}
