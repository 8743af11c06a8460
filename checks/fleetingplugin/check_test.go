package fleetingplugin

import (
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/checktest"
	"github.com/socialwebcomputer/doctor/testkit/testroot"
)

const binary = "#!/bin/sh\nexit 1\n" // never executed

func config(plugin string) string {
	return `[[runners]]
  name = "dvp"
  url = "https://code.example.invalid"
  executor = "instance"
  [runners.autoscaler]
    plugin = "` + plugin + `"
    max_instances = 5
`
}

// pod is the document's runner: uid 1001 with fsGroup 1001, HOME and PATH
// of the runner image.
func pod(t *testing.T, plugin string, env map[string]string) *testroot.Root {
	t.Helper()
	r := testroot.New(t)
	if env == nil {
		env = map[string]string{"HOME": "/home/gitlab-runner", "PATH": "/usr/local/bin:/usr/bin:/bin"}
	}
	r.Runner(77, 1001, env, "gitlab-runner", "run", "--config", "/etc/gitlab-runner/config.toml")
	r.Status(77, 1001, 1001, 1001)
	r.Write("/etc/gitlab-runner/config.toml", config(plugin), 0o600)
	// The runner reads its own config.toml: doctor reads it as the runner.
	r.Chown("/etc/gitlab-runner/config.toml", 1001, 1001)
	return r
}

func runCheck(t *testing.T, r *testroot.Root) checks.CheckResult {
	t.Helper()
	return checktest.Run(t, r.Dir, Check)
}

func TestOnPath(t *testing.T) {
	r := pod(t, "fleeting-plugin-dvp", nil)
	r.Write("/usr/local/bin/fleeting-plugin-dvp", binary, 0o755)
	checktest.WantSays(t, runCheck(t, r), checks.StatusPass)
}

// A root-owned 0744 binary is readable, not executable, by uid 1001:
// exec.LookPath passes over it, and the runner finds no plugin.
func TestOnPathNotExecutable(t *testing.T) {
	r := pod(t, "fleeting-plugin-dvp", nil)
	r.Write("/usr/local/bin/fleeting-plugin-dvp", binary, 0o744)
	// /usr/local/bin is a system path: the fix says what to change, and
	// prints no chmod (kubefacts.FixScope).
	res := runCheck(t, r)
	checktest.WantSays(t, res, checks.StatusFail,
		"/usr/local/bin/fleeting-plugin-dvp is on the runner's PATH", "uid 1001", "passes over it",
		"mode 0744 owner 0:0", "Make /usr/local/bin/fleeting-plugin-dvp executable by the runner's user (mode 0755)",
		"doctor prints no command here: /usr/local/bin/fleeting-plugin-dvp is a system path")
	if len(res.Findings[0].Fix.Blocks()) > 0 {
		t.Errorf("a command changes a system path: %s", res.Findings[0].Fix)
	}
}

// A plugin in the runner's own home (a user's own runner: its config.toml
// is its own) is made executable, and a directory in the way searchable.
func TestInItsHomeNotExecutable(t *testing.T) {
	r := pod(t, "fleeting-plugin-dvp", map[string]string{"HOME": "/home/gitlab-runner", "PATH": "/home/gitlab-runner/bin:/usr/bin"})
	r.Write("/etc/passwd", "root:x:0:0:root:/root:/bin/bash\ngitlab-runner:x:1001:1001::/home/gitlab-runner:/bin/bash\n", 0o644)
	r.Write("/home/gitlab-runner/bin/fleeting-plugin-dvp", binary, 0o744)
	checktest.WantSays(t, runCheck(t, r), checks.StatusFail, "may not execute it",
		"sudo chmod 0755 /home/gitlab-runner/bin/fleeting-plugin-dvp")
	r.Chmod("/home/gitlab-runner/bin", 0o700) // root's
	checktest.WantSays(t, runCheck(t, r), checks.StatusFail, "may not execute it",
		"sudo chmod 0755 /home/gitlab-runner/bin/fleeting-plugin-dvp\nsudo chmod o+x /home/gitlab-runner/bin")
	// Only the directory in the way: it is made searchable, not 0755.
	r.Chmod("/home/gitlab-runner/bin/fleeting-plugin-dvp", 0o755)
	res := runCheck(t, r)
	checktest.WantSays(t, res, checks.StatusFail, "(blocked at /home/gitlab-runner/bin)", "sudo chmod o+x /home/gitlab-runner/bin")
	if strings.Contains(res.Findings[0].Fix.String(), "0755") {
		t.Errorf("a directory is given mode 0755: %s", res.Findings[0].Fix)
	}
}

