package fixcode_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/socialwebcomputer/doctor/internal/fixcode"
	"github.com/socialwebcomputer/doctor/testkit/hostile"
	"github.com/socialwebcomputer/doctor/testkit/shellshape"
	"github.com/socialwebcomputer/doctor/testkit/tools"
)

// Every hostile value is one word whose value is itself, as a shell parser
// reads it, in a command's name and in its arguments.
func TestQuoteIsOneWordOfItsValue(t *testing.T) {
	for _, v := range hostile.Shell() {
		for _, first := range []bool{false, true} {
			var s fixcode.Script
			if first {
				s = fixcode.Commands(fixcode.Command(v, "arg"))
			} else {
				s = fixcode.Commands(fixcode.Command("printf", "%s", v))
			}
			text, err := s.Render()
			if err != nil {
				t.Fatalf("%q: %v", v, err)
			}
			shape, err := shellshape.Parse(text)
			if err != nil {
				t.Fatalf("%q rendered as %s, which does not parse: %v", v, text, err)
			}
			want := fmt.Sprintf("call(%q, %q, %q)", "printf", "%s", v)
			if first {
				want = fmt.Sprintf("call(%q, %q)", v, "arg")
			}
			if len(shape.Stmts) != 1 || shape.Stmts[0] != want {
				t.Errorf("%q rendered as\n%s\nwhich is\n%s\nnot %s", v, text, shape, want)
			}
			if bad := firstUnprintable(text); bad >= 0 {
				t.Errorf("%q rendered with a character a terminal hides at byte %d: %q", v, bad, text)
			}
		}
	}
}

// A NUL cannot be in a shell word: no block is rendered.
func TestQuoteRefusesNUL(t *testing.T) {
	_, err := fixcode.Commands(fixcode.Command("rm", "/etc/gitlab-runner/x\x00/etc/shadow")).Render()
	if err == nil || !strings.Contains(err.Error(), "NUL") {
		t.Fatalf("a NUL was rendered: %v", err)
	}
}

// A value that looks like a secret is never printed in a command.
func TestSecretValuesAreRefused(t *testing.T) {
	for _, v := range []string{"x token=abcdefgh", "https://user:pass@kcp.example.invalid", "glrt-abcdefghijklmnop", "-----BEGIN PRIVATE KEY-----"} {
		if text, err := fixcode.Commands(fixcode.Command("kubectl", "--context", v)).Render(); err == nil {
			t.Errorf("%q was printed: %s", v, text)
		}
	}
	long := "/tmp/" + strings.Repeat("TestAVeryLongNameOfATestDirectory/", 5) + "kubeconfig.yaml"
	if _, err := fixcode.Commands(fixcode.Command("chmod", "0600", long)).Render(); err != nil {
		t.Errorf("a long path was taken for a secret: %v", err)
	}
}

// The block a script renders is the commands it holds, whatever the values:
// assignments, sudo, &&, |, a command's output, a heredoc.
func TestScriptStructureHoldsHostileValues(t *testing.T) {
	build := func(v string) fixcode.Script {
		kubectl := fixcode.Command("kubectl", "--context", v).Env("KUBECONFIG", fixcode.Data(v))
		guard := fixcode.Command("test", "").Words(fixcode.Output(fixcode.Command("kubectl", "config", "view", "--context").Words(fixcode.Var("ADMIN_CONTEXT")).Arg("-o", "jsonpath={.clusters[0].cluster.server}")))
		return fixcode.Lines(
			fixcode.Raw(`: "${ADMIN_CONTEXT:?set ADMIN_CONTEXT first}"`),
			fixcode.Set("NS", fixcode.Data(v)),
			fixcode.Run(guard.Arg("=", v)).And(kubectl.Arg("apply", "-f", "-").Stdin(fixcode.TOML(fixcode.TOMLTable("runners.kubernetes", fixcode.KV{Key: "namespace", Value: v})))),
			fixcode.Run(fixcode.Command("sudo", "chmod", "0600", v)).Pipe(fixcode.Command("tee", v).Quiet()),
			fixcode.Run(kubectl.Sudo().Arg("get", "ns", v)),
		)
	}
	benign, err := build("plain").Render()
	if err != nil {
		t.Fatal(err)
	}
	want := mustShape(t, benign)
	for _, v := range hostile.UTF8() {
		text, err := build(v).Render()
		if err != nil {
			t.Errorf("%q: %v", v, err)
			continue
		}
		got := mustShape(t, text)
		if len(got.Stmts) != len(want.Stmts) || len(got.Words) != len(want.Words) || len(got.Heredocs) != len(want.Heredocs) {
			t.Errorf("%q changed the structure:\n%s\nparsed as\n%s\nnot like\n%s", v, text, got, want)
			continue
		}
		for i, w := range want.Words {
			if g := got.Words[i]; g != strings.ReplaceAll(w, "plain", v) {
				t.Errorf("%q: word %d is %q, want %q\n%s", v, i, g, strings.ReplaceAll(w, "plain", v), text)
			}
		}
	}
}

