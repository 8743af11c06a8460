package e2e

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/internal/fixcode"
	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/testkit/cmdtest"
)

// The README's quick starts are real runs, as written: each block between
// <!-- quickstart NAME --> and <!-- /quickstart --> holds shell lines
// (indented four spaces, as the README shows commands), each group of them
// followed by `echo $?    # N` and a fence with what it printed.
// TestReadmeQuickStarts runs every group with bash, in order, in one
// directory laid out like a fresh checkout (./doctor built by the README's
// own build line, testdata/ beside it, nothing else), and compares exit
// code and stdout; stderr must be empty. docs/usage.md's blocks run after
// the README's, in the same directory.
// go test ./cmd/doctor/e2e -run TestReadmeQuickStarts -update rewrites the
// exit codes and outputs (never the commands).
var quickstart = regexp.MustCompile(`(?s)<!-- quickstart ([a-z-]+) -->\n(.*?)<!-- /quickstart -->`)

// quickstartDocs are the files with quick starts, in the order they run.
var quickstartDocs = []string{"../../../README.md", "../../../docs/usage.md"}

// A fence opens a command's output: ``` or ~~~~ (when the output holds
// ```), with a language tag for markdown.
var fenceLine = regexp.MustCompile("^(```|~~~~)([a-z]*)$")

func TestReadmeQuickStarts(t *testing.T) {
	readme, err := os.ReadFile("../../../README.md")
	cmdtest.NoErr(t, err)
	work := t.TempDir()
	buildAsReadmeSays(t, string(readme), filepath.Join(work, "doctor"))
	cmdtest.NoErr(t, os.Symlink(mustAbs(t, "../../../testdata"), filepath.Join(work, "testdata")))
	// What a reader's terminal has: a UTF-8 locale (so the glyphs are the
	// ones it shows), no COLUMNS (a pipe is 120 columns wide), a HOME
	// and nothing else of this machine's environment.
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "LANG=C.UTF-8", hostio.LoopbackOnlyVar + "=1"}

	for _, doc := range quickstartDocs {
		b, err := os.ReadFile(doc)
		cmdtest.NoErr(t, err)
		text := string(b)
		blocks := 0
		out := quickstart.ReplaceAllStringFunc(text, func(m string) string {
			sub := quickstart.FindStringSubmatch(m)
			blocks++
			body := runQuickstart(t, doc+" quick start "+sub[1], sub[2], work, env)
			return "<!-- quickstart " + sub[1] + " -->\n" + body + "<!-- /quickstart -->"
		})
		if blocks == 0 {
			t.Errorf("%s has no quick start", doc)
		}
		if *cmdtest.Update {
			cmdtest.NoErr(t, os.WriteFile(doc, []byte(out), 0o644))
			continue
		}
		if out != text {
			t.Errorf("%s: its quick starts differ from what they print now; go test ./cmd/doctor/e2e -run TestReadmeQuickStarts -update\n%s",
				doc, cmdtest.FirstDifference(text, out))
		}
	}
}

// buildAsReadmeSays runs the README's build line (Install: `CGO_ENABLED=0
// go build -o doctor ./cmd/doctor`) from the checkout, as written but for
// where the binary goes.
func buildAsReadmeSays(t *testing.T, readme, bin string) {
	t.Helper()
	const prefix = "    CGO_ENABLED=0 go build -o doctor "
	var line string
	for _, l := range strings.Split(readme, "\n") {
		if strings.HasPrefix(l, prefix) {
			line = l
			break
		}
	}
	if line == "" {
		t.Fatalf("README.md has no build line %q", strings.TrimSpace(prefix))
	}
	cmd := exec.Command("bash", "-c", strings.Replace(strings.TrimSpace(line), "-o doctor", "-o "+fixcode.Quote(bin), 1))
	cmd.Dir = "../../.."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.TrimSpace(line), err, out)
	}
}

// runQuickstart runs a block's groups and returns the block as it should
// read: the same commands, with each group's exit code and output.
func runQuickstart(t *testing.T, name, block, work string, env []string) string {
	lines := strings.Split(strings.TrimSuffix(block, "\n"), "\n")
	var out []string
	var script []string
	exitAt := -1 // the index in out of the pending group's echo $? line
	flush := func(want *string) {
		if len(script) == 0 {
			if want != nil {
				t.Errorf("%s: output with no command before it", name)
			}
			return
		}
		code, stdout := runGroup(t, name, strings.Join(script, "\n"), work, env)
		if exitAt < 0 {
			t.Errorf("%s: %q has no `echo $?    # N` line after it", name, script[len(script)-1])
		} else {
			out[exitAt] = "    echo $?    # " + strconv.Itoa(code)
		}
		if want == nil && stdout != "" {
			t.Errorf("%s: %q prints output the block does not show:\n%s", name, script[len(script)-1], stdout)
		}
		if want != nil {
			*want = stdout
		}
		script, exitAt = nil, -1
	}
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "    echo $?    # "):
			exitAt = len(out)
			out = append(out, l)
		case strings.HasPrefix(l, "    "):
			if exitAt >= 0 {
				// A command after an exit line starts a group: the
				// one before printed nothing.
				flush(nil)
			}
			script = append(script, strings.TrimPrefix(l, "    "))
			out = append(out, l)
		case fenceLine.MatchString(l):
			open := fenceLine.FindStringSubmatch(l)
			lang := open[2]
			end := i + 1
			for end < len(lines) && lines[end] != open[1] {
				end++
			}
			var stdout string
			flush(&stdout)
			fence := "```"
			if strings.Contains(stdout, "```") {
				fence = "~~~~"
			}
			out = append(out, fence+lang, strings.TrimRight(stdout, "\n"), fence)
			i = end
		default:
			if strings.TrimSpace(l) != "" {
				flush(nil)
			}
			out = append(out, l)
		}
	}
	flush(nil)
	return strings.Join(out, "\n") + "\n"
}

// runGroup runs script with bash in work and returns its exit code (the
// last command's) and stdout.
func runGroup(t *testing.T, name, script, work string, env []string) (int, string) {
	t.Helper()
	cmd := exec.Command("bash", "-c", script)
	var stdout, stderr bytes.Buffer
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = work, env, &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if stderr.Len() > 0 {
		t.Errorf("%s: %q wrote to stderr: %s", name, script, stderr.String())
	}
	return code, stdout.String()
}

func mustAbs(t *testing.T, p string) string {
	a, err := filepath.Abs(p)
	cmdtest.NoErr(t, err)
	return a
}