// Execute through a supplementary group is execute.
func TestExecutableThroughGroup(t *testing.T) {
	r := pod(t, "fleeting-plugin-dvp", nil)
	r.Write("/usr/local/bin/fleeting-plugin-dvp", binary, 0o750)
	r.Chown("/usr/local/bin/fleeting-plugin-dvp", 0, 1001)
	checktest.WantSays(t, runCheck(t, r), checks.StatusPass)
}

// Every place is named: the value as a path, each $PATH entry, the
// install directory under the runner's own $HOME.
func TestNotFoundNamesEveryPlace(t *testing.T) {
	r := pod(t, "fleeting-plugin-dvp", nil)
	checktest.WantSays(t, runCheck(t, r), checks.StatusFail,
		"/fleeting-plugin-dvp: no such file (the plugin value as a path",
		"/usr/local/bin/fleeting-plugin-dvp: no such file", "/usr/bin/fleeting-plugin-dvp: no such file", "/bin/fleeting-plugin-dvp: no such file",
		"not in any $PATH entry (/usr/local/bin, /usr/bin, /bin)",
		"loading fleeting plugin: plugin not found: lstat /home/gitlab-runner/.config/fleeting/plugins/registry.gitlab.com/gitlab-org/fleeting/plugins/fleeting-plugin-dvp: no such file or directory",
		// /usr/local/bin is a system path: no install into it (kubefacts.FixScope).
		"into the runner's PATH, as /usr/local/bin/fleeting-plugin-dvp with mode 0755.",
		"doctor prints no command here: /usr/local/bin/fleeting-plugin-dvp is a system path")

	// A PATH directory of the runner's own home: the binary is installed there.
	r = pod(t, "fleeting-plugin-dvp", map[string]string{"HOME": "/home/gitlab-runner", "PATH": "/home/gitlab-runner/bin"})
	r.Write("/etc/passwd", "root:x:0:0:root:/root:/bin/bash\ngitlab-runner:x:1001:1001::/home/gitlab-runner:/bin/bash\n", 0o644)
	checktest.WantSays(t, runCheck(t, r), checks.StatusFail,
		"sudo install -m 0755 ./fleeting-plugin-dvp /home/gitlab-runner/bin/fleeting-plugin-dvp")
}

// A relative $PATH entry finds the file, but Go's exec.LookPath refuses a
// relative result (ErrDot), so the runner does not use it.
func TestRelativePathEntry(t *testing.T) {
	r := pod(t, "fleeting-plugin-dvp", map[string]string{"HOME": "/home/gitlab-runner", "PATH": "bin:/usr/bin"})
	r.Write("/bin/fleeting-plugin-dvp", binary, 0o755) // cwd is /, so bin/ is /bin
	checktest.WantSays(t, runCheck(t, r), checks.StatusFail, "relative $PATH entry bin, which Go's exec.LookPath refuses (ErrDot)")
}

// `gitlab-runner fleeting install` layout: the highest installed version
// the constraint matches, its plugin binary judged for the runner's uid.
func TestInstalledVersionSelected(t *testing.T) {
	base := "/home/gitlab-runner/.config/fleeting/plugins/registry.gitlab.com/gitlab-org/fleeting/plugins/dvp/"
	r := pod(t, "dvp:1", nil)
	r.Write(base+"1.0.0/plugin", binary, 0o755)
	r.Write(base+"1.2.0/plugin", binary, 0o700) // root's: uid 1001 may not run it
	r.Write(base+"1.3.0-rc.1/plugin", binary, 0o755)
	r.Write(base+"2.0.0/plugin", binary, 0o755)
	checktest.WantSays(t, runCheck(t, r), checks.StatusFail,
		base+"1.2.0/plugin is there (installed by `gitlab-runner fleeting install` (version 1.2.0, constraint \"1\"))", "may not execute it")
	r.Chmod(base+"1.2.0/plugin", 0o755)
	checktest.WantSays(t, runCheck(t, r), checks.StatusPass)
}

