package trace

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/rest"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/client/kube"
	"github.com/socialwebcomputer/doctor/checks/facts/configfacts"
	"github.com/socialwebcomputer/doctor/checks/facts/kubefacts"
	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/internal/redact"
	"github.com/socialwebcomputer/doctor/runnerconfig"
)

// Target is a Kubernetes runner's cluster, reached as its executor reaches
// it (kubefacts.APIClientFact: host, in-cluster config, then the kubeconfig).
type Target struct {
	Runner      checks.RunnerRef
	RunnerName  string // the [[runners]] name, for the job pods' manager label
	Namespace   string
	PollTimeout time.Duration
	Source      string // which credential, as kubefacts.APIClient.Source says
	// API is doctor's client for the runner (kubefacts.NewAPI: every dial
	// through hostio.Env.Dial, bounded bodies, a 15s overall timeout).
	API *kubefacts.APIClient
	// Client is the same transport without the overall timeout, for
	// watches (WatchClient).
	Client kube.Interface
}

// Selector is the --runner value that selects this runner alone, for
// Explainer and checks.Options.Runner.
func (t *Target) Selector() string {
	if t.Runner.Index == 0 {
		return "" // the runner --kubeconfig implies is the only one
	}
	return strconv.Itoa(t.Runner.Index)
}

// WatchClient is a client for watches on cfg, a kubefacts.APIClient's Config: the same
// dialer (hostio.Env.Dial), bounded transport and request counter, but no
// overall request timeout, which would end every watch after 15 seconds.
// Each list the trace makes has its own deadline (Options.RequestTimeout),
// and each watch asks the server to end it (timeoutSeconds).
func WatchClient(cfg *rest.Config) (kube.Interface, error) {
	c := rest.CopyConfig(cfg)
	c.Timeout = 0
	return kube.NewForConfig(c)
}

// runnerAPI is a runner with its API client, as doctor run builds it.
type runnerAPI struct {
	entry *configfacts.RunnerEntry
	api   *kubefacts.APIClient
}

// runnerAPIFact is what Resolve evaluates for each Kubernetes runner.
var runnerAPIFact = &checks.Fact[runnerAPI]{
	ID:       "trace-runner-api",
	Doc:      "a Kubernetes runner's [[runners]] entry and its API client, for doctor trace",
	Requires: []checks.Node{kubefacts.APIClientFact, configfacts.RunnerEntryFact},
	Compute: func(p *checks.Pass) (runnerAPI, error) {
		return runnerAPI{entry: configfacts.RunnerEntryFact.Get(p), api: kubefacts.APIClientFact.Get(p)}, nil
	},
}

// Resolve finds the runner a trace follows: the one Kubernetes runner of
// config.toml, or the one --runner names (name or index), with the API
// client, namespace and poll_timeout doctor run would use for it. --context,
// --kubeconfig and -n/--namespace apply as for doctor run.
func Resolve(ctx context.Context, env *hostio.Env, runner string) (*Target, error) {
	if env.Offline {
		return nil, errors.New("doctor trace watches the cluster; it cannot run --offline")
	}
	values, err := checks.Evaluate(ctx, env, runnerAPIFact, checks.Options{Runner: runner, Timeout: 30 * time.Second}, checks.Kubernetes)
	if err != nil {
		return nil, err
	}
	var found []*Target
	var why []string
	for _, v := range values {
		who := "the runner"
		if v.Runner != nil {
			who = v.Runner.String()
		}
		if v.Reason != "" {
			why = append(why, who+": "+v.Reason)
			continue
		}
		t, err := targetOf(v.Value)
		if err != nil {
			why = append(why, who+": "+redact.Text(err.Error()))
			continue
		}
		found = append(found, t)
	}
	sort.Slice(found, func(i, j int) bool { return found[i].Runner.Index < found[j].Runner.Index })
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		if len(why) == 0 {
			why = []string{"config.toml has no Kubernetes runner"}
		}
		return nil, fmt.Errorf("no Kubernetes runner to trace: %s", strings.Join(why, "; "))
	}
	names := make([]string, len(found))
	for i, t := range found {
		names[i] = t.Runner.String()
	}
	return nil, fmt.Errorf("%d Kubernetes runners: name one with --runner NAME|INDEX (%s)", len(found), strings.Join(names, ", "))
}

// targetOf is the Target of a runner and its API client, with a client of
// its own for watches.
func targetOf(ra runnerAPI) (*Target, error) {
	e, api := ra.entry, ra.api
	ns := e.Namespace() // -n/--namespace included
	wc, err := WatchClient(api.Config)
	if err != nil {
		return nil, err
	}
	name := e.Runner.Name
	if e.Pos < 0 {
		name = "" // the runner implied by --kubeconfig labels no pod
	}
	return &Target{Runner: e.Ref, RunnerName: name, Namespace: ns,
		PollTimeout: runnerconfig.PollTimeout(e.Runner), Source: api.Source, API: api, Client: wc}, nil
}

// ExplainTimeout bounds the checks of one stuck stage.
const ExplainTimeout = 30 * time.Second

// Explainer is an OnStuck that runs the stage's StageChecks (those the
// catalog has) for the runner, as doctor run --only would, and returns
// their results as lines: each finding with its severity and cause, its fix
// on the next line, a check that passed as pass, one that could not run as
// unknown or skipped with why.
func Explainer(env *hostio.Env, catalog []*checks.Check, runner string) func(context.Context, Stage) []string {
	known := map[string]bool{}
	for _, c := range catalog {
		known[c.ID] = true
	}
	return func(ctx context.Context, s Stage) []string {
		var only []string
		for _, id := range StageChecks[s] {
			if known[id] {
				only = append(only, id)
			}
		}
		if len(only) == 0 {
			return nil
		}
		res, err := checks.Run(ctx, env, catalog, checks.Options{Only: only, Runner: runner, Timeout: ExplainTimeout})
		if err != nil {
			return []string{"the checks could not run: " + err.Error()}
		}
		return FormatResults(res, only)
	}
}

// FormatResults writes a run's results for the checks in only, and any
// other check that did not pass (a requirement that failed), as lines.
func FormatResults(res *checks.Result, only []string) []string {
	var lines []string
	for _, r := range res.Checks {
		id := r.Check.ID
		named := slices.Contains(only, id)
		if !named && r.Status == checks.StatusPass {
			continue
		}
		switch r.Status {
		case checks.StatusPass:
			if len(r.Findings) == 0 {
				lines = append(lines, fmt.Sprintf("%-8s %s: %s", "pass", id, r.Check.Title))
				continue
			}
			fallthrough
		case checks.StatusFail:
			for _, f := range r.Findings {
				lines = append(lines, fmt.Sprintf("%-8s %s: %s", f.Severity, id, f.Cause))
				if fix, _, _ := strings.Cut(f.Fix.String(), "\n"); fix != "" && f.Severity > checks.Info {
					lines = append(lines, fmt.Sprintf("%-8s   fix: %s", "", fix))
				}
			}
		default:
			lines = append(lines, fmt.Sprintf("%-8s %s: %s", r.Status, id, r.Reason))
		}
	}
	return lines
}
