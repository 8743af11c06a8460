// Package gitlabreach checks that GitLab answers from the runner host, stage
// by stage, and that the name also works from where the jobs run: rented
// nodes, which are not on the operator's tailnet.
package gitlabreach

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/client/gitlab"
	"github.com/socialwebcomputer/doctor/checks/facts/configfacts"
	"github.com/socialwebcomputer/doctor/checks/facts/hostfacts"
	"github.com/socialwebcomputer/doctor/internal/fixcode"
	"github.com/socialwebcomputer/doctor/internal/hostio"
)

var Check = &checks.Check{
	ID:       "gitlab-reachability",
	Title:    "GitLab answers from this host, and its name works from the rented nodes",
	Severity: checks.Error,
	Doc: checks.Doc{
		Cause: "The runner reaches GitLab at the url in config.toml, and job pods on rented nodes reach it at " +
			"CI_REPOSITORY_URL to clone. Either path can break at one stage: the name does not resolve, the " +
			"port does not answer, the certificate is expired, for another name or from an untrusted CA, or " +
			"something that is not GitLab answers. A name that resolves only to tailnet addresses " +
			"(100.64.0.0/10, fd7a:115c:a1e0::/48) works on a host on the tailnet and nowhere else: a rented " +
			"node's egress is the provider's, so it reaches GitLab only through a name public DNS resolves, " +
			"such as a Tailscale Funnel.",
		// network/gitlab.go, v19.3.0 (RequestJob): a request with no HTTP answer
		// comes back from network/client.go (doJSON) as status -1 with
		// "execute JSON request: %w" around "execute request: %w" around
		// network/retry_requester.go's "couldn't execute %s against %s: %w", and takes
		// the default branch: Warningln("Checking for jobs...", "failed"), the
		// runner still healthy.
		Symptom: "fatal: unable to access 'https://gitlab.dorper-matrix.ts.net:8443/group/project.git/': Failed to connect to gitlab.dorper-matrix.ts.net port 8443 (job log, after DNS resolved); " +
			"or, in the runner's log, WARNING: Checking for jobs... failed … status=execute JSON request: execute request: " +
			"couldn't execute POST against https://…/api/v4/jobs/request: Post \"https://…/api/v4/jobs/request\": " +
			"dial tcp: lookup …: no such host (or …: x509: certificate has expired …)",
		Fix: checks.Text("Fix the stage the finding names. For a tailnet-only name: publish GitLab on a name the public " +
			"internet resolves and reaches (a Tailscale Funnel on the GitLab port), or give the jobs GIT_STRATEGY: none. " +
			"A job request that gets no answer leaves the runner healthy: it keeps asking every check_interval and takes " +
			"jobs again as soon as GitLab answers, with no restart."),
		Verify: checks.Steps{
			checks.Say("Ask GitLab's API from this host, at the runner's url (GITLAB_URL: [[runners]] url); 401 means a GitLab answered:"),
			checks.Sh(`GITLAB_URL=https://gitlab.example.com/
curl -sS -o /dev/null -w '%{http_code}\n' "${GITLAB_URL%/}/api/v4/version"`),
			checks.Say("Its name as the public internet resolves it, which the rented nodes use:"),
			checks.Sh(`GITLAB_HOST=gitlab.example.com
dig +short "$GITLAB_HOST" @1.1.1.1`)},
		Patterns: []string{
			// network/gitlab.go, v19.3.0 (RequestJob, VerifyRunner): Warningln("Checking for jobs...",
			// "failed") and Errorln("Verifying runner...", "failed"): no HTTP answer from GitLab.
			"Checking for jobs... failed",
			"Verifying runner... failed",
			// network/gitlab.go, v19.3.0 (RequestJob): Errorln("Checking for jobs...", "client error")
			// when no client can be built for the url (getClient: "parse URL: %w", "only http or https
			// scheme supported", network/client.go): the url finding. This one marks the runner unhealthy.
			"Checking for jobs... client error",
			// network/gitlab.go, v15.0.0 to v16.4: Errorln("Checking for jobs...", "error"), what
			// v16.5 and later call "client error".
			"Checking for jobs... error",
			// network/gitlab.go (RegisterRunner), as gitlab-runner register prints a request that got
			// no answer: "Registering runner... failed … status=couldn't execute POST against …"
			// (Tobewont/kubernetes#1; the transport text is network's "couldn't execute %s against %s: %w").
			"Registering runner... failed*couldn't execute ",
			// docs/configuration/tls-self-signed.md, v19.3.0: "fatal: unable to access
			// 'https://gitlab.example.com/group/project.git/': SSL certificate problem: ..." (git, in the job log).
			"fatal: unable to access '*': SSL certificate problem: ",
			// docs/install/osx.md, v19.3.0: "Failed to connect to path port 3000: Operation timed out"
			// (curl's text, which git prints as fatal: unable to access '…': Failed to connect to …).
			"fatal: unable to access '*': Failed to connect to * port ",
			// git built with GnuTLS (Debian's and Ubuntu's) says the same as OpenSSL's "SSL certificate
			// problem" in its words (sameersbn/docker-gitlab-ci-multi-runner#40).
			"fatal: unable to access '*': server certificate verification failed. CAfile: ",
		},
		Signs: []checks.Sign{
			// The runner's requests to GitLab (network/gitlab.go, v19.3.0: Checking for jobs,
			// Verifying runner, Registering runner; their URLs under /api/v4/) and git's, whichever
			// wording: docs/configuration/tls-self-signed.md, v13.12.0: "Post
			// https://hostname.tld/api/v4/jobs/request: x509: certificate signed by unknown
			// authority"; configuring_runner_operator.md, v14.10.0: "x509: cannot validate
			// certificate for ###.##.##.## because it doesn't contain any IP SANs". A name that
			// does not resolve in a job is node-local-dns's sign, with this check among its causes.
			{Endpoints: []string{checks.EndpointGitLab}, Causes: []string{checks.CauseTimeout, checks.CauseRefused, checks.CauseReset,
				checks.CauseUnreachable, checks.CauseX509Authority, checks.CauseX509Hostname, checks.CauseTLSRemote}},
			// The same refusal with no endpoint on the line (tls-self-signed.md, v9.5.0 to v19.3.0,
			// the registration's "x509: certificate signed by unknown authority"): GitLab, or the
			// apiserver, or what a job reaches.
			{Core: "x509: certificate signed by unknown authority", Endpoints: []string{checks.EndpointNone},
				Or:   []string{"api-auth", checks.NotACheck + "a server a job reaches with its own TLS (object storage, a registry)"},
				Tell: "the URL before it: /api/v4/ is GitLab (this check), /api/ or /apis/ the apiserver (api-auth); gitlab-reachability verifies GitLab's certificate as the runner does"},
			// A job's own request to another server (docs/configuration/tls-self-signed.md,
			// v13.12.0: "LFS: Get https://object.hostname.tld/…: x509: certificate signed by
			// unknown authority"): the CA the runner gives jobs, or the job's.
			{Endpoints: []string{checks.EndpointOther}, Causes: []string{checks.CauseX509Authority},
				Or:   []string{checks.NotACheck + "a server a job reaches with its own TLS (object storage, a registry): the job image's CA"},
				Tell: "whether the host is GitLab's: gitlab-reachability verifies GitLab's certificate with the CA the runner uses (tls-ca-file), which the runner also gives jobs as CI_SERVER_TLS_CA_FILE"},
		},
		Ambiguous: []checks.Ambiguous{
			// commands/register.go: Panicln after any registration that returned no runner, the
			// request unanswered or refused alike (its Registering runner... line says which).
			{Pattern: "Failed to register this runner. Perhaps you are having network problems",
				Or:   []string{checks.NotACheck + "GitLab refused the registration (`Registering runner... forbidden`: the registration token; an HTTP status such as 404 or 405: a wrong URL, or a runner version that GitLab does not register)"},
				Tell: "the `Registering runner...` line before it: `failed … couldn't execute` is no answer from GitLab (gitlab-reachability decides); `forbidden` or an HTTP status is GitLab's refusal"},
		},
	},
	Requires: []checks.Node{checks.Ref("config-decode"), configfacts.ConfigFact},
	Settings: []*checks.Setting{gitlab.ResolverSetting, gitlab.PublicDNSSetting, configfacts.RepositoryURLSetting},
	Network:  true,
	// Targets are probed concurrently; each stage has its own, shorter deadline.
	Timeout: 25 * time.Second,
	Run:     run,
}

