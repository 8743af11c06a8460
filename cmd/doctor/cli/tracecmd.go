package cli

import (
	"context"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/socialwebcomputer/doctor/checks/all"
	"github.com/socialwebcomputer/doctor/cmd/doctor/app/trace"
)

// traceFlags are doctor trace's flags: the input flags of doctor run that
// pick the runner and its cluster, and the trace's own.
type traceFlags struct {
	run           runFlags
	pod           string
	next          bool
	budgets       []string
	poll, timeout time.Duration
}

func (a *app) traceCommand() *cobra.Command {
	f := &traceFlags{}
	cmd := &cobra.Command{
		Use:   "trace",
		Short: "Follow one job pod from Pending to deleted, and say where it is stuck",
		Long: `Watch the runner namespace's pods, the nodes and the events (read-only: list
and watch) and follow one job pod through its stages: created, scale decision,
node joined, node Ready, scheduled, images pulled, Running, finished, deleted,
nodes back to zero. Each stage is printed as it happens, with the time since
the previous one: a live view on a terminal, JSON lines otherwise. A stage
over its budget runs the checks that explain it and prints their findings in
place. Ctrl-C or --timeout prints the timeline so far and names the stage it
is stuck in.

Exit codes: 0 the job was seen through, 2 it is stuck, 3 doctor could not run.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageError("unexpected argument %q: doctor trace takes flags only (see doctor trace --help)", args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			code, err := a.trace(f)
			a.code = code
			return err
		},
	}
	fs := cmd.Flags()
	fs.SortFlags = false
	fs.StringVar(&f.pod, "pod", "", "follow the job pod `NAME`")
	fs.BoolVar(&f.next, "next", false, "follow the next job pod created after the trace starts")
	fs.StringVar(&f.run.runner, "runner", "", "the [[runners]] entry whose namespace and cluster to watch, by `NAME|INDEX` (needed with several Kubernetes runners)")
	fs.StringArrayVar(&f.budgets, "budget", nil, "the budget of one stage, `STAGE=DURATION` (repeatable; 0 turns it off)")
	fs.DurationVar(&f.poll, "poll-timeout", 0, "the runner's poll_timeout, which bounds the stages up to Running (default: the runner's own)")
	fs.DurationVar(&f.timeout, "timeout", 0, "end the trace after this long, printing where it is (default: none)")
	fs.StringVar(&f.run.root, "root", "/", "read every local file under `DIR` instead of /")
	fs.IntVar(&f.run.pid, "runner-pid", 0, "the gitlab-runner run process `PID` (default: discover it)")
	fs.StringVar(&f.run.config, "config", "", "read this config.toml `PATH` (default: located as the runner does)")
	fs.StringVar(&f.run.kubeconfig, "kubeconfig", "", "load these kubeconfig `PATHS` instead of the runner's own")
	fs.StringVar(&f.run.kubeContext, "context", "", "use the kubeconfig context `NAME` instead of the runner's")
	fs.StringVarP(&f.run.namespace, "namespace", "n", "", "watch `NAMESPACE` instead of the runner's")
	fs.Var(&f.run.requestTimeout, "request-timeout", "the bound of one API call, a duration (5s) or whole seconds")
	fs.IntVarP(&f.run.verbosity, "v", "v", 0, "log to stderr at level `N`, redacted: 2 every dial, 5 when each check ran, 6 every API request, 8 with headers")
	fs.BoolVar(&f.run.debug, "debug", false, "log everything -v can (--v=8)")
	f.run.settings = registerSettings(fs) // the checks run at a stuck stage read the DNS settings
	// The probe pod is --deep's, which trace does not have: its image is
	// no setting of trace's (the flag still parses, for scripts that pass it).
	_ = fs.MarkHidden("probe-image")
	_ = cmd.MarkFlagDirname("root")
	for _, name := range []string{"pod", "runner", "budget", "poll-timeout", "timeout", "context", "namespace", "request-timeout", "v", "runner-pid"} {
		_ = cmd.RegisterFlagCompletionFunc(name, cobra.NoFileCompletions)
	}
	return cmd
}

// trace is doctor trace: 0 seen through, 2 stuck, an error (exit 3) when it
// could not run; the timeline is printed either way.
func (a *app) trace(f *traceFlags) (int, error) {
	if (f.pod == "") == !f.next {
		return 0, usageError("doctor trace needs --pod NAME or --next, not both")
	}
	budgets, err := trace.ParseBudgets(f.budgets)
	if err != nil {
		return 0, usageError("%v", err)
	}
	absRoot, err := filepath.Abs(f.run.root)
	if err != nil {
		return 0, usageError("--root %s: %v", f.run.root, err)
	}
	if st, err := os.Stat(absRoot); err != nil || !st.IsDir() {
		return 0, usageError("--root %s: not a readable directory", f.run.root)
	}
	env, err := a.buildEnv(&f.run, absRoot)
	if err != nil {
		return 0, err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	tgt, err := trace.Resolve(ctx, env, f.run.runner)
	if err != nil {
		return 0, usageError("%v", err)
	}
	poll := tgt.PollTimeout
	if f.poll > 0 {
		poll = f.poll
	}
	v, err := trace.Run(ctx, trace.Options{Client: tgt.Client, Namespace: tgt.Namespace, Pod: f.pod, Next: f.next,
		RunnerName: tgt.RunnerName, PollTimeout: poll, Budgets: budgets, Timeout: f.timeout, RequestTimeout: env.APITimeout(),
		OnStuck: trace.Explainer(env, all.Checks(), tgt.Selector())},
		trace.Output{W: a.io.Out, TTY: a.io.TTY, UTF8: a.utf8(), Width: a.width()})
	if err != nil {
		return 0, usageError("%v", err)
	}
	return v.ExitCode(), nil
}
