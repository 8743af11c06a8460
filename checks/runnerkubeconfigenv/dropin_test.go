package runnerkubeconfigenv

import (
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/checktest"
	"github.com/socialwebcomputer/doctor/checks/facts/hostfacts"
	"github.com/socialwebcomputer/doctor/checks/facts/kubefacts"
	"github.com/socialwebcomputer/doctor/testkit/docshape"
	"github.com/socialwebcomputer/doctor/testkit/hostile"
	"github.com/socialwebcomputer/doctor/testkit/hostilefix"
	"github.com/socialwebcomputer/doctor/testkit/testroot"
)

// rootRunner is a root runner process whose unit systemd does not have on
// this root: dropInAllowed lets its drop-in be written.
func rootRunner() (*kubefacts.FixScope, *hostfacts.RunAs, *hostfacts.Service) {
	return &kubefacts.FixScope{Roots: []string{"/etc/systemd/system/gitlab-runner.service.d"}}, &hostfacts.RunAs{Process: &hostfacts.Process{PID: 4242, UIDKnown: true}, UIDKnown: true},
		&hostfacts.Service{Name: "gitlab-runner.service"}
}

// environment is what systemd reads from a drop-in's Environment= line
// (docshape.SystemdWords: extract_first_word's unquoting and C
// unescaping, then %%): the one assignment it must be.
func environment(t *testing.T, line string) string {
	t.Helper()
	w, ok := strings.CutPrefix(line, "Environment=")
	if !ok {
		t.Fatalf("not an Environment= line: %q", line)
	}
	words, err := docshape.SystemdWords(w)
	if err != nil || len(words) != 1 {
		t.Fatalf("systemd reads %q as %q (%v), not one assignment", line, words, err)
	}
	return words[0]
}

// A KUBECONFIG from [[runners]] environment reaches the drop-in as data:
// one Environment= line whose value systemd reads back as exactly the
// value (a newline in it stays in it, never a second directive), and the
// commands that write it carry the unit and the file as the benign ones
// do. A value an encoder refuses is no block, but a sentence.
func TestDropInCarriesAHostileKubeconfigAsData(t *testing.T) {
	build := func(v string) checks.Steps {
		scope, ra, svc := rootRunner()
		return hostDropIn(scope, ra, svc, "/etc/gitlab-runner/"+v+"/kubeconfig.yaml", "environment = [...]")
	}
	benign := build("plain")
	if blocks := benign.Blocks(); len(blocks) != 3 || blocks[0].Kind != checks.KindDropIn || blocks[1].Kind != checks.KindShell || blocks[2].Text != "systemctl show -p Environment gitlab-runner.service" {
		t.Fatalf("benign: %q", benign)
	}
	for _, v := range hostile.Values {
		got := build(v)
		if relativeList("/etc/gitlab-runner/" + v + "/kubeconfig.yaml") {
			if len(got.Blocks()) != 0 || !strings.Contains(got.String(), "is not an absolute path") {
				t.Errorf("%q: a relative entry, and %q", v, got)
			}
			continue
		}
		blocks := got.Blocks()
		if len(blocks) == 0 {
			if !hostilefix.WithheldStep(got[len(got)-1]) {
				t.Errorf("%q: no block and no reason: %q", v, got)
			}
			t.Logf("%q: refused: %s", v, got[len(got)-1].Text)
			continue
		}
		if len(blocks) != 3 {
			t.Errorf("%q: %d blocks: %q", v, len(blocks), got)
			continue
		}
		lines := strings.Split(blocks[0].Text, "\n")
		if len(lines) != 2 || lines[0] != "[Service]" {
			t.Errorf("%q: the drop-in is not one section of one line:\n%s", v, blocks[0].Text)
			continue
		}
		if want, back := "KUBECONFIG=/etc/gitlab-runner/"+v+"/kubeconfig.yaml", environment(t, lines[1]); back != want {
			t.Errorf("%q: systemd reads %q, want %q", v, back, want)
		}
		hostilefix.SameShape(t, v, benign.Blocks()[1].Text, blocks[1].Text)
		if !strings.Contains(blocks[1].Text, "\n"+blocks[0].Text+"\n") {
			t.Errorf("%q: tee writes another document than the one shown:\n%s", v, blocks[1].Text)
		}
	}
}

// A relative KUBECONFIG is said, in a sentence, never written.
func TestRelativeKubeconfigGetsNoDropIn(t *testing.T) {
	scope, ra, svc := rootRunner()
	for _, v := range []string{"kubeconfig.yaml", "./kube/config", "~/.kube/config", "/etc/a.yaml:b.yaml", ":", ""} {
		got := hostDropIn(scope, ra, svc, v, "environment = [...]")
		if len(got.Blocks()) != 0 || !strings.Contains(got.String(), "is not an absolute path") {
			t.Errorf("%q: %q", v, got)
		}
	}
	if got := hostDropIn(scope, ra, svc, "/etc/a.yaml::/etc/b.yaml", ""); len(got.Blocks()) != 3 {
		t.Errorf("a list of absolute paths: %q", got)
	}
}

