package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/socialwebcomputer/doctor/internal/text/wrap"
	"github.com/socialwebcomputer/doctor/report"
	"github.com/socialwebcomputer/doctor/testkit/cmdtest"
)

// streamCase is one invocation and where its answer must go: help is exit
// 0 on stdout with nothing on stderr; an error is exit 3 on stderr with
// nothing on stdout.
type streamCase struct {
	args []string
	code int
	says string // text the stream must carry
}

func (c streamCase) check(t *testing.T) {
	t.Helper()
	code, out, errs := runDoctor(c.args...)
	name := strings.Join(c.args, " ")
	if code != c.code {
		t.Errorf("doctor %s: exit %d, want %d\nstdout: %s\nstderr: %s", name, code, c.code, out, errs)
	}
	stream, other, want, notWant := out, errs, "stdout", "stderr"
	if c.code != report.ExitOK {
		stream, other, want, notWant = errs, out, "stderr", "stdout"
	}
	if stream == "" {
		t.Errorf("doctor %s: nothing on %s", name, want)
	}
	if other != "" {
		t.Errorf("doctor %s: writes to %s: %q", name, notWant, other)
	}
	if !strings.Contains(stream, c.says) {
		t.Errorf("doctor %s: %s does not say %q:\n%s", name, want, c.says, stream)
	}
}

// Every help path of every command: --help, -h and doctor help CMD, all on
// stdout with exit 0 (doctor run --help wrote to stderr; doctor explain
// --help looked for a check named --help; doctor version --help printed
// the version).
// commandPaths are the arguments that name each command of the tree, the
// root's (none) first.
func commandPaths() [][]string {
	var paths [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		paths = append(paths, path)
		for _, sub := range c.Commands() {
			if sub.IsAvailableCommand() || sub.Name() == "help" {
				walk(sub, append(append([]string{}, path...), sub.Name()))
			}
		}
	}
	walk(CommandTree(), nil)
	return paths
}

func TestEveryHelpPath(t *testing.T) {
	paths := commandPaths()
	if len(paths) < 10 {
		t.Fatalf("only %d commands in the tree: %v", len(paths), paths)
	}
	for _, p := range paths {
		use := "doctor"
		if len(p) > 0 {
			use = "doctor " + strings.Join(p, " ")
		}
		for _, args := range [][]string{append(append([]string{}, p...), "--help"), append(append([]string{}, p...), "-h"), append([]string{"help"}, p...)} {
			streamCase{args, report.ExitOK, "Usage:\n  " + use}.check(t)
		}
	}
	// Help wins over the rest of the line, as cobra has it.
	streamCase{[]string{"run", "--only", "cert-expiry", "--help"}, report.ExitOK, "--request-timeout"}.check(t)
	streamCase{[]string{"explain", "cert-expiry", "--help"}, report.ExitOK, "doctor explain ID"}.check(t)
}

// Every flag of every command refuses a missing or malformed value: exit 3,
// on stderr, with the flag named.
func TestEveryFlagError(t *testing.T) {
	var walk func(c *cobra.Command, path []string)
	n := 0
	walk = func(c *cobra.Command, path []string) {
		c.LocalNonPersistentFlags().VisitAll(func(f *pflag.Flag) {
			if f.Name == "help" {
				return
			}
			n++
			args := append(append([]string{}, path...), "--"+f.Name)
			switch f.Value.Type() {
			case "bool":
				streamCase{append(args[:len(args)-1:len(args)-1], "--"+f.Name+"=maybe"), report.ExitCantRun, `invalid argument "maybe" for "`}.check(t)
			default:
				streamCase{args, report.ExitCantRun, "flag needs an argument: --" + f.Name}.check(t)
			}
			if f.Shorthand != "" && f.Value.Type() != "bool" {
				streamCase{append(append([]string{}, path...), "-"+f.Shorthand), report.ExitCantRun, "flag needs an argument: '" + f.Shorthand + "' in -" + f.Shorthand}.check(t)
			}
		})
		for _, sub := range c.Commands() {
			if sub.IsAvailableCommand() {
				walk(sub, append(append([]string{}, path...), sub.Name()))
			}
		}
		// An unknown flag, on every command.
		streamCase{append(append([]string{}, path...), "--no-such-flag"), report.ExitCantRun, "unknown flag: --no-such-flag"}.check(t)
	}
	walk(CommandTree(), nil)
	if n < 30 {
		t.Errorf("only %d flags checked", n)
	}
}

