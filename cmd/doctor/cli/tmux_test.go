package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/internal/fixcode"
	"github.com/socialwebcomputer/doctor/internal/text/wrap"
	"github.com/socialwebcomputer/doctor/report"
	"github.com/socialwebcomputer/doctor/testkit/cmdtest"
	"github.com/socialwebcomputer/doctor/testkit/tools"
)

// The live table, on a real terminal: the built binary runs in tmux at 80
// and at 200 columns, and the screen is read back. Every line of a fix's
// blocks and every verify command is one whole line of the screen (capture-pane -J joins
// the lines the terminal itself wrapped, as copying them does), nothing
// else is wider than the terminal, and the layout and glyphs are the ones
// for that width on a UTF-8 terminal.
func TestLiveTableInTmux(t *testing.T) {
	tmux := tools.Need(t, "tmux", "Debian's tmux package")
	bin := cmdtest.BuildDoctor(t)
	const now = "2026-11-29T12:00:00Z"
	for _, fixture := range []string{"multi-cause-expired-cert-world-readable", "guide-config-as-is"} {
		root := cmdtest.FixtureRoot(t, fixture)
		args := []string{"run", "--root", root, "--offline", "--now", now}
		_, js, _ := runDoctor(append(args, "-o", "json")...)
		var rep report.Report
		cmdtest.NoErr(t, json.Unmarshal([]byte(js), &rep))
		var whole []string // lines that must appear whole: the fixes' blocks and the verify commands
		for _, f := range rep.Findings {
			if f.CausedBy != nil || len(f.FixSteps) == 0 {
				continue
			}
			for _, b := range f.FixSteps.Blocks() {
				for _, l := range strings.Split(b.Text, "\n") {
					if strings.TrimSpace(l) != "" {
						whole = append(whole, l)
					}
				}
			}
			// The verify line invokes doctor as it was run here: by its path.
			v := fixcode.Quote(bin) + " run --root " + root + " --now " + now + " --offline --only " + f.Check
			if f.Runner != nil && f.Runner.Index > 0 {
				v += fmt.Sprintf(" --runner %d", f.Runner.Index)
			}
			whole = append(whole, v)
		}
		if len(whole) < 2 {
			t.Fatalf("%s: too few fix lines to test: %q", fixture, whole)
		}
		for _, width := range []int{80, 200} {
			t.Run(fmt.Sprintf("%s/%d", fixture, width), func(t *testing.T) {
				joined, screen, code := inTmux(t, tmux, width, bin, args)
				if code != rep.Summary.ExitCode {
					t.Errorf("exit %d in tmux, %d in the report", code, rep.Summary.ExitCode)
				}
				have := map[string]bool{}
				for _, l := range joined {
					have[strings.TrimRight(l, " ")] = true
				}
				for _, w := range whole {
					if !have[w] {
						t.Errorf("fix or verify line %q is not a whole line of the screen:\n%s", w, strings.Join(joined, "\n"))
					}
				}
				// The terminal cuts no token of what doctor printed: only a
				// verify command is longer than the screen.
				for _, b := range wrap.Breaks(strings.Join(joined, "\n"), width, func(l string) bool { return have[l] && slices.Contains(whole, l) }) {
					t.Errorf("at %d columns the terminal breaks %q", width, b.Token)
				}
				for _, l := range screen {
					if n := len([]rune(l)); n > width {
						t.Errorf("a screen line of %d columns at %d: %q", n, width, l)
					}
				}
				text := strings.Join(joined, "\n")
				table := strings.Contains(text, "#  SEVERITY")
				if width < report.StackedBelow && table || width >= report.StackedBelow && !table {
					t.Errorf("at %d columns the table layout is %v:\n%s", width, table, text)
				}
				if !strings.Contains(text, "× CRITICAL") {
					t.Errorf("no UTF-8 glyph on a UTF-8 terminal:\n%s", text)
				}
				if strings.ContainsAny(text, "│┌┐┘├┤") {
					t.Errorf("a box border on the screen:\n%s", text)
				}
			})
		}
	}
}

// inTmux runs bin args in a new tmux server of its own (its socket in a
// temporary directory) whose one window is width columns wide, waits for it
// to end, and returns the screen and its history twice: with the lines the
// terminal wrapped joined (-J), and as the rows the terminal shows. code is
// the command's exit code.
func inTmux(t *testing.T, tmux string, width int, bin string, args []string) (joined, screen []string, code int) {
	t.Helper()
	dir := t.TempDir()
	sock := filepath.Join(dir, "tmux.sock")
	conf := filepath.Join(dir, "tmux.conf")
	cmdtest.NoErr(t, os.WriteFile(conf, []byte("set -g remain-on-exit on\nset -g history-limit 20000\nset -g status off\n"), 0o644))
	var quoted []string
	for _, a := range append([]string{bin}, args...) {
		quoted = append(quoted, fixcode.Quote(a))
	}
	script := filepath.Join(dir, "run.sh")
	cmdtest.NoErr(t, os.WriteFile(script, []byte("#!/bin/sh\n"+strings.Join(quoted, " ")+"\necho \"doctor-exit=$?\"\n"), 0o755))
	tm := func(a ...string) (string, error) {
		cmd := exec.Command(tmux, append([]string{"-S", sock, "-f", conf}, a...)...)
		cmd.Env = append(os.Environ(), "LANG=C.UTF-8", "LC_ALL=", "LC_CTYPE=", "TERM=xterm-256color", "NO_COLOR=")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := tm("new-session", "-d", "-s", "doctor", "-x", fmt.Sprint(width), "-y", "50", "sh "+fixcode.Quote(script)); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	t.Cleanup(func() { _, _ = tm("kill-server") })
	if out, err := tm("display-message", "-p", "-t", "doctor", "#{pane_width}"); err != nil || strings.TrimSpace(out) != fmt.Sprint(width) {
		t.Fatalf("the pane is %q columns wide, want %d (%v)", strings.TrimSpace(out), width, err)
	}
	deadline := time.Now().Add(60 * time.Second)
	var out string
	for {
		var err error
		out, err = tm("capture-pane", "-p", "-J", "-S", "-", "-E", "-", "-t", "doctor")
		if err != nil {
			t.Fatalf("tmux capture-pane: %v\n%s", err, out)
		}
		if strings.Contains(out, "doctor-exit=") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("doctor did not end in tmux within a minute; the screen:\n%s", out)
		}
		time.Sleep(100 * time.Millisecond)
	}
	rows, err := tm("capture-pane", "-p", "-S", "-", "-E", "-", "-t", "doctor")
	if err != nil {
		t.Fatalf("tmux capture-pane: %v\n%s", err, rows)
	}
	for _, l := range strings.Split(out, "\n") {
		if c, ok := strings.CutPrefix(strings.TrimSpace(l), "doctor-exit="); ok {
			fmt.Sscanf(c, "%d", &code)
			break
		}
		joined = append(joined, l)
	}
	return joined, strings.Split(rows, "\n"), code
}
