package configfacts

import (
	"path"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/client/gitlab"
	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/runnerconfig"
)

// RepositoryURLSetting is the CI_REPOSITORY_URL of a failing job, whose host
// gitlab-reachability and node-local-dns also try.
var RepositoryURLSetting = &checks.Setting{Name: "repository-url", Env: "CI_REPOSITORY_URL",
	Usage: "the CI_REPOSITORY_URL of a failing job, a `URL` whose host gitlab-reachability and node-local-dns also try; its credentials are never printed (default: $CI_REPOSITORY_URL)"}

// GitLabTargets are the GitLabs doctor reaches: every [[runners]] url, then the
// host of CI_REPOSITORY_URL, de-duplicated by origin (a repository host that
// is a runner's GitLab keeps that runner's path and TLS files). A url that
// does not parse comes back in bad, labelled, for the caller to report.
func GitLabTargets(env *hostio.Env, cfg *ConfigFile, repositoryURL string) (ts []*gitlab.Target, bad []BadGitLabURL) {
	for i, r := range cfg.Config.Runners {
		t, err := GitLabTarget(env, cfg, RunnerLabel(i, r), r)
		if err != nil {
			bad = append(bad, BadGitLabURL{Pos: i, Runner: RefOf(i, r), Err: err})
			continue
		}
		t.Runners = []checks.RunnerRef{*RefOf(i, r)}
		ts = append(ts, t)
	}
	if repositoryURL != "" {
		t, err := gitlab.ParseURL(repositoryURL, false, "CI_REPOSITORY_URL")
		if err != nil {
			bad = append(bad, BadGitLabURL{Pos: -1, Err: err})
		} else {
			ts = append(ts, t)
		}
	}
	return gitlab.Merge(ts), bad
}

// BadGitLabURL is a url that names no GitLab: a runner's (Pos its 0-based
// position) or CI_REPOSITORY_URL (Pos -1, Runner nil).
type BadGitLabURL struct {
	Pos    int
	Runner *checks.RunnerRef
	Err    error
}

// GitLabTarget is a [[runners]] element's GitLab with the TLS files the
// runner uses for it: tls-ca-file, or else the certs/<host>.crt beside
// config.toml, which the runner reads when tls-ca-file is unset.
func GitLabTarget(env *hostio.Env, cfg *ConfigFile, label string, r *runnerconfig.Runner) (*gitlab.Target, error) {
	t, err := gitlab.ParseURL(r.URL, true, label+" url")
	if err != nil {
		return nil, err
	}
	// The runner opens tls-ca-file and its pair with os.ReadFile and
	// tls.LoadX509KeyPair (network/client.go, v19.3.0) after changing to
	// its --working-directory (commands/multi.go): a relative one is a
	// file of that directory.
	abs := func(p string) string {
		if p != "" && !path.IsAbs(p) && cfg.Files.RA != nil && cfg.Files.RA.Cwd != "" {
			return path.Join(cfg.Files.RA.Cwd, p)
		}
		return p
	}
	t.TLS = gitlab.TLSFiles{CA: abs(r.TLSCAFile), Cert: abs(r.TLSCertFile), Key: abs(r.TLSKeyFile)}
	if cfg.Files.Env != nil {
		t.TLS.Reader = cfg.Files
	}
	if t.TLS.CA == "" && cfg.Path != "" {
		p := path.Join(path.Dir(cfg.Path), "certs", t.Host+".crt")
		if _, err := env.Stat(p); err == nil {
			t.TLS.CA = p
		}
	}
	return t, nil
}