// Bad values, arguments and commands: each exit 3 on stderr, saying what
// was wrong, and "did you mean" for a misspelt name.
func TestUsageErrors(t *testing.T) {
	good := cmdtest.FixtureRoot(t, "healthy")
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		cmdtest.NoErr(t, os.WriteFile(p, []byte(content), 0o644))
		return p
	}
	run := func(args ...string) []string {
		return append([]string{"run", "--root", good, "--offline", "--now", "2026-11-29T12:00:00Z"}, args...)
	}
	for _, c := range []streamCase{
		{[]string{}, report.ExitCantRun, "no command given"},
		{[]string{"frobnicate"}, report.ExitCantRun, `unknown command "frobnicate" for "doctor"`},
		{[]string{"chekcs"}, report.ExitCantRun, "Did you mean this?\n\tchecks"},
		{[]string{"rnu"}, report.ExitCantRun, "Did you mean this?\n\trun"},
		{[]string{"help", "nosuch"}, report.ExitCantRun, `unknown help topic "nosuch"`},
		{[]string{"help", "chekcs"}, report.ExitCantRun, "Did you mean this?\n\tchecks"},
		{[]string{"--verison"}, report.ExitCantRun, "Did you mean this?\n\t--version"},
		{[]string{"run", "--kubeconfg", "x"}, report.ExitCantRun, "Did you mean this?\n\t--kubeconfig"},
		{[]string{"run", "--runner-pid", "many"}, report.ExitCantRun, `invalid argument "many" for "--runner-pid"`},
		{[]string{"run", "--timeout", "soon"}, report.ExitCantRun, `invalid argument "soon" for "--timeout"`},
		{[]string{"run", "--request-timeout", "soon"}, report.ExitCantRun, "want a duration (5s, 1m) or whole seconds"},
		{[]string{"run", "--request-timeout", "-1s"}, report.ExitCantRun, "a timeout cannot be negative"},
		{[]string{"run", "-v", "loud"}, report.ExitCantRun, `invalid argument "loud" for "-v, --v"`},
		{[]string{"run", "--v=-1", "--root", good}, report.ExitCantRun, "the level cannot be negative"},
		{[]string{"run", "--offline=maybe"}, report.ExitCantRun, `invalid argument "maybe" for "--offline"`},
		{run("-o", "xml"), report.ExitCantRun, `unknown output format "xml"`},
		{run("-o", "yml"), report.ExitCantRun, "Did you mean this?\n\tyaml"},
		{run("--now", "yesterday"), report.ExitCantRun, "--now \"yesterday\": want RFC3339"},
		{run("extra"), report.ExitCantRun, `unexpected argument "extra"`},
		{[]string{"run", "--root", filepath.Join(dir, "nope")}, report.ExitCantRun, "not a readable directory"},
		{run("--deep"), report.ExitCantRun, "--deep needs the cluster"},
		{run("--only", "cert-expiri"), report.ExitCantRun, "Did you mean this?\n\tcert-expiry"},
		{run("--only", "config-decode,no-such-check"), report.ExitCantRun, `--only: no check "no-such-check"`},
		{run("--skip", "kubeconfig-fil"), report.ExitCantRun, "Did you mean this?\n\tkubeconfig-file"},
		{run("--runner", "nobody"), report.ExitCantRun, "--runner nobody matches no [[runners]]"},
		{run("--ignore", "cert-expiry"), report.ExitCantRun, "the reason is required"},
		{run("--ignore", "cert-expiry: "), report.ExitCantRun, "the reason is required"},
		{run("--ignore", "cert-expiry:1: "), report.ExitCantRun, "the reason is required"},
		{run("--ignore", ":because"), report.ExitCantRun, "the check ID is empty"},
		{run("--ignore", "cert-expiry::because"), report.ExitCantRun, "the runner is empty"},
		{run("--ignore", "cert-expiry@xyz:because"), report.ExitCantRun, "a fingerprint is 12 hex digits"},
		{run("--ignore", "cert-expiri:because"), report.ExitCantRun, "Did you mean this?\n\tcert-expiry"},
		{run("--config-file", filepath.Join(dir, "missing.yaml")), report.ExitCantRun, "no such file or directory"},
		{run("--config-file", write("bad.yaml", "ignores: [")), report.ExitCantRun, "bad.yaml"},
		{run("--config-file", write("key.yaml", "ignore:\n- check: cert-expiry\n  reason: x\n")), report.ExitCantRun, `unknown field "ignore"`},
		{run("--config-file", write("field.yaml", "ignores:\n- check: cert-expiry\n  reason: x\n  until: 2027-01-01\n")), report.ExitCantRun, `unknown field "until"`},
		{run("--config-file", write("reason.yaml", "ignores:\n- check: cert-expiry\n")), report.ExitCantRun, "ignores[0] (cert-expiry): reason is required"},
		{run("--config-file", write("check.yaml", "ignores:\n- reason: x\n")), report.ExitCantRun, "ignores[0]: check is required"},
		{run("--config-file", write("unknown.yaml", "ignores:\n- check: cert-expiri\n  reason: x\n")), report.ExitCantRun, "Did you mean this?\n\tcert-expiry"},
		{run("--config-file", write("date.yaml", "ignores:\n- check: cert-expiry\n  reason: x\n  expires: next week\n")), report.ExitCantRun, `expires "next week": want a date`},
		{run("--config-file", write("fp.yaml", "ignores:\n- check: cert-expiry\n  reason: x\n  fingerprint: abc\n")), report.ExitCantRun, "a fingerprint is 12 hex digits"},
		{[]string{"checks", "extra"}, report.ExitCantRun, `unexpected argument "extra"`},
		{[]string{"checks", "-o", "xml"}, report.ExitCantRun, `unknown output format "xml" (want table, wide, json, yaml)`},
		{[]string{"checks", "-o", "jsn"}, report.ExitCantRun, "Did you mean this?\n\tjson"},
		{[]string{"explain"}, report.ExitCantRun, "doctor explain takes one check ID, got 0"},
		{[]string{"explain", "cert-expiry", "api-auth"}, report.ExitCantRun, "doctor explain takes one check ID, got 2"},
		{[]string{"explain", "no-such-check"}, report.ExitCantRun, `no check "no-such-check"`},
		{[]string{"explain", "cert-expiri"}, report.ExitCantRun, "Did you mean this?\n\tcert-expiry"},
		{[]string{"version", "extra"}, report.ExitCantRun, `unexpected argument "extra"`},
		{[]string{"version", "-o", "xml"}, report.ExitCantRun, `unknown output format "xml" (want text, json, yaml)`},
		{[]string{"completion"}, report.ExitCantRun, "doctor completion needs a shell"},
		{[]string{"completion", "bashh"}, report.ExitCantRun, "Did you mean this?\n\tbash"},
		{[]string{"completion", "bash", "extra"}, report.ExitCantRun, `unknown command "extra"`},
	} {
		c.check(t)
	}
}

