package cli

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/internal/fixcode"
	"github.com/socialwebcomputer/doctor/testkit/cmdtest"
	"github.com/socialwebcomputer/doctor/testkit/tools"
)

// On a terminal, doctor run shows its progress on stderr while it runs:
// checks pending, running and done, and the slow one by name. Here a
// resolver that never answers holds gitlab-reachability for its DNS
// deadline, and the screen is read while it waits.
func TestProgressOnATerminal(t *testing.T) {
	tmux := tools.Need(t, "tmux", "Debian's tmux package")
	silent, err := net.ListenPacket("udp", "127.0.0.1:0")
	cmdtest.NoErr(t, err)
	defer silent.Close()
	bin := cmdtest.BuildDoctor(t)
	root := cmdtest.FixtureRoot(t, "healthy")
	args := []string{"run", "--root", root, "--now", "2026-11-29T12:00:00Z", "--resolver", silent.LocalAddr().String(),
		"--only", "gitlab-reachability,config-lint", "--timeout", "20s"}
	dir := t.TempDir()
	sock := filepath.Join(dir, "tmux.sock")
	var quoted []string
	for _, a := range append([]string{bin}, args...) {
		quoted = append(quoted, fixcode.Quote(a))
	}
	script := filepath.Join(dir, "run.sh")
	cmdtest.NoErr(t, os.WriteFile(script, []byte("#!/bin/sh\nexport DOCTOR_LOOPBACK_ONLY=1\n"+strings.Join(quoted, " ")+"\necho doctor-exit=$?\nsleep 30\n"), 0o755))
	tm := func(a ...string) string {
		cmd := exec.Command(tmux, append([]string{"-S", sock, "-f", "/dev/null"}, a...)...)
		cmd.Env = append(os.Environ(), "LANG=C.UTF-8", "TERM=xterm-256color")
		out, _ := cmd.CombinedOutput()
		return string(out)
	}
	tm("new-session", "-d", "-s", "p", "-x", "100", "-y", "40", "sh "+fixcode.Quote(script))
	t.Cleanup(func() { tm("kill-server") })
	var sawSlow, sawCounts bool
	var screen string
	for deadline := time.Now().Add(40 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		screen = tm("capture-pane", "-p", "-t", "p")
		sawSlow = sawSlow || strings.Contains(screen, "slow: gitlab-reachability (")
		sawCounts = sawCounts || strings.Contains(screen, "running, ")
		if strings.Contains(screen, "doctor-exit=") {
			break
		}
	}
	if !sawCounts || !sawSlow {
		t.Errorf("progress counts seen %v, the slow check named %v; last screen:\n%s", sawCounts, sawSlow, screen)
	}
	// The report starts where the progress line was: none is left.
	if strings.Contains(screen, "pending, ") || strings.Contains(screen, "checks:") {
		t.Errorf("the progress line stays on the screen:\n%s", screen)
	}
	for _, l := range strings.Split(screen, "\n") {
		if n := len([]rune(l)); n > 100 {
			t.Errorf("a line of %d columns on a 100-column terminal: %q", n, l)
		}
	}
}

// Without a terminal on stderr nothing but the report is written: a cron's
// mail and a CI log stay clean.
func TestNoProgressWithoutATerminal(t *testing.T) {
	root := cmdtest.FixtureRoot(t, "healthy")
	var out, errb bytes.Buffer
	Main([]string{"run", "--root", root, "--offline", "--now", "2026-11-29T12:00:00Z"}, IO{Out: &out, Err: &errb, Getenv: func(string) string { return "" }})
	if errb.Len() != 0 {
		t.Errorf("stderr is not a terminal, yet doctor wrote to it: %q", errb.String())
	}
}
