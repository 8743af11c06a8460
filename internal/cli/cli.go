// Package cli is doctor's command line: flags and subcommands only. Checks
// live in checks/, ranking and rendering in report/.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/all"
	"github.com/socialwebcomputer/doctor/report"
)

// Version is stamped at build time with -ldflags "-X …/internal/cli.Version=…".
var Version = "0.1.0-dev"

// IO is where a command writes, and whether stdout is a terminal.
type IO struct {
	Out, Err io.Writer
	TTY      bool
	Getenv   func(string) string
}

// Main runs one doctor command and returns its exit code.
func Main(args []string, io IO) int {
	if io.Getenv == nil {
		io.Getenv = os.Getenv
	}
	if len(args) == 0 {
		usage(io.Err)
		return report.ExitCantRun
	}
	switch args[0] {
	case "run":
		return runCmd(args[1:], io)
	case "checks":
		return checksCmd(io)
	case "explain":
		return explainCmd(args[1:], io)
	case "version", "--version":
		fmt.Fprintf(io.Out, "doctor %s\n", Version)
		return report.ExitOK
	case "help", "-h", "--help":
		usage(io.Out)
		return report.ExitOK
	}
	fmt.Fprintf(io.Err, "doctor: unknown command %q\n", args[0])
	usage(io.Err)
	return report.ExitCantRun
}

func usage(w io.Writer) {
	fmt.Fprint(w, `doctor diagnoses a GitLab Runner and the cluster its jobs run in.

Commands:
  doctor run [flags]     run the checks; exit 0 ok, 1 warning, 2 error or critical, 3 could not run
  doctor checks          the catalog: ID, severity, executors, title
  doctor explain ID      a check's cause, symptom, fix and verification command
  doctor version

Run "doctor run --help" for its flags.
`)
}

func runCmd(args []string, io IO) int {
	fs := pflag.NewFlagSet("doctor run", pflag.ContinueOnError)
	fs.SetOutput(io.Err)
	var (
		root      = fs.String("root", "/", "read every local file (/proc, /etc, home directories, the kubeconfig) under this directory")
		pid       = fs.Int("runner-pid", 0, "diagnose this gitlab-runner process (default: discover)")
		runner    = fs.String("runner", "", "diagnose only this [[runners]] entry: its name, or its position in config.toml from 1")
		config    = fs.String("config", "", "config.toml to read (default: located as the runner does)")
		kubecfg   = fs.String("kubeconfig", "", "kubeconfig path list to examine (default: the runner's KUBECONFIG)")
		now       = fs.String("now", "", "the clock for every time comparison, RFC3339 (default: now)")
		offline   = fs.Bool("offline", false, "no network and no API calls; checks that need them are skipped")
		output    = fs.StringP("output", "o", "table", "table, json or markdown")
		only      = fs.StringSlice("only", nil, "run only these check IDs (and what they require)")
		skip      = fs.StringSlice("skip", nil, "do not run these check IDs")
		timeout   = fs.Duration("timeout", 30*time.Second, "deadline for the whole run")
		ignores   = fs.StringArray("ignore", nil, "ID:reason — hide a check's findings; the reason is required (repeatable)")
		showSkips = fs.Bool("verbose", false, "also list checks that passed or were skipped (table output)")
		deep      = fs.Bool("deep", false, "also create a probe pod in the runner namespace and exec through the full path (the only mutating mode; the pod is always deleted)")
	)
	settings := registerSettings(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return report.ExitOK
		}
		// pflag's ContinueOnError returns the error without printing it.
		fmt.Fprintf(io.Err, "doctor: %v (see doctor run --help)\n", err)
		return report.ExitCantRun
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(io.Err, "doctor: "+format+"\n", a...)
		return report.ExitCantRun
	}
	if fs.NArg() > 0 {
		return fail("unexpected argument %q", fs.Arg(0))
	}
	if !validFormat(*output) {
		return fail("unknown output format %q (want table, json or markdown)", *output)
	}
	absRoot, err := filepath.Abs(*root)
	if err != nil {
		return fail("--root %s: %v", *root, err)
	}
	if st, err := os.Stat(absRoot); err != nil || !st.IsDir() {
		return fail("--root %s: not a readable directory", *root)
	}
	if _, err := os.ReadDir(absRoot); err != nil {
		return fail("--root %s: %v", *root, err)
	}
	if *deep && *offline {
		return fail("--deep needs the cluster; it cannot be combined with --offline")
	}
	if *deep {
		fmt.Fprintln(io.Err, "doctor: --deep creates a probe pod in the runner namespace and deletes it when done")
	}
	env := &checks.Env{Root: absRoot, Offline: *offline, Deep: *deep, RunnerPID: *pid,
		ConfigPath: *config, KubeconfigPath: *kubecfg, Settings: settings()}
	if *now != "" {
		t, err := time.Parse(time.RFC3339, *now)
		if err != nil {
			return fail("--now %q: want RFC3339, e.g. 2026-11-29T12:00:00Z", *now)
		}
		env.Clock = t
	}
	ign, err := parseIgnores(*ignores)
	if err != nil {
		return fail("%v", err)
	}
	catalog := all.Checks()
	known := map[string]bool{}
	for _, c := range catalog {
		known[c.ID] = true
	}
	for _, ig := range ign {
		if !known[ig.Check] {
			return fail("--ignore %s: no such check (see `doctor checks`)", ig.Check)
		}
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	started := env.Now()
	res, err := checks.Run(ctx, env, catalog, checks.Options{Only: *only, Skip: *skip, Runner: *runner, Timeout: *timeout})
	if err != nil {
		return fail("%v", err)
	}
	rep := report.Build(res, ign, Version, started)
	colour := io.TTY && io.Getenv("NO_COLOR") == ""
	if *showSkips {
		rep.Verbose = true
	}
	if err := report.Render(io.Out, rep, *output, colour); err != nil {
		return fail("%v", err)
	}
	return rep.Summary.ExitCode
}

