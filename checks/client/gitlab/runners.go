package gitlab

import (
	"path"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts"
	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/runnerconfig"
)

// Targets are the GitLabs doctor reaches: every [[runners]] url, then the
// host of CI_REPOSITORY_URL, de-duplicated by origin (a repository host that
// is a runner's GitLab keeps that runner's path and TLS files). A url that
// does not parse comes back in bad, labelled, for the caller to report.
func Targets(env *hostio.Env, cfg *facts.ConfigFile, repositoryURL string) (ts []*Target, bad []BadURL) {
	for i, r := range cfg.Config.Runners {
		t, err := RunnerTarget(env, cfg, facts.RunnerLabel(i, r), r)
		if err != nil {
			bad = append(bad, BadURL{Pos: i, Runner: facts.RefOf(i, r), Err: err})
			continue
		}
		t.Runners = []checks.RunnerRef{*facts.RefOf(i, r)}
		ts = append(ts, t)
	}
	if repositoryURL != "" {
		t, err := ParseURL(repositoryURL, false, "CI_REPOSITORY_URL")
		if err != nil {
			bad = append(bad, BadURL{Pos: -1, Err: err})
		} else {
			ts = append(ts, t)
		}
	}
	return Merge(ts), bad
}

// BadURL is a url that names no GitLab: a runner's (Pos its 0-based
// position) or CI_REPOSITORY_URL (Pos -1, Runner nil).
type BadURL struct {
	Pos    int
	Runner *checks.RunnerRef
	Err    error
}

// RunnerTarget is a [[runners]] element's GitLab with the TLS files the
// runner uses for it: tls-ca-file, or else the certs/<host>.crt beside
// config.toml, which the runner reads when tls-ca-file is unset.
func RunnerTarget(env *hostio.Env, cfg *facts.ConfigFile, label string, r *runnerconfig.Runner) (*Target, error) {
	t, err := ParseURL(r.URL, true, label+" url")
	if err != nil {
		return nil, err
	}
	t.TLS = TLSFiles{CA: r.TLSCAFile, Cert: r.TLSCertFile, Key: r.TLSKeyFile, Reader: cfg.Files}
	if t.TLS.CA == "" && cfg.Path != "" {
		p := path.Join(path.Dir(cfg.Path), "certs", t.Host+".crt")
		if _, err := env.Stat(p); err == nil {
			t.TLS.CA = p
		}
	}
	return t, nil
}
