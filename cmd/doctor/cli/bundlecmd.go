package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/cmd/doctor/app/bundle"
	"github.com/socialwebcomputer/doctor/internal/fixcode"
	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/internal/redact"
	"github.com/socialwebcomputer/doctor/report"
)

// startBundle prepares a run for --bundle: a tape on the Env, and the clock
// fixed at the start, so that analyze, which replays at that instant, makes
// every time comparison the live run made.
func startBundle(env *hostio.Env) {
	env.Tape = hostio.NewTape()
	if env.Clock.IsZero() {
		env.Clock = time.Now().UTC().Truncate(time.Second)
	}
}

// writeBundle saves what the run looked at, redacted as it is written.
func writeBundle(p string, cmd *cobra.Command, f *runFlags, env *hostio.Env, rep *report.Report, ignores []report.Ignore) error {
	var js bytes.Buffer
	if err := report.Render(&js, rep, "json", false); err != nil {
		return err
	}
	m := bundle.Manifest{
		Doctor: rep.Doctor.Version, Args: changedFlags(cmd), Host: rep.Host, Root: f.root, Clock: env.Clock,
		Env: bundle.EnvInputs{Offline: env.Offline, RunnerPID: env.RunnerPID, ConfigPath: env.ConfigPath,
			KubeconfigPath: env.KubeconfigPath, Context: env.ContextOverride, Namespace: env.NamespaceOverride,
			RequestTimeout: env.RequestTimeout, Settings: env.Settings},
		Only: f.only, Skip: f.skip, Runner: f.runner, Ignores: ignores,
	}
	if err := bundle.Write(p, m, env.Tape, js.Bytes()); err != nil {
		return fmt.Errorf("--bundle %s: %w", p, err)
	}
	return nil
}

// changedFlags are the flags given to this run, values redacted, for the
// bundle's manifest and the markdown header.
func changedFlags(cmd *cobra.Command) []string {
	var out []string
	cmd.Flags().VisitAll(func(fl *pflag.Flag) {
		if !fl.Changed {
			return
		}
		v := redact.Text(fl.Value.String())
		switch {
		case fl.Value.Type() == "bool" && v == "true":
			out = append(out, "--"+fl.Name)
		case isSlice(fl.Value):
			for _, e := range fl.Value.(pflag.SliceValue).GetSlice() {
				out = append(out, "--"+fl.Name, fixcode.Quote(redact.Text(e)))
			}
		default:
			out = append(out, "--"+fl.Name, fixcode.Quote(v))
		}
	})
	return out
}

// analyzeFlags are doctor analyze's: what to show of the bundle's run.
type analyzeFlags struct {
	output, runner string
	only, skip     []string
	ignores        []string
	verbose        bool
	docsURL        string
	timeout        time.Duration
}