func run(p *checks.Pass) error {
	cfg := configfacts.ConfigFact.Get(p)
	ts, bad := configfacts.GitLabTargets(p.Env, cfg, configfacts.RepositoryURLSetting.Value(p.Env))
	for _, b := range bad {
		src, line := "--repository-url", ""
		if b.Runner != nil {
			src, line = cfg.AtRunner(b.Pos, "url")
		}
		fix := checks.Text("Set url in [[runners]] to GitLab's external_url, with its scheme (https://), its host and, when it is not the scheme's, its port: the URL GitLab's own pages are served at.")
		var noClient *gitlab.NoClientError
		if b.Runner != nil && errors.As(b.Err, &noClient) {
			// The runner logs "Checking for jobs... client error" and counts it unhealthy.
			// A constant unit (gitlab-runner install's default): this check
			// reads no unit, and its name is valid (fixcode.UnitName).
			fix = append(fix, gitlab.DisabledNote(cfg.Config.Runners[b.Pos], fixcode.Command("systemctl", "restart", hostfacts.DefaultUnit).Sudo())...)
		}
		p.Report(checks.Finding{
			Runner:   b.Runner,
			Cause:    b.Err.Error() + ": the runner cannot reach a GitLab it cannot name.",
			Evidence: []checks.Evidence{{Source: src, Detail: line}},
			Fix:      fix,
		})
	}
	if len(ts) == 0 {
		if len(bad) == 0 {
			return checks.Skip("no [[runners]] url and no CI_REPOSITORY_URL to reach")
		}
		return nil
	}
	dl := gitlab.StageDeadlines(p.Env)
	results := make([]*result, len(ts))
	var wg sync.WaitGroup
	for i, t := range ts {
		wg.Go(func() { results[i] = probe(p.Context, p.Env, t, dl) })
	}
	wg.Wait()
	// Reported in target order, so the report does not depend on which
	// probe finished first.
	var errs []error
	for i, r := range results {
		for _, f := range r.findings {
			if len(ts[i].Runners) == 1 {
				f.Runner = &ts[i].Runners[0]
			}
			p.Report(f)
		}
		if r.err != nil {
			errs = append(errs, r.err)
		}
	}
	return errors.Join(errs...)
}