// The heredoc's delimiter is no line of its body: a body line "EOF" does
// not end it, and bash reads the body whole.
func TestHeredocDelimiterIsNoLineOfItsBody(t *testing.T) {
	for _, body := range []string{"a\nEOF\nb", "EOF\nEOF_1\nEOF_2", "x"} {
		d := fixcode.Delimiter(body)
		for _, l := range strings.Split(body, "\n") {
			if l == d {
				t.Errorf("delimiter %q is a line of %q", d, body)
			}
		}
	}
}

// Pasted into a real interactive bash (history expansion on, as at a
// prompt), every hostile value arrives as one argument, itself.
func TestRealBashReadsEveryValueWhole(t *testing.T) {
	bash := tools.Need(t, "bash", "Debian's bash package")
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	marker := filepath.Join(dir, "pwned")
	var values []string
	for _, v := range hostile.Shell() {
		values = append(values, strings.ReplaceAll(v, "/tmp/pwned", marker))
	}
	var lines []fixcode.Line
	for _, v := range values {
		lines = append(lines, fixcode.Run(fixcode.Command("printf", "%s\\0", v).To(">>", fixcode.Data(out))))
	}
	text, err := fixcode.Lines(lines...).Render()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bash, "--norc", "--noprofile", "-i")
	cmd.Env = []string{"HOME=" + dir, "HISTFILE=/dev/null", "PATH=/usr/bin:/bin", "TERM=dumb"}
	cmd.Stdin = strings.NewReader("set -H\n" + text + "\nexit\n")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("bash: %v\n%s", err, stderr.String())
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSuffix(string(raw), "\x00"), "\x00")
	if len(got) != len(values) {
		t.Fatalf("bash printed %d values, not %d\n%s", len(got), len(values), stderr.String())
	}
	for i := range values {
		if got[i] != values[i] {
			t.Errorf("bash read %q as %q", values[i], got[i])
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("a value ran a command: %s exists", marker)
	}
}

func mustShape(t *testing.T, text string) *shellshape.Shape {
	t.Helper()
	s, err := shellshape.Parse(text)
	if err != nil {
		t.Fatalf("does not parse: %v\n%s", err, text)
	}
	return s
}

// FuzzQuote: any value but a NUL is one word of itself.
func FuzzQuote(f *testing.F) {
	for _, v := range hostile.Values {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v string) {
		text, err := fixcode.Commands(fixcode.Command("printf", v)).Render()
		if err != nil {
			return // a NUL, or a secret: refused, never printed
		}
		s, err := shellshape.Parse(text)
		if err != nil {
			t.Fatalf("%q rendered as %q, which does not parse: %v", v, text, err)
		}
		if want := fmt.Sprintf("call(%q, %q)", "printf", v); len(s.Stmts) != 1 || s.Stmts[0] != want {
			t.Fatalf("%q rendered as %q: %s", v, text, s)
		}
	})
}

// firstUnprintable is the offset of the first character of s a terminal
// would not show as itself (a newline is layout), or -1.
func firstUnprintable(s string) int {
	for i, r := range s {
		if r == utf8.RuneError || (!unicode.IsPrint(r) && r != '\n') {
			return i
		}
	}
	return -1
}