func TestNoInstalledVersionMatches(t *testing.T) {
	base := "/opt/fleeting/registry.gitlab.com/gitlab-org/fleeting/plugins/dvp"
	r := pod(t, "dvp:1.4", map[string]string{"HOME": "/home/gitlab-runner", "FLEETING_PLUGIN_PATH": "/opt/fleeting"})
	r.Write(base+"/1.3.9/plugin", binary, 0o755)
	r.Write(base+"/2.0.0/plugin", binary, 0o755)
	checktest.WantSays(t, runCheck(t, r), checks.StatusFail,
		"installed versions 1.3.9, 2.0.0; none matches \"1.4\"", "loading fleeting plugin: plugin not found: "+base)
}

func TestNoAutoscaler(t *testing.T) {
	r := pod(t, "x", nil)
	r.Write("/etc/gitlab-runner/config.toml", "[[runners]]\n  name = \"dvp\"\n  url = \"https://code.example.invalid\"\n  executor = \"instance\"\n", 0o600)
	checktest.WantSays(t, runCheck(t, r), checks.StatusFail, "has no [runners.autoscaler]", "executor requires autoscaler config")
}

func TestConstraints(t *testing.T) {
	var vs []version
	for _, s := range []string{"0.9.0", "1.0.0", "1.2.0", "1.2.5", "1.3.0-rc.1", "2.0.0"} {
		v, err := parseVersion(s)
		if err != nil {
			t.Fatal(err)
		}
		vs = append(vs, v)
	}
	for c, want := range map[string]string{"latest": "2.0.0", "": "2.0.0", "1": "1.2.5", "1.2": "1.2.5", "1.2.0": "1.2.0", "3": "", "1.3.0-rc.1": "1.3.0-rc.1"} {
		con, err := parseConstraint(c)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := con.pick(vs)
		if (want == "") == ok || ok && got.String() != want {
			t.Errorf("constraint %q picks %v (%v), want %q", c, got, ok, want)
		}
	}
	for addr, want := range map[string]string{
		"dvp":                              "registry.gitlab.com/gitlab-org/fleeting/plugins/dvp",
		"acme/fleeting/dvp:1":              "registry.gitlab.com/acme/fleeting/dvp",
		"registry.example.invalid/dvp:1.2": "registry.example.invalid/dvp",
	} {
		if got, _, err := parseReference(addr); err != nil || got != want {
			t.Errorf("%s: %q, %v; want %q", addr, got, err, want)
		}
	}
	if _, _, err := parseReference("Fleeting-DVP"); err == nil {
		t.Error("an uppercase reference parses")
	}
}

// The runner's log lines for each cause, as logrus prints them from
// commands/multi.go and executors/internal/autoscaler/provider.go
// (v19.3.0), with the installer's error (fleeting-artifact); the fork/exec
// tail is os/exec's, as fleeting.RunPlugin's own text could not be read here.
func TestPatterns(t *testing.T) {
	checktest.WantPatterns(t, Check,
		`WARNING: Failed to process runner                   builds=0 error=failed to update executor: initializing taskscaler: running autoscaler plugin: loading fleeting plugin: plugin not found: lstat /home/gitlab-runner/.config/fleeting/plugins/registry.gitlab.com/gitlab-org/fleeting/plugins/fleeting-plugin-dvp: no such file or directory executor=instance runner=t1_ABcdE runner_name=dvp`,
		`error=failed to update executor: initializing taskscaler: running autoscaler plugin: fork/exec /usr/local/bin/fleeting-plugin-dvp: permission denied`,
		`error=failed to update executor: initializing taskscaler: executor requires autoscaler config`)
}