func (a *app) analyzeCommand() *cobra.Command {
	f := &analyzeFlags{}
	cmd := &cobra.Command{
		Use:   "analyze BUNDLE.tar.gz",
		Short: "Re-run every check offline on a bundle that doctor run --bundle saved",
		Long: `Re-run the checks on a bundle that doctor run --bundle saved on another host:
every file read, every probe and every API answer comes from the bundle, at
the instant the bundle was made, so the findings (fingerprints included)
are those of the live run. Nothing on this machine is read, and nothing is
sent to any network. The exit code is the findings', as for doctor run.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError("doctor analyze takes one bundle file (doctor run --bundle FILE.tar.gz makes one)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			code, err := a.analyze(args[0], f)
			a.code = code
			return err
		},
	}
	fs := cmd.Flags()
	fs.SortFlags = false
	fs.StringVarP(&f.output, "output", "o", "table", "the output `FORMAT`: table, wide, json, yaml or markdown")
	fs.StringVar(&f.runner, "runner", "", "show only this [[runners]] entry, by `NAME|INDEX`")
	fs.StringSliceVar(&f.only, "only", nil, "run only these check `IDS` (and what they require)")
	fs.StringSliceVar(&f.skip, "skip", nil, "do not run these check `IDS`")
	fs.StringArrayVar(&f.ignores, "ignore", nil, "hide findings: `ID[:RUNNER][@FINGERPRINT]:REASON` (repeatable)")
	fs.BoolVar(&f.verbose, "verbose", false, "list every check's status under the findings")
	fs.DurationVar(&f.timeout, "timeout", 30*time.Second, "deadline for the whole analysis")
	docsFlag(fs, &f.docsURL)
	_ = cmd.RegisterFlagCompletionFunc("only", completeCheckList)
	_ = cmd.RegisterFlagCompletionFunc("skip", completeCheckList)
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(report.Formats, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func (a *app) analyze(p string, f *analyzeFlags) (int, error) {
	if !report.ValidFormat(f.output) {
		return 0, usageError("unknown output format %q (want %s)", f.output, strings.Join(report.Formats, ", "))
	}
	for flag, ids := range map[string][]string{"--only": f.only, "--skip": f.skip} {
		if err := validCheckIDs(flag, ids); err != nil {
			return 0, err
		}
	}
	ignores, err := parseIgnores(f.ignores)
	if err != nil {
		return 0, err
	}
	// --timeout is the whole analysis's: reading the bundle counts.
	start := time.Now()
	m, _, tape, err := bundle.Read(p)
	if err != nil {
		return 0, &exitError{code: report.ExitCantRun, msg: err.Error()}
	}
	// The live run's selection and ignores, unless these flags say otherwise.
	for _, ig := range m.Ignores {
		if ig.Expires != "" {
			if ig.ExpiresAt, err = parseExpiry(ig.Expires); err != nil {
				return 0, &exitError{code: report.ExitCantRun, msg: fmt.Sprintf("%s: manifest.json: ignore of %s: %v", p, ig.Check, err)}
			}
		}
		ig.Matched = 0
		ignores = append(ignores, ig)
	}
	if len(f.only) == 0 {
		f.only = m.Only
	}
	if len(f.skip) == 0 {
		f.skip = m.Skip
	}
	if f.runner == "" {
		f.runner = m.Runner
	}
	// The files go under a private root as well: the few readers that take
	// a path rather than bytes (client-go's kubeconfig merge) find them
	// there, as under --root.
	root, err := os.MkdirTemp("", "doctor-analyze-")
	if err != nil {
		return 0, &exitError{code: report.ExitCantRun, msg: err.Error()}
	}
	defer os.RemoveAll(root)
	if err := layOut(root, tape); err != nil {
		return 0, &exitError{code: report.ExitCantRun, msg: err.Error()}
	}
	in := m.Env
	env := &hostio.Env{Root: root, Clock: m.Clock, Offline: in.Offline, RunnerPID: in.RunnerPID, ConfigPath: in.ConfigPath,
		KubeconfigPath: in.KubeconfigPath, ContextOverride: in.Context, NamespaceOverride: in.Namespace,
		RequestTimeout: in.RequestTimeout, Settings: in.Settings, Tape: tape}
	res, err := checks.Run(context.Background(), env, a.catalog(), checks.Options{Only: f.only, Skip: f.skip, Runner: f.runner,
		Timeout: max(f.timeout-time.Since(start), time.Millisecond)})
	if err != nil {
		return 0, usageError("%v", err)
	}
	rep := report.Build(res, ignores, resolvedVersion(), m.Clock)
	rep.Host, rep.Args = m.Host, m.Args
	rep.Bundle = &report.BundleInfo{File: filepath.Base(p), Doctor: m.Doctor}
	rep.Verbose = f.verbose
	rep.Rerun = liveRerun(in)
	linkDocs(rep, a.docsURL(f.docsURL))
	opt := report.Options{Colour: a.io.TTY && a.io.Getenv("NO_COLOR") == "", UTF8: a.utf8(), Width: a.width()}
	if err := report.RenderWith(a.io.Out, rep, f.output, opt); err != nil {
		return 0, usageError("%v", err)
	}
	return rep.Summary.ExitCode, nil
}

// layOut writes the bundle's file contents under root, directories 0700
// and files 0600: the modes the checks judge are the tape's, not these.
func layOut(root string, t *hostio.Tape) error {
	names := make([]string, 0, len(t.Files))
	for p, r := range t.Files {
		if r.Read && path.IsAbs(p) && !strings.Contains(p, "/../") {
			names = append(names, p)
		}
	}
	sort.Strings(names)
	for _, p := range names {
		dst := filepath.Join(root, filepath.FromSlash(path.Clean(p)))
		if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
			continue // a path whose parent was a file: the tape still answers
		}
		if err := os.WriteFile(dst, t.Files[p].Content, 0o600); err != nil {
			continue
		}
	}
	return nil
}

// hostName is the host the report is about: /etc/hostname under the root
// (read through the Env, so a bundle has it), else the kernel's, live.
func hostName(env *hostio.Env) string {
	if b, err := env.ReadFile("/etc/hostname"); err == nil {
		if h := strings.TrimSpace(string(b)); h != "" && len(h) <= 253 {
			return h
		}
	}
	if env.Tape == nil || !env.Tape.Replay {
		if env.Root == "/" || env.Root == "" {
			if h, err := os.Hostname(); err == nil {
				return h
			}
		}
	}
	return ""
}

func isSlice(v pflag.Value) bool {
	_, ok := v.(pflag.SliceValue)
	return ok
}

// liveRerun is the doctor run that verifies a fix on the host the bundle
// came from: a fix is applied there, so its verify command runs there,
// with the flags that chose the live run's input (not doctor analyze of the
// same bundle, which can only show what was).
func liveRerun(in bundle.EnvInputs) []string {
	parts := []string{"doctor", "run"}
	for _, fl := range []struct{ name, value string }{
		{"--config", in.ConfigPath}, {"--kubeconfig", in.KubeconfigPath}, {"--context", in.Context}, {"--namespace", in.Namespace},
	} {
		if fl.value != "" {
			parts = append(parts, fl.name, fl.value)
		}
	}
	if in.Offline {
		parts = append(parts, "--offline")
	}
	return parts
}
