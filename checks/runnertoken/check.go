// Package runnertoken asks GitLab whether each runner's token is still good,
// with the call the runner itself makes (gitlab-runner verify).
package runnertoken

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/client/gitlab"
	"github.com/socialwebcomputer/doctor/checks/facts/configfacts"
	"github.com/socialwebcomputer/doctor/checks/facts/hostfacts"
	"github.com/socialwebcomputer/doctor/checks/facts/kubefacts"
	"github.com/socialwebcomputer/doctor/internal/fixcode"
	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/internal/redact"
	"github.com/socialwebcomputer/doctor/runnerconfig"
)

var Check = &checks.Check{
	ID:       "runner-token",
	Title:    "GitLab accepts each runner's token",
	Severity: checks.Error,
	Doc: checks.Doc{
		Cause: "Every request the runner makes carries the token of its [[runners]] element. When the runner is " +
			"deleted in GitLab, or the token was reset or mistyped, GitLab answers 403 and the runner takes no job " +
			"while its process looks healthy. A 422 means GitLab knows the token but the runner is orphaned: the " +
			"runner manager GitLab recorded for this runner's system_id is gone.",
		Symptom: "ERROR: Checking for jobs... forbidden (runner log, every check_interval; for a 422, WARNING: Checking for jobs... failed … " +
			"status=POST https://…/api/v4/jobs/request: 422 Unprocessable Entity); gitlab-runner verify: Verifying runner... is not valid (a glrt- token), or ERROR: Verifying runner... is removed (a legacy token)",
		Fix: checks.Target(
			checks.Say("Create the runner again in GitLab (the project's, group's or instance's Settings > CI/CD > Runners > New runner) and copy its glrt- token. "+
				"Register it in the runner's config.toml, pasting the token and GitLab's URL when read asks, then restart the runner:"),
			checks.Sh(`read -rs GLRT_TOKEN
read -r GITLAB_URL
sudo gitlab-runner register --non-interactive --config "$RUNNER_CONFIG" --url "$GITLAB_URL" --token "$GLRT_TOKEN"
sudo systemctl restart "$RUNNER_UNIT"`)),
		Verify: checks.Target(checks.Sh(`sudo gitlab-runner verify --config "$RUNNER_CONFIG"`)),
		Patterns: []string{
			// network/gitlab.go, v19.3.0 (RequestJob): Errorln("Checking for jobs...", "forbidden") on a 403.
			"Checking for jobs... forbidden",
			// A 422 (the runner manager is gone) takes RequestJob's default branch, Warningln("Checking
			// for jobs...", "failed"), its status ResponseError.Error() (network/client.go, v19.3.0):
			// "%v %s: %s" with "%d %s", e.g. "POST https://…/api/v4/jobs/request: 422 Unprocessable Entity".
			"Checking for jobs... failed * 422 Unprocessable Entity",
			// network/gitlab.go, v19.3.0 (VerifyRunner): "is not valid" (glrt- token), "is removed" (legacy).
			"Verifying runner... is not valid",
			"Verifying runner... is removed",
		},
		Ambiguous: []checks.Ambiguous{
			// commands/health_helper.go, v15.7.0 to v19.3.0: "Runner %q is unhealthy and will be
			// disabled for %s seconds!" (no "!": a JSON log pasted cut short, cattle-ops#1143);
			// v15.0.0 to v15.6: "Runner %s is not healthy and will be disabled!".
			{Pattern: "is unhealthy and will be disabled for * seconds", Or: []string{"gitlab-reachability"}, Tell: unhealthyTell},
			{Pattern: "is not healthy and will be disabled!", Or: []string{"gitlab-reachability"}, Tell: unhealthyTell},
		},
	},
	// A GitLab that does not answer cannot judge a token.
	Requires: []checks.Node{checks.Ref("gitlab-reachability"), checks.Ref("config-decode"), configfacts.RunnerEntryFact, hostfacts.ServiceFact, kubefacts.FixScopeFact},
	Settings: []*checks.Setting{gitlab.ResolverSetting},
	Network:  true,
	Timeout:  25 * time.Second,
	Run:      run,
}

// unhealthyTell is what tells the causes of "is unhealthy" apart: the
// requests that failed before it (network/gitlab.go, v19.3.0).
const unhealthyTell = "the `Checking for jobs...` lines before it: `forbidden` (403) is the runner token (runner-token); " +
	"`failed … couldn't execute POST` or `error`/`client error` is GitLab not reached (gitlab-reachability); both checks decide"

func run(p *checks.Pass) error {
	e := configfacts.RunnerEntryFact.Get(p)
	f, err := verify(p.Context, p.Env, e.File, e.Label(), e.Runner, gitlab.StageDeadlines(p.Env))
	if f != nil {
		unit := hostfacts.ServiceFact.Get(p).Name
		if len(f.Fix) == 0 {
			f.Fix = registerFix(kubefacts.FixScopeFact.Get(p), e.Runner.URL, e.File.Path, unit)
		}
		if f.disables {
			f.Fix = append(f.Fix, disabledNote(e.Runner, unit)...)
		}
		p.Report(f.Finding)
	}
	return err
}

// disabledNote is gitlab.DisabledNote with the restart of this runner's
// unit; a unit name systemd would refuse (unit_name_is_valid,
// src/basic/unit-name.c, v252) is in no command: the note says why
// instead.
func disabledNote(r *runnerconfig.Runner, unit string) checks.Steps {
	err := fixcode.UnitName(unit)
	note := gitlab.DisabledNote(r, fixcode.Command("systemctl", "restart", unit).Sudo())
	if err == nil {
		return note
	}
	out := make(checks.Steps, len(note))
	for i, st := range note {
		if st.Kind != checks.KindText {
			st = checks.Withheld(err)
		}
		out[i] = st
	}
	return out
}

