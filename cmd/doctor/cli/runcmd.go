package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/client/kube"
	"github.com/socialwebcomputer/doctor/checks/facts/kubefacts"
	"github.com/socialwebcomputer/doctor/cmd/doctor/app/metrics"
	"github.com/socialwebcomputer/doctor/cmd/doctor/app/state"
	"github.com/socialwebcomputer/doctor/cmd/doctor/app/symptom"
	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/report"
)

// runFlags are doctor run's flags, as parsed.
type runFlags struct {
	// program is doctor as the operator invoked it (IO.Program), the
	// first word of every verify line.
	program                                string
	root, runner, config, kubeconfig, now  string
	kubeContext, namespace, output, dotCfg string
	pid, verbosity                         int
	offline, verbose, deep, debug          bool
	execPlugins                            bool // --exec-credential-plugins
	only, skip, ignores                    []string
	timeout                                time.Duration
	requestTimeout                         requestTimeout
	settings                               func() map[string]string
	textfile, state, bundle                string
	cacheDir                               cacheDir
	changesOnly                            bool
	// log is --log; journal is --journal; why is doctor why's FILE|- (or
	// "" with --journal alone), and selects the checks its lines name.
	log, whyArg string
	docsURL     string
	journal     bool
	why         bool
	// job is doctor job's (which is doctor why on a job's log); nil for
	// every other command.
	job *jobFlags
}

// cacheDir is --cache-dir: a path, "" for none, or unset for the default.
type cacheDir struct {
	path string
	set  bool
}

func (c *cacheDir) String() string     { return c.path }
func (c *cacheDir) Type() string       { return "string" }
func (c *cacheDir) Set(s string) error { c.path, c.set = s, true; return nil }

// or is the flag's path, or def when it was not given.
func (c *cacheDir) or(def string) string {
	if c.set {
		return c.path
	}
	return def
}

// defaultCacheDir is where os.UserCacheDir puts a user's caches on Unix,
// from the environment the CLI was given: $XDG_CACHE_HOME when absolute,
// else $HOME/.cache, then doctor. "" (no cache) without either.
func (a *app) defaultCacheDir() string {
	if d := a.io.Getenv("XDG_CACHE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "doctor")
	}
	if h := a.io.Getenv("HOME"); filepath.IsAbs(h) {
		return filepath.Join(h, ".cache", "doctor")
	}
	return ""
}

// requestTimeout is --request-timeout: a Go duration, or whole seconds as
// kubectl takes it. 0 means the default (hostio.APICallTimeout).
type requestTimeout time.Duration

func (r *requestTimeout) String() string {
	if *r == 0 {
		return hostio.APICallTimeout.String()
	}
	return time.Duration(*r).String()
}

func (r *requestTimeout) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		n, nerr := strconv.Atoi(s)
		if nerr != nil {
			return fmt.Errorf("want a duration (5s, 1m) or whole seconds")
		}
		d = time.Duration(n) * time.Second
	}
	if d < 0 {
		return fmt.Errorf("a timeout cannot be negative")
	}
	*r = requestTimeout(d)
	return nil
}

func (r *requestTimeout) Type() string { return "duration" }

func (a *app) runCommand() *cobra.Command {
	cmd, _ := a.newRunCommand()
	return cmd
}

