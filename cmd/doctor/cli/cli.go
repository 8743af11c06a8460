// Package cli is doctor's command line: commands and flags (spf13/cobra)
// only. Checks live in checks/, ranking and rendering in report/.
package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/internal/text/safetext"
	"github.com/socialwebcomputer/doctor/report"
)

// Version is stamped at build time with -ldflags "-X …/cmd/doctor/cli.Version=…";
// unstamped, `doctor version` takes it from the module's build info.
var Version = defaultVersion

const defaultVersion = "0.1.0-dev"

// IO is where a command writes, and what it writes to.
type IO struct {
	// In is stdin, which doctor why - reads; nil has none.
	In       io.Reader
	Out, Err io.Writer
	// TTY says stdout is a terminal (colour), ErrTTY that stderr is one.
	TTY, ErrTTY bool
	// Width is stdout's terminal width in columns; 0 means $COLUMNS, else
	// report.DefaultWidth (the width of output that goes to no terminal).
	Width  int
	Getenv func(string) string
	// Program is doctor as the operator invoked it, which a fix's verify
	// line names (ProgramName); "" is "doctor", the one on PATH.
	Program string
	// Checks are the checks doctor run and analyze run; nil is the registry
	// (all.Checks). The scenario tests give a golden the catalog it was
	// written with, and prove a check added to it changes no scenario.
	Checks []*checks.Check
}

// Main runs one doctor command and returns its exit code: help is 0 on
// stdout; a bad command, flag or argument is 3 on stderr; doctor run
// returns its report's code.
func Main(args []string, io IO) int {
	if io.Getenv == nil {
		io.Getenv = os.Getenv
	}
	if args == nil {
		args = []string{} // nil would make cobra read os.Args
	}
	a := &app{io: io}
	root := a.rootCommand()
	root.SetArgs(args)
	cmd, err := root.ExecuteC()
	if err != nil {
		return a.fail(cmd, err)
	}
	return a.code
}

// app is one invocation: its streams and the code its command ends with.
type app struct {
	io   IO
	code int
}

// width is the terminal's, $COLUMNS, or the default for no terminal.
func (a *app) width() int {
	if a.io.Width > 0 {
		return a.io.Width
	}
	if a.io.Getenv == nil {
		return report.DefaultWidth
	}
	if n, err := strconv.Atoi(strings.TrimSpace(a.io.Getenv("COLUMNS"))); err == nil && n > 0 {
		return n
	}
	return report.DefaultWidth
}

// utf8 says the locale's character set is UTF-8 (LC_ALL, else LC_CTYPE,
// else LANG, as setlocale reads them).
func (a *app) utf8() bool {
	for _, k := range []string{"LC_ALL", "LC_CTYPE", "LANG"} {
		if v := a.io.Getenv(k); v != "" {
			v = strings.ToLower(v)
			return strings.Contains(v, "utf-8") || strings.Contains(v, "utf8")
		}
	}
	return false
}

// exitError ends a command with a code; msg, when set, goes to stderr.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// usageError is a bad invocation: exit 3, the message on stderr.
func usageError(format string, a ...any) error {
	return &exitError{code: report.ExitCantRun, msg: fmt.Sprintf(format, a...)}
}

// fail prints what went wrong and returns the exit code. A message quotes
// what doctor was given or read (a path, a file's line, a bundle's
// manifest, a server's answer): it is printed with its control characters
// escaped, its own newlines and tabs kept.
func (a *app) fail(cmd *cobra.Command, err error) int {
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.msg != "" {
			fmt.Fprintf(a.io.Err, "doctor: %s\n", safetext.Lines(strings.TrimRight(ee.msg, "\n")))
		}
		return ee.code
	}
	// cobra's own: an unknown command (with its "Did you mean"), a flag
	// that does not parse, a wrong number of arguments.
	fmt.Fprintf(a.io.Err, "doctor: %s\n", safetext.Lines(strings.TrimRight(err.Error(), "\n")))
	path := "doctor"
	if cmd != nil {
		path = cmd.CommandPath()
	}
	fmt.Fprintf(a.io.Err, "Run '%s --help' for usage.\n", path)
	return report.ExitCantRun
}