// registerFix is the re-registration with this runner's own GitLab URL,
// config file and unit. The token never appears: read -rs takes it into
// a shell variable. The URL (without any user info) and the config path
// are data words; the config file is written by register, so it must be
// one of the runner's own (FixScope); a unit name systemd would refuse
// gets no restart.
func registerFix(scope *kubefacts.FixScope, rawURL, config, unit string) checks.Steps {
	say := "Create the runner again in GitLab (the project's, group's or instance's Settings > CI/CD > Runners > New runner) " +
		"and copy its new glrt- token. Register it in this runner's config.toml, pasting the token when read asks, then restart the runner:"
	if err := scope.Path(config); err != nil {
		// gitlab-runner register rewrites the file as root.
		return checks.Steps{checks.Say(say), checks.Withheld(err)}
	}
	var steps checks.Steps
	url := fixcode.Var("GITLAB_URL")
	if t, err := gitlab.ParseURL(rawURL, true, "url"); err == nil {
		url = fixcode.Data(redact.StripUserinfo(t.Base.String()))
	} else {
		steps = append(steps, checks.Say("Set GITLAB_URL to GitLab's external URL (the one its pages are served at):"),
			checks.Sh("read -r GITLAB_URL"))
	}
	// gitlab-runner v19.3.0, commands/register.go: --url, --token and
	// --non-interactive (RUNNER_TOKEN, CI_SERVER_URL); --config is the
	// file it writes (commands/config.go).
	register := fixcode.Command("gitlab-runner", "register", "--non-interactive", "--config", config).
		Words(fixcode.Data("--url"), url, fixcode.Data("--token"), fixcode.Var("GLRT_TOKEN")).Sudo()
	script := fixcode.Lines(fixcode.Raw("read -rs GLRT_TOKEN"), fixcode.Run(register))
	unitErr := fixcode.UnitName(unit)
	if unitErr == nil {
		script = script.Then(fixcode.Command("systemctl", "restart", unit).Sudo())
	}
	steps = append(steps, checks.Say(say), checks.Script(script))
	if unitErr != nil {
		steps = append(steps, checks.Withheld(unitErr))
	}
	return steps
}

// Kind names a token without showing it: its prefix type only.
func Kind(token string) string {
	if strings.HasPrefix(token, "glrt-") {
		return "a glrt- runner authentication token"
	}
	return "a legacy token"
}

// refusal is a finding and whether GitLab's answer is one that marks the
// runner unhealthy (403: network/gitlab.go RequestJob, v19.3.0).
type refusal struct {
	checks.Finding
	disables bool
}

func verify(ctx context.Context, env *hostio.Env, cfg *configfacts.ConfigFile, label string, r *runnerconfig.Runner, dl gitlab.Deadlines) (*refusal, error) {
	tokenEv := checks.Evidence{Source: cfg.Path, Detail: label + " token: " + Kind(r.Token)}
	if r.Token == "" {
		return &refusal{Finding: checks.Finding{
			Cause:    label + " has no token: GitLab refuses every request the runner makes for it.",
			Evidence: []checks.Evidence{{Source: cfg.Path, Detail: label + " has no token key"}},
		}}, nil
	}
	t, err := configfacts.GitLabTarget(env, cfg, label, r)
	if err != nil {
		return nil, err
	}
	sys, err := gitlab.ResolveSystem(ctx, env, t.Host, dl)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", label, err)
	}
	if !sys.Resolved() {
		return nil, fmt.Errorf("%s: %s does not resolve, so GitLab cannot be asked about the token", label, t.Host)
	}
	conn, fail := gitlab.Connect(ctx, env, t, sys.Addrs, dl)
	if fail != nil {
		return nil, fmt.Errorf("%s: GitLab cannot be asked about the token: %v", label, fail)
	}
	// No system_id: with one, GitLab records a runner manager for it, and
	// doctor changes nothing in GitLab.
	body, err := json.Marshal(map[string]string{"token": r.Token})
	if err != nil {
		return nil, err
	}
	h := http.Header{"Content-Type": {"application/json"}}
	h.Set("RUNNER-TOKEN", r.Token)
	u := t.Endpoint("api/v4/runners/verify")
	// The body of a 200 echoes the token: it is never read.
	resp, err := conn.Request(ctx, http.MethodPost, u, h, body, false, dl.HTTP)
	src := "POST " + u.String() + " via " + conn.Addr
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %v", label, src, err)
	}
	ev := []checks.Evidence{tokenEv, {Source: src, Detail: resp.Line}}
	switch resp.Status {
	case http.StatusOK:
		return nil, nil
	case http.StatusForbidden:
		return &refusal{Finding: checks.Finding{
			Cause: fmt.Sprintf("%s: GitLab answers 403 to %s: the token is invalid or the runner was removed in GitLab: "+
				"re-register. Until then the runner takes no job.", label, Kind(r.Token)),
			Evidence: ev,
		}, disables: true}, nil
	case http.StatusUnprocessableEntity:
		return &refusal{Finding: checks.Finding{
			Cause: fmt.Sprintf("%s: GitLab answers 422: the token is known but the runner is orphaned. GitLab no longer has the "+
				"runner manager it recorded for this runner's system_id (the .runner_system_id file next to config.toml), "+
				"so the runner's requests are refused until it is registered again.", label),
			Evidence: ev,
			// No Fix: run gives registerFix, with this runner's config and URL.
		}}, nil
	default:
		return nil, fmt.Errorf("%s: %s answered %s, which says nothing about the token", label, src, resp.Line)
	}
}
