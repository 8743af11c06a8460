package job

import (
	"strconv"
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/checks/facts/configfacts"
	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/runnerconfig"
)

// config is a decoded config.toml of runners at these urls.
func config(t *testing.T, urls ...string) *configfacts.ConfigFile {
	t.Helper()
	cfg := &runnerconfig.Config{}
	for i, u := range urls {
		cfg.Runners = append(cfg.Runners, &runnerconfig.Runner{})
		cfg.Runners[i].Name = "runner-" + string(rune('a'+i))
		cfg.Runners[i].URL = u
		cfg.Runners[i].Token = "glrt-token-" + string(rune('a'+i))
	}
	return &configfacts.ConfigFile{Config: cfg}
}

func TestLocateReadsTheJobsURL(t *testing.T) {
	env := &hostio.Env{Root: t.TempDir()}
	cfg := config(t, "https://gitlab.example.invalid/", "https://other.example.invalid:8443/gitlab/")
	for raw, want := range map[string]string{
		"https://gitlab.example.invalid/group/project/-/jobs/42":             "group/project 42 https://gitlab.example.invalid:443 runner-a",
		"https://gitlab.example.invalid:443/group/sub/project/-/jobs/42/":    "group/sub/project 42 https://gitlab.example.invalid:443 runner-a",
		"https://gitlab.example.invalid/group/project/-/jobs/7/raw":          "group/project 7 https://gitlab.example.invalid:443 runner-a",
		"https://GitLab.Example.Invalid/group/project/-/jobs/42#L12":         "group/project 42 https://gitlab.example.invalid:443 runner-a",
		"https://other.example.invalid:8443/gitlab/group/project/-/jobs/420": "group/project 420 https://other.example.invalid:8443 runner-b",
		"https://gitlab.example.invalid/g/p%20q/-/jobs/1":                    "g/p q 1 https://gitlab.example.invalid:443 runner-a",
	} {
		loc, err := Locate(env, cfg, Ref{URL: raw})
		if err != nil {
			t.Errorf("%s: %v", raw, err)
			continue
		}
		got := loc.Project + " " + strconv.FormatInt(loc.ID, 10) + " " + loc.Target.Origin()
		for _, e := range loc.Entries {
			got += " " + e.Name
		}
		if got != want {
			t.Errorf("%s: %q, want %q", raw, got, want)
		}
	}
}

func TestLocateRefuses(t *testing.T) {
	env := &hostio.Env{Root: t.TempDir()}
	cfg := config(t, "https://gitlab.example.invalid/")
	for _, c := range []struct {
		ref  Ref
		says string
	}{
		{Ref{URL: "https://evil.example.invalid/group/project/-/jobs/42"}, "is not the GitLab of any [[runners]] entry of this host (this host's runners talk to https://gitlab.example.invalid:443)"},
		{Ref{URL: "http://gitlab.example.invalid/group/project/-/jobs/42"}, "http://gitlab.example.invalid:80, which is not the GitLab"},
		{Ref{URL: "https://gitlab.example.invalid/group/project/-/pipelines/42"}, "is not a job's URL"},
		{Ref{URL: "https://gitlab.example.invalid/-/jobs/42"}, "is not a job's URL"},
		{Ref{URL: "https://gitlab.example.invalid/g/p/-/jobs/x42"}, "is not a job's URL"},
		{Ref{URL: "ftp://gitlab.example.invalid/g/p/-/jobs/42"}, "is not a job's URL"},
		{Ref{URL: "https://gitlab.example.invalid/g/p/-/jobs/42", GitLabURL: "https://evil.example.invalid/"}, "not on --gitlab-url"},
		{Ref{Project: "g/p", ID: 42}, "need --gitlab-url"},
		{Ref{URL: "https://u:secretpass@evil.example.invalid/g/p/-/jobs/1"}, "is not the GitLab"},
	} {
		_, err := Locate(env, cfg, c.ref)
		if err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%+v: %v, want %q", c.ref, err, c.says)
		}
		if err != nil && strings.Contains(err.Error(), "secretpass") {
			t.Errorf("the URL's password is in the error: %v", err)
		}
	}
	// --gitlab-url names a GitLab no runner talks to, on purpose.
	loc, err := Locate(env, cfg, Ref{Project: "12", ID: 42, GitLabURL: "https://another.example.invalid/"})
	if err != nil || loc.Target.Origin() != "https://another.example.invalid:443" || len(loc.Entries) != 0 {
		t.Errorf("--gitlab-url alone: %+v, %v", loc, err)
	}
}