// A unit name systemd would refuse gets no drop-in and no restart.
func TestInvalidUnitGetsNoCommand(t *testing.T) {
	scope, ra, svc := rootRunner()
	for _, name := range []string{"a b.service", "x\nExecStartPre=/bin/sh.service", "../../etc/passwd.service", "runner"} {
		svc.Name = name
		got := hostDropIn(scope, ra, svc, "/etc/gitlab-runner/kubeconfig.yaml", "")
		if len(got.Blocks()) != 0 || !hostilefix.WithheldStep(got[len(got)-1]) {
			t.Errorf("%q: %q", name, got)
		}
		if st := restart(name); !hostilefix.WithheldStep(st) {
			t.Errorf("%q: restart %q", name, st)
		}
	}
}

// FixScope decides whose drop-in directory a fix may write (a root
// process's unit's, even without a unit file: kubefacts.TestScopeRoots), and a
// runner it cannot vouch for gets the drop-in's text and no command.
func TestDropInOfAnotherUsersProcessIsWithheld(t *testing.T) {
	scope, ra, svc := rootRunner()
	scope.Refused = "pid 4242 runs gitlab-runner as neither root nor a systemd unit's user"
	if got := hostDropIn(scope, ra, svc, "/etc/gitlab-runner/kubeconfig.yaml", ""); len(got.Blocks()) != 1 || !hostilefix.WithheldStep(got[len(got)-1]) {
		t.Errorf("a refused runner: %q", got)
	}
}

// End to end: a KUBECONFIG in config.toml's environment that holds a
// newline and a second directive is one Environment= value in the
// drop-in the finding prints.
func TestHostileEnvironmentValueThroughTheCheck(t *testing.T) {
	root := testroot.New(t)
	root.Runner(4242, 0, map[string]string{"PATH": "/usr/bin:/bin"})
	const v = "/etc/gitlab-runner/k.yaml\nExecStartPre=/bin/touch /tmp/pwned"
	root.Write("/etc/gitlab-runner/config.toml", `concurrent = 1
[[runners]]
  name = "hostile"
  url = "https://gitlab.example.invalid/"
  executor = "kubernetes"
  environment = ["KUBECONFIG=/etc/gitlab-runner/k.yaml\nExecStartPre=/bin/touch /tmp/pwned"]
  [runners.kubernetes]
    namespace = "gitlab-runner"
`, 0o600)
	r := checktest.ForRunner(t, checktest.Check(t, Check, checktest.Root(root.Dir), checktest.Offline()), 1)
	f := checktest.WantFinding(t, r, checks.Critical, "KUBECONFIG appears only in [[runners]] environment")
	blocks := f.Fix.Blocks()
	if len(blocks) != 3 || blocks[0].Kind != checks.KindDropIn {
		t.Fatalf("want the drop-in, its commands and the read-back: %q", f.Fix)
	}
	lines := strings.Split(blocks[0].Text, "\n")
	if len(lines) != 2 {
		t.Fatalf("the drop-in is not one line:\n%s", blocks[0].Text)
	}
	if back := environment(t, lines[1]); back != "KUBECONFIG="+v {
		t.Errorf("systemd reads %q", back)
	}
}

// A vendor drop-in that unsets KUBECONFIG: UnsetEnvironment= is applied
// last, so no Environment= line brings it back. doctor says which line
// removes it, and its drop-in empties that list and gives back its other
// entries, after the line that removes it.
func TestUnsetEnvironmentRemovesKubeconfig(t *testing.T) {
	root := testroot.New(t)
	root.Write("/etc/systemd/system/gitlab-runner.service", "[Service]\nExecStart=/usr/bin/gitlab-runner run --config /etc/gitlab-runner/config.toml\n"+
		"Environment=KUBECONFIG=/etc/gitlab-runner/kubeconfig.yaml\nUnsetEnvironment=NO_PROXY\n", 0o644)
	root.Write("/usr/lib/systemd/system/service.d/zz-hardening.conf", "[Service]\nUnsetEnvironment=KUBECONFIG HTTP_PROXY\n", 0o644)
	root.Write("/usr/bin/gitlab-runner", "#!/bin/sh\n", 0o755)
	root.Write("/etc/gitlab-runner/kubeconfig.yaml", "apiVersion: v1\nkind: Config\n", 0o600)
	root.Write("/etc/gitlab-runner/config.toml", "concurrent = 1\n[[runners]]\n  name = \"k\"\n  url = \"https://gitlab.example.invalid/\"\n  executor = \"kubernetes\"\n  [runners.kubernetes]\n    namespace = \"gitlab-runner\"\n", 0o600)
	r := checktest.ForRunner(t, checktest.Check(t, Check, checktest.Root(root.Dir), checktest.Offline()), 1)
	f := checktest.WantFinding(t, r, checks.Critical,
		"gitlab-runner.service sets KUBECONFIG (/etc/systemd/system/gitlab-runner.service:3), but UnsetEnvironment=KUBECONFIG (/usr/lib/systemd/system/service.d/zz-hardening.conf:2) removes it",
		"a systemd drop-in named zz-kubeconfig.conf", "it must come after /usr/lib/systemd/system/service.d/zz-hardening.conf:2")
	if blocks := f.Fix.Blocks(); len(blocks) != 3 || blocks[0].Text != "[Service]\nEnvironment=KUBECONFIG=/etc/gitlab-runner/kubeconfig.yaml\nUnsetEnvironment=\nUnsetEnvironment=NO_PROXY\nUnsetEnvironment=HTTP_PROXY" {
		t.Errorf("the drop-in: %q", f.Fix)
	}
}
