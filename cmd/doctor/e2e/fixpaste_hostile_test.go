package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/internal/fixcode"
	"github.com/socialwebcomputer/doctor/testkit/fixture"
	"github.com/socialwebcomputer/doctor/testkit/hostilefix"
	"github.com/socialwebcomputer/doctor/testkit/tools"
)

// pwned is the file hostilefix.Mark's command substitutions would make.
const pwned = "/tmp/doctor-pwned"

// TestHostileFixesPasteAsData pastes every shell block of every fixture's
// fixes and verify commands, rendered with hostile values, into a real
// interactive bash (history expansion on, as at a prompt). No program
// runs for real: PATH is empty and bash's command_not_found_handle records
// each command's arguments instead (sudo, kubectl, systemctl, touch...).
// Every argument that holds a piece of the hostile mark must hold all of
// it, a value arriving as one argument; no command the mark spells
// (touch) may run, and the marker file must not appear.
func TestHostileFixesPasteAsData(t *testing.T) {
	bash := tools.Need(t, "bash", "Debian's bash package")
	os.Remove(pwned)
	blocks := 0
	for _, dir := range scenarioDirs(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			sc := fixture.Load(t, dir)
			root := fixture.LayRoot(t, dir, sc)
			fixes := taintedFixesOf(t, sc.RunArgs(dir, root))
			for _, f := range fixes {
				for i, s := range f.steps {
					if s.Kind != checks.KindShell {
						continue
					}
					blocks++
					pasteAsData(t, bash, fmt.Sprintf("%s step %d", f.where, i+1), s.Text)
				}
			}
		})
	}
	if _, err := os.Stat(pwned); err == nil {
		t.Errorf("a pasted fix ran a command a value spelt: %s exists", pwned)
	}
	t.Logf("%d shell blocks pasted", blocks)
}

// pasteAsData runs block in an interactive bash whose every external
// command is recorded, not run, and checks what each received.
func pasteAsData(t *testing.T, bash, where, block string) {
	t.Helper()
	dir := t.TempDir()
	log := filepath.Join(dir, "argv")
	script := filepath.Join(dir, "paste.sh")
	// The handler writes each command's words NUL-separated, a line each.
	prelude := "command_not_found_handle() { printf '%s\\0' \"$@\" >> " + fixcode.Quote(log) + "; printf '\\n' >> " + fixcode.Quote(log) + "; return 0; }\n"
	if err := os.WriteFile(script, []byte(prelude+block+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bash, "--norc", "--noprofile", "-i", script)
	cmd.Env = []string{"PATH=" + filepath.Join(dir, "empty"), "HOME=" + dir, "HISTFILE=/dev/null", "TERM=dumb", "LANG=C"}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			t.Fatalf("%s: bash: %v", where, err)
		}
	}
	raw, _ := os.ReadFile(log)
	for _, call := range strings.Split(strings.TrimSuffix(string(raw), "\n"), "\x00\n") {
		if call == "" {
			continue
		}
		argv := strings.Split(strings.TrimSuffix(call, "\x00"), "\x00")
		if hostilefix.Strip(argv[0]) == "touch" || argv[0] == "touch" {
			t.Errorf("%s: a value ran %q\n%s", where, argv, block)
		}
		for _, a := range argv {
			if strings.Contains(a, "doctor-pwned") && !strings.Contains(a, hostilefix.Mark) {
				t.Errorf("%s: an argument holds a piece of a value, not the whole: %q\n%s", where, a, block)
			}
		}
	}
}