func (a *app) rootCommand() *cobra.Command {
	var showVersion bool
	root := &cobra.Command{
		Use:   "doctor",
		Short: "Diagnose a GitLab Runner and the cluster its jobs run in",
		Long: `doctor diagnoses a GitLab Runner and the cluster its jobs run in: each check
probes one documented cause, and the report ranks the findings so the root
cause comes first. Exit codes: 0 ok, 1 warning or incomplete, 2 error or
critical, 3 could not run.`,
		SilenceErrors: true,
		SilenceUsage:  true,
		// No Args: cobra then rejects an unknown command with suggestions.
		RunE: func(cmd *cobra.Command, args []string) error {
			if showVersion {
				return a.printVersion(cmd.OutOrStdout(), "")
			}
			fmt.Fprint(a.io.Err, cmd.UsageString())
			return usageError("no command given")
		},
	}
	root.SetOut(a.io.Out)
	root.SetErr(a.io.Err)
	root.Flags().BoolVar(&showVersion, "version", false, "print the version, as doctor version does")
	root.SetFlagErrorFunc(flagError)
	root.SetUsageFunc(a.usage)
	root.SetHelpFunc(a.help)
	root.AddCommand(a.runCommand(), a.analyzeCommand(), a.whyCommand(), a.jobCommand(), a.traceCommand(), a.checksCommand(), a.explainCommand(), a.versionCommand())
	root.SetHelpCommand(helpCommand())
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	fixCompletionCommand(root)
	setExamples(root)
	return root
}

// flagError adds "did you mean" to an unknown flag.
func flagError(cmd *cobra.Command, err error) error {
	msg := err.Error()
	name, ok := strings.CutPrefix(msg, "unknown flag: --")
	if !ok {
		return err
	}
	var names []string
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			names = append(names, f.Name)
		}
	})
	if s := suggest(name, names); len(s) > 0 {
		for i := range s {
			s[i] = "--" + s[i]
		}
		return errors.New(msg + didYouMean(s))
	}
	return err
}

// helpCommand is cobra's help command, except that an unknown topic is an
// error (cobra prints the root's help and exits 0).
func helpCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "help [command]",
		Short: "Help about any command",
		ValidArgsFunction: func(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			cmd, _, err := c.Root().Find(args)
			if err != nil {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			var out []cobra.Completion
			for _, sub := range cmd.Commands() {
				if sub.IsAvailableCommand() && strings.HasPrefix(sub.Name(), toComplete) {
					out = append(out, cobra.CompletionWithDesc(sub.Name(), sub.Short))
				}
			}
			return out, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(c *cobra.Command, args []string) error {
			cmd, rest, err := c.Root().Find(args)
			if err != nil || len(rest) > 0 {
				topic := strings.Join(args, " ")
				var names []string
				for _, sub := range c.Root().Commands() {
					if sub.IsAvailableCommand() {
						names = append(names, sub.Name())
					}
				}
				return usageError("unknown help topic %q%s", topic, didYouMean(suggest(args[len(args)-1], names)))
			}
			cmd.InitDefaultHelpFlag()
			return cmd.Help()
		},
	}
}

// fixCompletionCommand makes `doctor completion` without a known shell an
// error, not a help page that exits 0.
func fixCompletionCommand(root *cobra.Command) {
	for _, c := range root.Commands() {
		if c.Name() != "completion" {
			continue
		}
		var shells []string
		for _, s := range c.Commands() {
			shells = append(shells, s.Name())
		}
		c.Use = "completion " + strings.Join(shells, "|")
		c.Args = cobra.ArbitraryArgs
		c.RunE = func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageError("doctor completion needs a shell: %s", strings.Join(shells, ", "))
			}
			return usageError("no completion for shell %q (want %s)%s", args[0], strings.Join(shells, ", "), didYouMean(suggest(args[0], shells)))
		}
	}
}

// program is the first word of a verify line: doctor as it was invoked.
func (a *app) program() string {
	if a.io.Program == "" {
		return "doctor"
	}
	return a.io.Program
}

// ProgramName is how a verify line invokes this doctor, from the name it
// was run by (os.Args[0]): "doctor" when that finds this binary on PATH,
// or it was run by a name without a slash (found on PATH); else the path
// it was run by, absolute or relative to the working directory as the
// operator typed it ("./doctor" after the README's build), so that the
// pasted verify runs the same doctor.
func ProgramName(arg0 string, lookPath func(string) (string, error), self func() (string, error)) string {
	if strings.Contains(arg0, "/go-build") {
		return "doctor" // go run's binary, gone when it exits
	}
	if !strings.Contains(arg0, "/") {
		if arg0 == "" {
			return "doctor"
		}
		return arg0
	}
	onPath, err := lookPath("doctor")
	if err != nil {
		return arg0
	}
	me, err := self()
	if err != nil {
		return arg0
	}
	a, errA := filepath.EvalSymlinks(onPath)
	b, errB := filepath.EvalSymlinks(me)
	if errA == nil && errB == nil && a == b {
		return "doctor"
	}
	return arg0
}