// newRunCommand is doctor run and the flags it parses into.
func (a *app) newRunCommand() (*cobra.Command, *runFlags) {
	f := &runFlags{program: a.program()}
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run the checks and report the findings, root causes first",
		Long: `Run every check that applies to the runner's executors (or those --only
names, with what they require) and report the findings ranked: root causes
first, their consequences folded under them. The exit code is the worst
finding's: 0 ok, 1 warning or incomplete, 2 error or critical, 3 could not
run.

The table fits the terminal: a table from 100 columns on, one block per
finding below that; -o wide adds each finding's evidence and fingerprint.
Fixes and the command that verifies each follow the findings as plain lines.
--kubeconfig, --context and -n/--namespace replace what the runner itself
uses, as kubectl's do, and the report says so.

An ignore hides findings: ID hides a check's, ID:RUNNER those of one runner
(its index or name; * is every runner), and @FINGERPRINT one finding, as
-o wide and -o json show it. The reason is required; a reason that
contains a colon needs the runner part (ID:*:reason). .doctor.yaml in the
working directory (or --config-file) holds ignores that stay, each with an
optional expiry date.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageError("unexpected argument %q: doctor run takes flags only (see doctor run --help)", args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			code, err := a.run(cmd, f)
			a.code = code
			return err
		},
	}
	registerRunFlags(cmd, f)
	return cmd, f
}

// registerRunFlags adds doctor run's flags to cmd, parsing into f. doctor
// why shares them all but those that choose the checks (--only: the log
// does) or belong to the health cron (--textfile, --state, --changes-only),
// and reads its log from its argument instead of --log.
func registerRunFlags(cmd *cobra.Command, f *runFlags) {
	fs := cmd.Flags()
	fs.SortFlags = false
	run := !f.why
	fs.StringVar(&f.root, "root", "/", "read every local file (/proc, /etc, home directories, the kubeconfig) under `DIR` instead of /")
	fs.IntVar(&f.pid, "runner-pid", 0, "diagnose the gitlab-runner run process `PID` (default: discover it through /proc/*/comm and cmdline)")
	fs.StringVar(&f.runner, "runner", "", "diagnose only this [[runners]] entry, by `NAME|INDEX`: its name, or its position in config.toml counted from 1")
	fs.StringVar(&f.config, "config", "", "read this config.toml `PATH` (default: located as the runner does: --config in its command line or its unit's ExecStart, CONFIG_FILE in its environment, /etc/gitlab-runner/config.toml for uid 0, else $HOME/.gitlab-runner/config.toml)")
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "load these kubeconfig `PATHS` (a path list) instead of the runner's own (KUBECONFIG of its environment, else $HOME/.kube/config), and say so in the report")
	fs.StringVar(&f.kubeContext, "context", "", "diagnose every Kubernetes runner with the kubeconfig context `NAME` instead of its own")
	fs.StringVarP(&f.namespace, "namespace", "n", "", "diagnose every Kubernetes runner in `NAMESPACE` instead of its [runners.kubernetes] namespace")
	fs.Var(&f.requestTimeout, "request-timeout", "the bound of one API call, a duration (5s) or whole seconds")
	fs.StringVar(&f.now, "now", "", "the clock for every time comparison, an `RFC3339` time (default: now)")
	fs.BoolVar(&f.offline, "offline", false, "no network and no API calls; checks that need them are skipped")
	fs.Var(&f.cacheDir, "cache-dir", "keep in `DIR` the pods kubelet-reach read, so the next run sends those reads with its first requests (default $XDG_CACHE_HOME/doctor, else ~/.cache/doctor; '' keeps nothing)")
	fs.StringVarP(&f.output, "output", "o", "table", "the output `FORMAT`: table, wide (adds evidence and fingerprints), json, yaml or markdown")
	if run {
		fs.StringSliceVar(&f.only, "only", nil, "run only these check `IDS` (and what they require)")
	}
	fs.StringSliceVar(&f.skip, "skip", nil, "do not run these check `IDS`")
	fs.DurationVar(&f.timeout, "timeout", 30*time.Second, "deadline for the whole run; every check also has its own")
	fs.StringArrayVar(&f.ignores, "ignore", nil, "hide findings: `ID[:RUNNER][@FINGERPRINT]:REASON`, the reason required (repeatable)")
	fs.StringVar(&f.dotCfg, "config-file", "", "read ignores from this `PATH` (default: .doctor.yaml in the working directory, when there is one)")
	fs.BoolVar(&f.verbose, "verbose", false, "list every check's status under the findings")
	fs.BoolVar(&f.deep, "deep", false, "also create a probe pod in the runner namespace and exec true through the full path (the only mutating mode; the pod is always deleted)")
	fs.BoolVar(&f.execPlugins, "exec-credential-plugins", false, "on a live host (--root /), run the kubeconfig's exec credential plugin as the runner's user, under the deadline; without it no plugin from an input is run")
	fs.IntVarP(&f.verbosity, "v", "v", 0, "log to stderr at level `N`, redacted: 2 every dial, 5 when each check ran, 6 every API request, 8 with headers")
	fs.BoolVar(&f.debug, "debug", false, "log everything -v can (--v=8)")
	if run {
		fs.StringVar(&f.textfile, "textfile", "", "write metrics for node_exporter's textfile collector to `PATH`, atomically")
		fs.StringVar(&f.state, "state", "", "remember this run's findings in `FILE`, by fingerprint, and compare them with the last run's")
		fs.StringVar(&f.bundle, "bundle", "", "save what the checks looked at, redacted, to `FILE.tar.gz` for a ticket; doctor analyze re-examines it anywhere")
		fs.BoolVar(&f.changesOnly, "changes-only", false, "print only the findings that are new or resolved since the run --state remembers; the exit code still reflects every finding")
		fs.StringVar(&f.log, "log", "", "also read this job log or runner log `FILE` (- for stdin), and rank the findings of the checks its lines name first, as doctor why names them")
	}
	fs.BoolVar(&f.journal, "journal", false, "also read the runner service's journal of the last 24 hours (journalctl -u UNIT; under --root, the saved export <root>/var/log/journal-export/UNIT) for symptoms")
	docsFlag(fs, &f.docsURL)
	f.settings = registerSettings(fs)

	_ = cmd.MarkFlagDirname("root")
	_ = cmd.MarkFlagDirname("cache-dir")
	if run {
		_ = cmd.RegisterFlagCompletionFunc("only", completeCheckList)
	}
	_ = cmd.RegisterFlagCompletionFunc("skip", completeCheckList)
	_ = cmd.RegisterFlagCompletionFunc("ignore", completeIgnore)
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(report.Formats, cobra.ShellCompDirectiveNoFileComp))
	for _, name := range append([]string{"runner", "context", "namespace", "request-timeout", "now", "timeout", "v", "runner-pid"},
		settingNames()...) {
		_ = cmd.RegisterFlagCompletionFunc(name, cobra.NoFileCompletions)
	}
}

// run is doctor run: it returns the report's exit code, or an error for a
// run that could not start. Its steps, in order: prepareRun (the flags
// checked, the inputs read), the logs scanned, runChecks, buildReport,
// saveOutputs (the cron's files and the bundle), the report rendered.
func (a *app) run(cmd *cobra.Command, f *runFlags) (int, error) {
	in, err := a.prepareRun(f)
	if err != nil {
		return 0, err
	}
	env := in.env

	// Ctrl-C, or a service manager's SIGTERM: the run ends, and the --deep
	// probe pod is still deleted.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if f.bundle != "" {
		startBundle(env)
	}
	started := env.Now()
	opt := checks.Options{Only: f.only, Skip: f.skip, Runner: f.runner, Timeout: checksDeadline(f.timeout)}
	// The logs first: doctor why runs only the checks their lines name.
	var scans []*symptom.Scan
	if f.job != nil {
		// doctor job: the job's log, for the runner it ran on.
		s, runner, err := a.readJob(ctx, f, env)
		if err != nil {
			return 0, err
		}
		if f.job.stop != "" {
			return a.jobStop(f, started)
		}
		scans, opt.Runner = append(scans, s), runner
	}
	if (f.why && f.job == nil) || f.log != "" || f.journal {
		more, err := a.scanLogs(ctx, f, env)
		if err != nil {
			return 0, err
		}
		scans = append(scans, more...)
	}
	named := matchedChecks(scans)
	if f.why {
		if len(named) == 0 {
			return a.noSymptom(f, scans, started)
		}
		opt.Only = named
	}
	res, err := a.runChecks(ctx, f, env, opt)
	if err != nil {
		return 0, usageError("%v", err)
	}
	rep := buildReport(cmd, f, in, res, scans, named, started)
	linkDocs(rep, a.docsURL(f.docsURL))
	writeErr := saveOutputs(cmd, f, in, res, rep)
	ropt := report.Options{Colour: a.io.TTY && a.io.Getenv("NO_COLOR") == "", UTF8: a.utf8(), Width: a.width()}
	a.printMatches(f, scans, named)
	a.printPassing(f, rep, named)
	if err := report.RenderWith(a.io.Out, rep, f.output, ropt); err != nil {
		return 0, usageError("%v", err)
	}
	if writeErr != nil {
		return 0, &exitError{code: report.ExitCantRun, msg: writeErr.Error()}
	}
	return rep.Summary.ExitCode, nil
}

// runInputs is what doctor run reads before any check runs.
type runInputs struct {
	env     *hostio.Env
	ignores []report.Ignore // --ignore's, then .doctor.yaml's
	refused *report.Ignore  // a .doctor.yaml doctor would not trust, as the report notes it
	prev    *state.State    // --state's last run, nil without --state
}

// prepareRun checks the flags and reads what the run starts from: every
// usage error, and every file doctor may not read or write, is an exit
// code before the first check, not after the run.
func (a *app) prepareRun(f *runFlags) (*runInputs, error) {
	absRoot, err := validateRunFlags(f)
	if err != nil {
		return nil, err
	}
	in := &runInputs{}
	if in.env, err = a.buildEnv(f, absRoot); err != nil {
		return nil, err
	}
	if in.ignores, in.refused, err = a.loadIgnores(f); err != nil {
		return nil, err
	}
	if f.changesOnly && f.state == "" {
		return nil, usageError("--changes-only needs --state FILE")
	}
	// A file doctor may not write, or a cache directory it may not trust,
	// is exit 3 before the run, not after it.
	if err := a.checkOutputs(f, in.env); err != nil {
		return nil, err
	}
	// A state file that cannot be read is exit 3 before the run, not after.
	if f.state != "" {
		if in.prev, err = state.Load(f.state); err != nil {
			return nil, &exitError{code: report.ExitCantRun, msg: err.Error()}
		}
	}
	if f.deep {
		fmt.Fprintln(a.io.Err, "doctor: --deep creates a probe pod in the runner namespace and deletes it when done")
	}
	return in, nil
}

// validateRunFlags checks the flags that need nothing read but the root's
// directory, and returns the root as an absolute path.
func validateRunFlags(f *runFlags) (string, error) {
	if !report.ValidFormat(f.output) {
		return "", usageError("unknown output format %q (want %s)%s", f.output, strings.Join(report.Formats, ", "), didYouMean(suggest(f.output, report.Formats)))
	}
	absRoot, err := filepath.Abs(f.root)
	if err != nil {
		return "", usageError("--root %s: %v", f.root, err)
	}
	if st, err := os.Stat(absRoot); err != nil || !st.IsDir() {
		return "", usageError("--root %s: not a readable directory", f.root)
	}
	if _, err := os.ReadDir(absRoot); err != nil {
		return "", usageError("--root %s: %v", f.root, err)
	}
	if f.deep && f.offline {
		return "", usageError("--deep needs the cluster; it cannot be combined with --offline")
	}
	if err := validCheckIDs("--only", f.only); err != nil {
		return "", err
	}
	if err := validCheckIDs("--skip", f.skip); err != nil {
		return "", err
	}
	return absRoot, nil
}

// loadIgnores is --ignore's ignores, then .doctor.yaml's, and the
// .doctor.yaml doctor refused to trust, which it says on stderr.
func (a *app) loadIgnores(f *runFlags) ([]report.Ignore, *report.Ignore, error) {
	ignores, err := parseIgnores(f.ignores)
	if err != nil {
		return nil, nil, err
	}
	fileIgnores, refused, err := loadDoctorFile(f.dotCfg)
	if err != nil {
		return nil, nil, err
	}
	if refused != nil {
		fmt.Fprintf(a.io.Err, "doctor: %s\n", refused.Note)
	}
	return append(ignores, fileIgnores...), refused, nil
}

// runChecks runs the registry's catalog, with live progress only where
// someone watches stderr, and not under -v, whose log lines would tear the
// progress line.
func (a *app) runChecks(ctx context.Context, f *runFlags, env *hostio.Env, opt checks.Options) (*checks.Result, error) {
	var lp *liveProgress
	if a.io.ErrTTY && f.verbosity == 0 && !f.debug {
		lp = startProgress(a.io.Err, a.width())
		opt.Progress = lp.hear
	}
	if !env.Offline {
		kube.Prepare()
	}
	res, err := checks.Run(ctx, env, a.catalog(), opt)
	if lp != nil {
		lp.finish()
	}
	return res, err
}

// buildReport is the run's report: ranked, with what the operator asked
// and, for doctor why, the checks the log names first.
func buildReport(cmd *cobra.Command, f *runFlags, in *runInputs, res *checks.Result, scans []*symptom.Scan, named []string, started time.Time) *report.Report {
	rep := report.Build(res, in.ignores, resolvedVersion(), started)
	if in.refused != nil {
		rep.Ignores = append(rep.Ignores, *in.refused)
	}
	rep.Verbose = f.verbose
	rep.Overrides = overrides(f)
	rep.Rerun = rerun(cmd, f)
	rep.Host, rep.Args = hostName(in.env), changedFlags(cmd)
	logReport(rep, scans)
	rep.RankFirst(named)
	if f.job != nil {
		rep.Job = f.job.found
	}
	if f.why {
		// doctor why chose the checks, not an --only of the operator's.
		for i, why := range rep.Summary.Incomplete {
			if id, ok := strings.CutPrefix(why, "--only "); ok {
				rep.Summary.Incomplete[i] = strings.TrimSuffix(id, " did not run") + ", which the log names, did not run"
			}
		}
	}
	return rep
}

// saveOutputs writes the cron's outputs and the bundle, for every report,
// one where nothing ran included (the metrics then say -1), and returns
// the first write that failed. Under --changes-only the report keeps only
// the findings that changed since the state's last run.
func saveOutputs(cmd *cobra.Command, f *runFlags, in *runInputs, res *checks.Result, rep *report.Report) error {
	var writeErr error
	if f.textfile != "" {
		writeErr = metrics.WriteTextfile(f.textfile, rep, metrics.Observations(res))
	}
	if f.bundle != "" {
		if err := writeBundle(f.bundle, cmd, f, in.env, rep, in.ignores); err != nil && writeErr == nil {
			writeErr = err
		}
	}
	if f.state != "" {
		next, changes := state.Diff(in.prev, rep, rep.StartedAt)
		if err := state.Save(f.state, next); err != nil && writeErr == nil {
			writeErr = err
		}
		if f.changesOnly {
			standing := rep.Findings
			rep.Findings = changeFindings(changes, in.prev)
			if len(changes) == 0 {
				rep.NoChanges = noChanges(standing, next)
			}
		}
	}
	return writeErr
}

// changeFindings are the transitions as findings: a new one as it is, marked
// new; a resolved one from what the state remembers of it, with no fix (there
// is nothing to do). A cron that mails its output mails only these.
func changeFindings(changes []state.Transition, prev *state.State) []report.Finding {
	out := []report.Finding{}
	for _, tr := range changes {
		var f report.Finding
		if tr.Finding != nil {
			f = *tr.Finding
			f.Cause = "New since the last run: " + f.Cause
		} else {
			since := "the last run"
			if e, ok := prev.Findings[tr.Fingerprint]; ok && !e.LastSeen.IsZero() {
				since = stamp(e.LastSeen)
			}
			f = report.Finding{Check: tr.Check, Runner: tr.Runner, Severity: tr.Severity, Title: tr.Title,
				Cause: "Resolved since " + since + ": " + tr.Title, Evidence: []checks.Evidence{}, Explains: []string{},
				Fingerprint: tr.Fingerprint, Docs: checks.DocsAnchor(tr.Check)}
		}
		f.Change, f.Rank, f.CausedBy = tr.Kind, len(out)+1, nil
		out = append(out, f)
	}
	return out
}

// noChanges is what a --changes-only run with nothing new or resolved says
// instead of its findings: how many stand, and since when none changed (the
// latest a standing finding was first seen).
func noChanges(standing []report.Finding, next *state.State) string {
	var sev [checks.Critical + 1]int
	var since time.Time
	for _, f := range standing {
		sev[f.Severity]++
		if e, ok := next.Findings[state.FingerprintOf(&f)]; ok && e.FirstSeen.After(since) {
			since = e.FirstSeen
		}
	}
	var parts []string
	for s := checks.Critical; s >= checks.Info; s-- {
		if sev[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", sev[s], severityNoun(s, sev[s])))
		}
	}
	if len(parts) == 0 {
		return "No changes (no findings)."
	}
	return fmt.Sprintf("No changes (%s, unchanged since %s).", strings.Join(parts, ", "), stamp(since))
}

// severityNoun is a severity as the summary counts it: "critical",
// "errors", "warnings", "info".
func severityNoun(s checks.Severity, n int) string {
	switch s {
	case checks.Error, checks.Warning:
		if n != 1 {
			return s.String() + "s"
		}
	}
	return s.String()
}

// stamp is a time as findings print one: UTC, to the minute.
func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04Z") }

// buildEnv is the checks' door to the outside, from the flags.
func (a *app) buildEnv(f *runFlags, absRoot string) (*hostio.Env, error) {
	env := &hostio.Env{Root: absRoot, Offline: f.offline, Deep: f.deep, ExecCredentialPlugins: f.execPlugins, RunnerPID: f.pid,
		ConfigPath: f.config, KubeconfigPath: f.kubeconfig, Settings: f.settings(),
		ContextOverride: f.kubeContext, NamespaceOverride: f.namespace,
		RequestTimeout: time.Duration(f.requestTimeout), CacheDir: f.cacheDir.or(a.defaultCacheDir())}
	if f.now != "" {
		t, err := time.Parse(time.RFC3339, f.now)
		if err != nil {
			return nil, usageError("--now %q: want RFC3339, e.g. 2026-11-29T12:00:00Z", f.now)
		}
		env.Clock = t
	}
	level := f.verbosity
	if f.debug {
		level = max(level, 8)
	}
	if level < 0 {
		return nil, usageError("--v %d: the level cannot be negative", level)
	}
	env.Log = newLogger(a.io.Err, level)
	// klog's lines (client-go's) go to the same logger, or nowhere.
	kubefacts.LogClientGoTo(env.Log)
	return env, nil
}

// overrides are the flags that replaced a value the runner has of its own.
func overrides(f *runFlags) []report.Override {
	out := []report.Override{}
	if f.kubeconfig != "" {
		out = append(out, report.Override{Flag: "--kubeconfig", Value: f.kubeconfig,
			Replaces: "the kubeconfig the runner loads (KUBECONFIG of its environment, else $HOME/.kube/config)"})
	}
	if f.kubeContext != "" {
		out = append(out, report.Override{Flag: "--context", Value: f.kubeContext,
			Replaces: "each Kubernetes runner's own context ([runners.kubernetes] context, else the kubeconfig's current-context)"})
	}
	if f.namespace != "" {
		out = append(out, report.Override{Flag: "--namespace", Value: f.namespace,
			Replaces: "each Kubernetes runner's namespace ([runners.kubernetes] namespace)"})
	}
	return out
}

// rerun is doctor run with the flags of this run that chose its input, so
// a verify command reads what this run read.
func rerun(cmd *cobra.Command, f *runFlags) []string {
	argv := []string{f.program, "run"}
	cmd.Flags().VisitAll(func(fl *pflag.Flag) {
		if !fl.Changed {
			return
		}
		switch fl.Name {
		case "root":
			if f.root != "/" {
				argv = append(argv, "--root", f.root)
			}
		case "config", "kubeconfig", "context", "namespace", "now":
			argv = append(argv, "--"+fl.Name, fl.Value.String())
		case "offline":
			if f.offline {
				argv = append(argv, "--offline")
			}
		}
	})
	return argv
}

// checksDeadline is --timeout less a reserve for what comes after the
// checks (the report, the bundle, the exit): --timeout is the deadline of
// the whole run, and against a server that never answers the checks use
// all of theirs (cmd/doctor/e2e TestHostileServersAreBoundedInTimeAndMemory).
func checksDeadline(timeout time.Duration) time.Duration {
	if timeout <= 0 {
		return timeout
	}
	return timeout - min(timeout/20, 500*time.Millisecond)
}