type result struct {
	findings []checks.Finding
	err      error // could not judge: no resolver
}

func (r *result) add(f *checks.Finding) {
	if f != nil {
		r.findings = append(r.findings, *f)
	}
}

// probe walks the stages for one target and stops at the first failure.
func probe(ctx context.Context, env *hostio.Env, t *gitlab.Target, dl gitlab.Deadlines) *result {
	r := &result{}
	sys, err := gitlab.ResolveSystem(ctx, env, t.Host, dl)
	if err != nil {
		r.err = fmt.Errorf("%s: %w", t.Host, err)
		return r
	}
	if !sys.Resolved() {
		r.add(dnsFailure(t, sys))
		return r
	}
	r.add(rentedView(ctx, env, t, sys, dl))
	conn, fail := gitlab.Connect(ctx, env, t, sys.Addrs, dl)
	if fail != nil {
		r.add(connectFailure(t, sys, fail))
		return r
	}
	if conn.Cert != nil && conn.Cert.Soon() {
		r.add(soonExpiry(t, conn))
	}
	u := t.Endpoint("api/v4/version")
	resp, err := conn.Request(ctx, "GET", u, nil, nil, true, dl.HTTP)
	if err != nil {
		r.add(stageFinding(t, gitlab.StageHTTP, conn.Addr, err.Error(),
			"GitLab (or whatever holds the port) accepted the connection and did not answer the request: "+
				"check that GitLab is up (gitlab-ctl status in its container) and that the proxy or Funnel in front forwards to it.",
			checks.Evidence{Source: "GET " + u.String(), Detail: err.Error()}))
		return r
	}
	r.add(judgeVersion(t, conn.Addr, u.String(), resp))
	return r
}

// stageFinding is every runner-host finding: the target, the stage that
// failed and the address, first, in the same words.
func stageFinding(t *gitlab.Target, s gitlab.Stage, addr, why, fix string, ev ...checks.Evidence) *checks.Finding {
	return &checks.Finding{
		Cause: fmt.Sprintf("%s (%s): from this host, the %s stage failed at %s: %s.",
			t.Named(), t.Origin(), s, addr, why),
		Evidence: ev,
		Fix:      checks.Text(fix),
	}
}