// What answers on stdout with exit 0 besides help.
func TestStdoutCommands(t *testing.T) {
	for _, c := range []streamCase{
		{[]string{"version"}, report.ExitOK, "doctor " + defaultVersion},
		{[]string{"--version"}, report.ExitOK, "doctor " + defaultVersion},
		{[]string{"version", "-o", "json"}, report.ExitOK, `"go": "go`},
		{[]string{"version", "-o", "yaml"}, report.ExitOK, "go: go"},
		{[]string{"checks"}, report.ExitOK, "cert-expiry"},
		{[]string{"checks", "-o", "wide"}, report.ExitOK, "REQUIRES"},
		{[]string{"explain", "cert-expiry"}, report.ExitOK, "Verify:\n  Set these to the runner's own values first"},
		{[]string{"completion", "bash"}, report.ExitOK, "__start_doctor"},
		{[]string{"completion", "zsh"}, report.ExitOK, "#compdef doctor"},
		{[]string{"completion", "fish"}, report.ExitOK, "complete -c doctor"},
		{[]string{"completion", "powershell"}, report.ExitOK, "Register-ArgumentCompleter"},
	} {
		c.check(t)
	}
}

// Help reads as kubectl's does at any width: every command has Examples;
// no boolean flag shows "[=true|false]"; below flagColumnsFrom columns a
// flag's meaning is on indented lines under its names, from it beside
// them; and a terminal of 80 or 200 columns breaks no word, flag, path or
// URL (wrap.Breaks; an example's command is a block, printed whole).
func TestHelpAtEveryWidth(t *testing.T) {
	paths := commandPaths()
	for _, p := range paths {
		name := strings.TrimSpace("doctor " + strings.Join(p, " "))
		for _, width := range []int{80, 200} {
			var out, errb bytes.Buffer
			code := Main(append(append([]string{}, p...), "--help"), IO{Out: &out, Err: &errb, Width: width, Getenv: func(string) string { return "" }})
			help := out.String()
			if code != 0 || errb.Len() > 0 {
				t.Fatalf("%s --help: exit %d, stderr %q", name, code, errb.String())
			}
			if !strings.Contains(help, "\nExamples:\n  # ") {
				t.Errorf("%s --help has no Examples:\n%s", name, help)
			}
			if strings.Contains(help, "[=true|false]") {
				t.Errorf("%s --help shows [=true|false]:\n%s", name, help)
			}
			examples := map[string]bool{}
			section := ""
			lines := strings.Split(help, "\n")
			for i, l := range lines {
				if strings.HasSuffix(l, ":") && !strings.HasPrefix(l, " ") {
					section = l
					continue
				}
				if section == "Examples:" && !strings.HasPrefix(strings.TrimSpace(l), "#") {
					examples[l] = true
				}
				if section == "Flags:" && (strings.HasPrefix(l, "  -") || strings.HasPrefix(l, "      --")) {
					under := i+1 < len(lines) && strings.HasPrefix(lines[i+1], "        ") && strings.TrimSpace(lines[i+1]) != ""
					if width < flagColumnsFrom && (!under || len(strings.Fields(l)) > 3) {
						t.Errorf("%s --help at %d: flag line %q does not have its meaning under it", name, width, l)
					}
					if width >= flagColumnsFrom && len(strings.Fields(l)) < 3 {
						t.Errorf("%s --help at %d: flag line %q has no meaning beside it", name, width, l)
					}
				}
			}
			for _, b := range wrap.Breaks(help, width, func(l string) bool { return examples[l] }) {
				t.Errorf("%s --help at %d: line %d breaks %q", name, width, b.Line, b.Token)
			}
		}
	}
}
