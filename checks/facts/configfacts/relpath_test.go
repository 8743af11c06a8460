package configfacts

import (
	"context"
	"testing"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts/hostfacts"
	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/testkit/testroot"
)

// evalRunAs is the run-as fact and the config file of a root.
func evalRunAs(t *testing.T, root string) (*hostfacts.RunAs, *ConfigFile) {
	t.Helper()
	var ra *hostfacts.RunAs
	var cfg *ConfigFile
	probe := &checks.Check{
		ID: "probe", Title: "t", Severity: checks.Info,
		Doc:      checks.Doc{Cause: "c", Symptom: "s", Fix: checks.Text("f"), Verify: checks.Text("v")},
		Requires: []checks.Node{hostfacts.RunAsFact, ConfigFact},
		Run:      func(p *checks.Pass) error { ra, cfg = hostfacts.RunAsFact.Get(p), ConfigFact.Get(p); return nil },
	}
	if _, err := checks.Run(context.Background(), &hostio.Env{Root: root, Offline: true}, []*checks.Check{probe}, checks.Options{}); err != nil {
		t.Fatal(err)
	}
	return ra, cfg
}

// Relative paths resolve against the directory the runner works in: a
// unit's relative --working-directory under its WorkingDirectory= (the
// runner calls os.Chdir with it, commands/multi.go, v19.3.0), and
// --config under that; a process whose cwd link doctor may not read, by
// its absolute --working-directory; and tls-ca-file in config.toml
// against that directory too (os.ReadFile in network/client.go).
func TestRelativePathsResolveInTheRunnersDirectory(t *testing.T) {
	root := testroot.New(t)
	root.Write("/etc/systemd/system/gitlab-runner.service", "[Service]\nWorkingDirectory=/srv\n"+
		"ExecStart=/usr/bin/gitlab-runner run --working-directory runner --config config.toml\n", 0o644)
	root.Write("/srv/runner/config.toml", "[[runners]]\n  name = \"r\"\n  url = \"https://gitlab.example.invalid/\"\n  token = \"glrt-x\"\n  executor = \"shell\"\n  tls-ca-file = \"certs/ca.crt\"\n", 0o600)
	ra, cfg := evalRunAs(t, root.Dir)
	if ra.Cwd != "/srv/runner" || cfg.Path != "/srv/runner/config.toml" {
		t.Errorf("unit: cwd %q, config %q; want /srv/runner and /srv/runner/config.toml", ra.Cwd, cfg.Path)
	}
	if cfg.Config == nil || len(cfg.Config.Runners) == 0 {
		t.Fatalf("config.toml at %s did not decode", cfg.Path)
	}
	env := &hostio.Env{Root: root.Dir}
	cfg.Files = hostfacts.RunnerReader{Env: env, RA: ra}
	tgt, err := GitLabTarget(env, cfg, "r", cfg.Config.Runners[0])
	if err != nil {
		t.Fatal(err)
	}
	if tgt.TLS.CA != "/srv/runner/certs/ca.crt" {
		t.Errorf("tls-ca-file: %q, want /srv/runner/certs/ca.crt", tgt.TLS.CA)
	}

	proc := testroot.New(t)
	proc.Runner(4242, 0, nil, "/usr/bin/gitlab-runner", "run", "--working-directory", "/home/gitlab-runner", "--config", "config.toml")
	proc.Write("/home/gitlab-runner/config.toml", "concurrent = 1\n", 0o600)
	ra, cfg = evalRunAs(t, proc.Dir)
	if ra.Cwd != "/home/gitlab-runner" || cfg.Path != "/home/gitlab-runner/config.toml" {
		t.Errorf("process without a cwd link: cwd %q, config %q", ra.Cwd, cfg.Path)
	}
}

// The unit is the one whose cgroup the runner is in when that is a
// runner's unit (here a template's instance run without --service), never
// another service's whose shell started it.
func TestUnitFromTheProcessCgroup(t *testing.T) {
	for _, tc := range []struct {
		cgroup string
		args   []string
		want   string
	}{
		{"0::/system.slice/system-gitlab\\x2drunner.slice/gitlab-runner@tenant.service\n", nil, "gitlab-runner@tenant.service"},
		{"0::/system.slice/ci-agent.service\n", nil, hostfacts.DefaultUnit},
		{"0::/system.slice/ci-agent.service\n", []string{"--service", "my-runner"}, "my-runner.service"},
		{"12:name=systemd:/system.slice/my-runner.service\n0::/\n", []string{"--service", "my-runner"}, "my-runner.service"},
		{"0::/user.slice/user-0.slice/session-3.scope\n", nil, hostfacts.DefaultUnit},
	} {
		root := testroot.New(t)
		root.Runner(4242, 0, nil, append([]string{"/usr/bin/gitlab-runner", "run"}, tc.args...)...)
		root.Write("/proc/4242/cgroup", tc.cgroup, 0o444)
		var got string
		probe := &checks.Check{
			ID: "probe", Title: "t", Severity: checks.Info,
			Doc:      checks.Doc{Cause: "c", Symptom: "s", Fix: checks.Text("f"), Verify: checks.Text("v")},
			Requires: []checks.Node{hostfacts.ServiceFact},
			Run:      func(p *checks.Pass) error { got = hostfacts.ServiceFact.Get(p).Name; return nil },
		}
		if _, err := checks.Run(context.Background(), &hostio.Env{Root: root.Dir, Offline: true}, []*checks.Check{probe}, checks.Options{}); err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("cgroup %q, args %q: unit %q, want %q", tc.cgroup, tc.args, got, tc.want)
		}
	}
}
