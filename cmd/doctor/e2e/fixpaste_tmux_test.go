package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/internal/fixcode"
	"github.com/socialwebcomputer/doctor/report"
	"github.com/socialwebcomputer/doctor/testkit/cmdtest"
	"github.com/socialwebcomputer/doctor/testkit/fixture"
	"github.com/socialwebcomputer/doctor/testkit/hostilefix"
	"github.com/socialwebcomputer/doctor/testkit/tools"
)

// TestHostileFixesPastedInTmux pastes fixes as an operator does: into an
// interactive bash on a terminal (tmux paste-buffer, bracketed paste as the
// shell asks for it), one block after another. The fixes are those of the
// fixtures whose inputs are hostile themselves (a process naming root's
// files, a config.toml whose values carry code), and those of doctor
// analyze of their bundles, and of two fixtures rendered with hostile
// values. No program runs: PATH is empty and command_not_found_handle
// records each command's words. No block may leave the shell inside a
// quote or a heredoc (the next block's marker line must print), no value
// may spell a command (touch), and every argument holding a piece of a
// value holds all of it.
func TestHostileFixesPastedInTmux(t *testing.T) {
	tmux := tools.Need(t, "tmux", "Debian's tmux package")
	bash := tools.Need(t, "bash", "Debian's bash package")
	os.Remove(pwned)
	var blocks []string
	add := func(rep *report.Report) {
		for _, f := range rep.Findings {
			for _, s := range f.FixSteps {
				if s.Kind == checks.KindShell {
					blocks = append(blocks, s.Text)
				}
			}
		}
	}
	for _, name := range []string{"hostile-runner-names-root-files", "hostile-values-in-config"} {
		dir := filepath.Join(cmdtest.Fixtures, name)
		sc := fixture.Load(t, dir)
		root := fixture.LayRoot(t, dir, sc)
		bundle := filepath.Join(t.TempDir(), "bundle.tar.gz")
		_, out, errs := runDoctor(append(sc.RunArgs(dir, root), "-o", "json", "--bundle", bundle)...)
		rep := decodeReport(t, out)
		add(&rep)
		_, out, errs2 := runDoctor("analyze", bundle, "-o", "json")
		var analyzed report.Report
		if err := json.Unmarshal([]byte(out), &analyzed); err != nil {
			t.Fatalf("%s: analyze: %v\n%s%s", name, err, errs, errs2)
		}
		add(&analyzed)
	}
	for _, name := range []string{"guide-config-as-is", "kubeconfig-unreadable-by-runner"} {
		dir := filepath.Join(cmdtest.Fixtures, name)
		sc := fixture.Load(t, dir)
		root := fixture.LayRoot(t, dir, sc)
		for _, f := range taintedFixesOf(t, sc.RunArgs(dir, root)) {
			for _, s := range f.steps {
				if s.Kind == checks.KindShell {
					blocks = append(blocks, s.Text)
				}
			}
		}
	}
	if len(blocks) < 4 {
		t.Fatalf("only %d shell blocks to paste", len(blocks))
	}

	dir := t.TempDir()
	log := filepath.Join(dir, "argv")
	sock := filepath.Join(dir, "tmux.sock")
	tm := func(a ...string) (string, error) {
		cmd := exec.Command(tmux, append([]string{"-S", sock, "-f", "/dev/null"}, a...)...)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8", "TERM=xterm-256color", "HOME=" + dir}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	shell := fmt.Sprintf("env -i PATH=%s HOME=%s HISTFILE=/dev/null TERM=xterm-256color LANG=C.UTF-8 %s --norc --noprofile -i",
		fixcode.Quote(filepath.Join(dir, "empty")), fixcode.Quote(dir), fixcode.Quote(bash))
	if out, err := tm("new-session", "-d", "-s", "paste", "-x", "200", "-y", "50", shell); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	t.Cleanup(func() { _, _ = tm("kill-server") })
	paste := func(i int, text string) {
		buf := filepath.Join(dir, fmt.Sprintf("block-%d", i))
		cmdtest.NoErr(t, os.WriteFile(buf, []byte(text+"\n"), 0o600))
		if out, err := tm("load-buffer", "-b", "b", buf); err != nil {
			t.Fatalf("tmux load-buffer: %v\n%s", err, out)
		}
		if out, err := tm("paste-buffer", "-p", "-d", "-b", "b", "-t", "paste"); err != nil {
			t.Fatalf("tmux paste-buffer: %v\n%s", err, out)
		}
		marker := fmt.Sprintf("pasted-%d-done", i)
		if out, err := tm("send-keys", "-t", "paste", "echo "+marker, "Enter"); err != nil {
			t.Fatalf("tmux send-keys: %v\n%s", err, out)
		}
		deadline := time.Now().Add(20 * time.Second)
		for {
			screen, _ := tm("capture-pane", "-p", "-J", "-S", "-", "-t", "paste")
			if strings.Contains(screen, "\n"+marker) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("block %d left the shell inside a quote or a heredoc (its marker never printed):\n%s\n--- screen:\n%s", i, text, screen)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	paste(0, "command_not_found_handle() { printf '%s\\0' \"$@\" >> "+fixcode.Quote(log)+"; printf '\\n' >> "+fixcode.Quote(log)+"; return 0; }")
	for i, b := range blocks {
		paste(i+1, b)
	}
	raw, err := os.ReadFile(log)
	cmdtest.NoErr(t, err)
	calls := 0
	for _, call := range strings.Split(strings.TrimSuffix(string(raw), "\n"), "\x00\n") {
		if call == "" {
			continue
		}
		calls++
		argv := strings.Split(strings.TrimSuffix(call, "\x00"), "\x00")
		if argv[0] == "touch" {
			t.Errorf("a value ran %q", argv)
		}
		for _, a := range argv {
			if strings.Contains(a, "doctor-pwned") && !strings.Contains(a, hostilefix.Mark) && !strings.Contains(a, "$(touch /tmp/doctor-pwned)") {
				t.Errorf("an argument holds a piece of a value: %q", a)
			}
		}
	}
	if _, err := os.Stat(pwned); err == nil {
		t.Errorf("a pasted fix ran a command a value spelt: %s exists", pwned)
	}
	t.Logf("%d blocks pasted, %d commands recorded", len(blocks), calls)
}
