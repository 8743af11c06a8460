package runnerservice

import (
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/checktest"
	"github.com/socialwebcomputer/doctor/checks/facts/kubefacts"
	"github.com/socialwebcomputer/doctor/internal/fixcode"
	"github.com/socialwebcomputer/doctor/internal/source/systemd"
	"github.com/socialwebcomputer/doctor/testkit/hostile"
	"github.com/socialwebcomputer/doctor/testkit/hostilefix"
	"github.com/socialwebcomputer/doctor/testkit/testroot"
)

const unit = `[Unit]
Description=GitLab Runner
[Service]
ExecStart=/usr/bin/gitlab-runner "run" "--config" "/etc/gitlab-runner/config.toml" "--service" "gitlab-runner"
Restart=always
[Install]
WantedBy=multi-user.target
`

// world is a root with a running runner (its environ as given) and the
// unit, enabled or not, with a drop-in setting KUBECONFIG.
func world(t *testing.T, env map[string]string, enabled bool) *testroot.Root {
	t.Helper()
	r := testroot.New(t)
	r.Runner(4242, 0, env)
	r.Write("/etc/systemd/system/gitlab-runner.service", unit, 0o644)
	r.Write("/etc/systemd/system/gitlab-runner.service.d/override.conf",
		"[Service]\nEnvironment=KUBECONFIG=/etc/gitlab-runner/tenant-ci/kubeconfig.yaml\n", 0o644)
	if enabled {
		link := filepath.Join(r.Dir, "etc/systemd/system/multi-user.target.wants/gitlab-runner.service")
		if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("/etc/systemd/system/gitlab-runner.service", link); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

func runCheck(t *testing.T, r *testroot.Root) checks.CheckResult {
	t.Helper()
	return checktest.Run(t, r.Dir, Check)
}

func TestDropInThatTheProcessPredates(t *testing.T) {
	r := runCheck(t, world(t, map[string]string{"PATH": "/usr/bin"}, true))
	checktest.WantSays(t, r, checks.StatusFail, "sets KUBECONFIG", "the running process predates the drop-in",
		"sudo systemctl daemon-reload\nsudo systemctl restart gitlab-runner.service", "override.conf:2")
	for _, f := range r.Findings {
		if f.Severity != checks.Error {
			t.Errorf("a KUBECONFIG the process lacks is an error, got %s: %s", f.Severity, f.Cause)
		}
	}
}

func TestProcessMatchingItsEnabledUnitPasses(t *testing.T) {
	r := runCheck(t, world(t, map[string]string{"KUBECONFIG": "/etc/gitlab-runner/tenant-ci/kubeconfig.yaml"}, true))
	checktest.WantSays(t, r, checks.StatusPass)
}

func TestUnitNotEnabled(t *testing.T) {
	r := runCheck(t, world(t, map[string]string{"KUBECONFIG": "/etc/gitlab-runner/tenant-ci/kubeconfig.yaml"}, false))
	checktest.WantSays(t, r, checks.StatusFail, "is not enabled", "sudo systemctl enable gitlab-runner.service")
}

func TestNoUnitIsSkipped(t *testing.T) {
	root := testroot.New(t)
	root.Runner(4242, 0, nil)
	r := runCheck(t, root)
	checktest.WantSays(t, r, checks.StatusSkipped, "the runner is not run by systemd here")
}

// A --service that no systemd unit can be named is the finding itself:
// shown escaped, and in no command. One that is a unit name is carried
// as one word (here: no unit file is on the path, so the check skips).
func TestServiceNameThatIsNoUnitNameIsTheFinding(t *testing.T) {
	for _, v := range hostile.Values {
		if !utf8.ValidString(v) || strings.Contains(v, "\x00") {
			continue // no cmdline the kernel shows: not a runner process (hostfacts.parseCmdline); a NUL ends an argument
		}
		root := testroot.New(t)
		root.Runner(4242, 0, nil, "/usr/bin/gitlab-runner", "run", "--config", "/etc/gitlab-runner/config.toml", "--service", v)
		r := runCheck(t, root)
		name := v
		if name == "" {
			name = "gitlab-runner"
		}
		if !strings.Contains(name, ".") {
			name += ".service"
		}
		for _, f := range r.Findings {
			if blocks := f.Fix.Blocks(); len(blocks) > 0 {
				t.Errorf("--service %q: a block in the fix: %q", v, blocks)
			}
		}
		if fixcode.UnitName(name) == nil {
			continue
		}
		checktest.WantSays(t, r, checks.StatusFail, "The runner process's --service ", "is not a valid systemd unit name", "/proc/4242/cmdline")
		if len(r.Findings) != 1 {
			t.Errorf("--service %q: %d findings, want the name's alone:\n%s", v, len(r.Findings), checktest.Text(r))
		}
	}
}

// The chmod of a unit's binary carries the path as one word, whatever it
// holds, and the restart after it is unchanged.
func TestChmodCarriesTheBinaryAsOneWord(t *testing.T) {
	build := func(v string) checks.Steps {
		p := "/opt/runner-" + v + "/gitlab-runner"
		return installBinary(&kubefacts.FixScope{Binary: path.Clean(p)}, p, systemd.ErrNoExecuteBit, reload("gitlab-runner.service")...)
	}
	benign := build("plain")
	if len(benign) != 1 || benign[0].Kind != checks.KindShell {
		t.Fatalf("benign fix: %q", benign)
	}
	for _, v := range hostile.Values {
		got := build(v)
		switch {
		case len(got) == 1 && got[0].Kind == checks.KindShell:
			hostilefix.SameShape(t, v, benign[0].Text, got[0].Text)
		case len(got) == 4 && hostilefix.WithheldStep(got[1]):
			// refused (the path is relative once cleaned, say): no chmod
		case len(got) == 1 && hostilefix.WithheldStep(got[0]) && strings.Contains(v, "\x00"):
			// a NUL, which no command carries: no chmod, and no restart after it
		default:
			t.Errorf("%q: %q", v, got)
		}
	}
}

// A binary that is not the unit's gitlab-runner, in a system directory,
// gets no chmod: doctor says why, and the start still follows.
func TestChmodOfAnotherBinaryIsWithheld(t *testing.T) {
	root := testroot.New(t)
	root.Write("/etc/systemd/system/gitlab-runner.service", strings.Replace(unit, "/usr/bin/gitlab-runner", "/usr/local/bin/runner-wrapper", 1), 0o644)
	root.Write("/usr/local/bin/runner-wrapper", "#!/bin/sh\n", 0o644)
	r := runCheck(t, root)
	checktest.WantSays(t, r, checks.StatusFail, "has no execute bit",
		"doctor prints no command here: /usr/local/bin/runner-wrapper is a system path, not one of the runner's own.",
		"sudo systemctl daemon-reload\nsudo systemctl restart gitlab-runner.service")
	if strings.Contains(checktest.Text(r), "chmod 0755") {
		t.Errorf("a chmod of a binary that is not the runner's:\n%s", checktest.Text(r))
	}
}