func validFormat(f string) bool {
	for _, x := range report.Formats {
		if f == x {
			return true
		}
	}
	return f == "md"
}

// parseIgnores reads --ignore ID:reason; a reason is required so that every
// suppression says why it exists.
func parseIgnores(vals []string) ([]report.Ignore, error) {
	var out []report.Ignore
	for _, v := range vals {
		id, reason, _ := strings.Cut(v, ":")
		id, reason = strings.TrimSpace(id), strings.TrimSpace(reason)
		if id == "" || reason == "" {
			return nil, fmt.Errorf("--ignore %q: want ID:reason, and the reason is required", v)
		}
		out = append(out, report.Ignore{Check: id, Reason: reason})
	}
	return out, nil
}

func checksCmd(io IO) int {
	catalog := all.Checks()
	if err := checks.Validate(catalog); err != nil {
		fmt.Fprintf(io.Err, "doctor: invalid catalog: %v\n", err)
		return report.ExitCantRun
	}
	sorted := append([]*checks.Check(nil), catalog...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].ID < sorted[j].ID })
	fmt.Fprintf(io.Out, "%-24s %-9s %-12s %s\n", "ID", "SEVERITY", "EXECUTORS", "TITLE")
	for _, c := range sorted {
		fmt.Fprintf(io.Out, "%-24s %-9s %-12s %s\n", c.ID, c.Severity, c.ExecutorList(), c.Title)
	}
	return report.ExitOK
}

func explainCmd(args []string, io IO) int {
	if len(args) != 1 {
		fmt.Fprintln(io.Err, "doctor: usage: doctor explain ID (see `doctor checks`)")
		return report.ExitCantRun
	}
	for _, c := range all.Checks() {
		if c.ID != args[0] {
			continue
		}
		fmt.Fprintf(io.Out, "%s — %s (default severity %s)\n\nCause:\n%s\n\nSymptom:\n%s\n\nFix:\n%s\n\nVerify:\n%s\n",
			c.ID, c.Title, c.Severity, indent(c.Doc.Cause), indent(c.Doc.Symptom), indent(c.Doc.Fix), indent(c.Doc.Verify))
		if len(c.Explains) > 0 {
			fmt.Fprintf(io.Out, "\nExplains: %s\n", strings.Join(c.Explains, ", "))
		}
		if req := checks.RequiredChecks(c); len(req) > 0 {
			ids := make([]string, len(req))
			for i, r := range req {
				ids[i] = r.ID
			}
			fmt.Fprintf(io.Out, "Requires: %s\n", strings.Join(ids, ", "))
		}
		fmt.Fprintf(io.Out, "Docs: %s\n", checks.DocsAnchor(c.ID))
		return report.ExitOK
	}
	fmt.Fprintf(io.Err, "doctor: no check %q (see `doctor checks`)\n", args[0])
	return report.ExitCantRun
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimSpace(s), "\n", "\n  ")
}
