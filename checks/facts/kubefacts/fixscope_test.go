package kubefacts

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts/configfacts"
	"github.com/socialwebcomputer/doctor/checks/facts/hostfacts"
	"github.com/socialwebcomputer/doctor/internal/fixcode"
	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/internal/source/systemd"
)

// scopeRoot lays a host: /etc/passwd with root, gitlab-runner (999) and
// alice (1000); /etc/gitlab-runner with a config; alice's own config and a
// link in gitlab-runner's home to /etc/shadow.
func scopeRoot(t *testing.T) *hostio.Env {
	t.Helper()
	root := t.TempDir()
	write := func(rel, text string, uid int) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Lchown(p, uid, uid); err != nil {
			t.Fatal(err)
		}
	}
	write("etc/passwd", "root:x:0:0:root:/root:/bin/bash\ngitlab-runner:x:999:999::/home/gitlab-runner:/bin/bash\nalice:x:1000:1000::/home/alice:/bin/bash\n", 0)
	write("etc/shadow", "root:*:1::::::\n", 0)
	write("etc/gitlab-runner/config.toml", "concurrent = 1\n", 0)
	write("home/alice/runner/config.toml", "concurrent = 1\n", 1000)
	write("home/gitlab-runner/.kube/config", "x", 999)
	if err := os.Symlink("/etc/shadow", filepath.Join(root, "home/gitlab-runner/.kube/shadow")); err != nil {
		t.Fatal(err)
	}
	return &hostio.Env{Root: root}
}

func process(uid int, user string) *hostfacts.RunAs {
	return &hostfacts.RunAs{Process: &hostfacts.Process{PID: 4242, UID: uid, UIDKnown: true, User: user}, UIDKnown: true, UID: uid, User: user, Cwd: "/"}
}

func unit(user string) *hostfacts.Service {
	return &hostfacts.Service{Name: "gitlab-runner.service", Unit: &systemd.Unit{Name: "gitlab-runner.service", Path: "/etc/systemd/system/gitlab-runner.service", User: user, ExecStartPath: "/usr/bin/gitlab-runner"}}
}

// Any local user can start a process named gitlab-runner naming root's
// files: no fix acts for it, whatever path it names.
func TestScopeRefusesARunnerNobodyInstalled(t *testing.T) {
	env := scopeRoot(t)
	cfg := &configfacts.ConfigFile{Path: "/etc/shadow"}
	s := fixScope(env, process(1000, "alice"), cfg, &Kubeconfig{Files: []*KubeFile{{Path: "/etc/shadow"}}}, &InCluster{})
	s.env = env
	if s.Refused == "" || !strings.Contains(s.Refused, "a runner nobody installed") {
		t.Fatalf("alice's process naming /etc/shadow is trusted: %+v", s)
	}
	for _, p := range []string{"/etc/shadow", "/etc", "/etc/gitlab-runner/config.toml", "/home/alice/x"} {
		if s.Path(p) == nil {
			t.Errorf("%s may be changed for alice's process", p)
		}
	}
	step := ChangeFix(s, "alice", Change{Path: "/etc/shadow", Mode: "0600", Chown: true})
	if step.Kind != checks.KindText || strings.Contains(step.Text, "chown") {
		t.Errorf("a fix acts for it: %+v", step)
	}
	// Running as the unit's user is not enough when the unit says another.
	ra := process(1000, "alice")
	ra.Unit = unit("gitlab-runner")
	if s := fixScope(env, ra, &configfacts.ConfigFile{Path: "/etc/gitlab-runner/config.toml"}, nil, &InCluster{}); s.Refused == "" {
		t.Error("alice's process is trusted beside a unit that runs gitlab-runner")
	}
}

// A user's own runner, with the config.toml it owns, gets fixes in its
// home only; the unit's user gets the runner's directories; root's runner
// its config and kubeconfig directories. Never a system path, a relative
// one, or one through a symbolic link.
func TestScopeRoots(t *testing.T) {
	env := scopeRoot(t)
	personal := fixScope(env, process(1000, "alice"), &configfacts.ConfigFile{Path: "/home/alice/runner/config.toml"}, nil, &InCluster{})
	personal.env = env
	if personal.Refused != "" || personal.Path("/home/alice/.kube/config") != nil || personal.Path("/home/alice/runner/kube.yaml") != nil ||
		personal.Path("/etc/gitlab-runner/kubeconfig.yaml") == nil {
		t.Errorf("alice's own runner: %+v", personal)
	}

	ra := process(999, "gitlab-runner")
	ra.Unit = unit("gitlab-runner")
	svc := fixScope(env, ra, &configfacts.ConfigFile{Path: "/etc/gitlab-runner/config.toml"}, &Kubeconfig{Files: []*KubeFile{{Path: "/srv/kube/config"}}}, &InCluster{})
	svc.env = env
	for p, ok := range map[string]bool{
		"/etc/gitlab-runner/kubeconfig.yaml":                          true,
		"/home/gitlab-runner/.kube/config":                            true,
		"/etc/systemd/system/gitlab-runner.service.d/kubeconfig.conf": true,
		"/usr/bin/gitlab-runner":                                      true,
		"/srv/kube/config":                                            false, // a non-root process's environment adds no root
		"/home/gitlab-runner/.kube/shadow":                            false, // a link to /etc/shadow
		"/etc/shadow":                                                 false,
		"/etc":                                                        false,
		"/":                                                           false,
		"/usr/bin/bash":                                               false,
		"kubeconfig.yaml":                                             false,
		"/etc/gitlab-runner/../shadow":                                false,
	} {
		if err := svc.Path(p); (err == nil) != ok {
			t.Errorf("the unit's runner, %s: %v, want allowed=%v", p, err, ok)
		}
	}

	noUnit := process(0, "root")
	noUnit.Unit = &hostfacts.Service{Name: "gitlab-runner.service"}
	if s := fixScope(env, noUnit, &configfacts.ConfigFile{Path: "/etc/gitlab-runner/config.toml"}, nil, &InCluster{}); s.Path("/etc/systemd/system/gitlab-runner.service.d/kubeconfig.conf") != nil {
		t.Errorf("a root process's unit (no unit file): %+v", s)
	}
	userNoUnit := process(999, "gitlab-runner")
	userNoUnit.Unit = &hostfacts.Service{Name: "gitlab-runner.service"}
	if s := fixScope(env, userNoUnit, &configfacts.ConfigFile{Path: "/etc/gitlab-runner/config.toml"}, nil, &InCluster{}); s.Path("/etc/systemd/system/gitlab-runner.service.d/kubeconfig.conf") == nil {
		t.Errorf("a user's process without a unit may write a drop-in: %+v", s)
	}

	rootRunner := fixScope(env, process(0, "root"), &configfacts.ConfigFile{Path: "/srv/runner/config.toml"}, &Kubeconfig{Files: []*KubeFile{{Path: "/srv/kube/config"}, {Path: "/etc/kubeconfig"}}}, &InCluster{})
	rootRunner.env = env
	if rootRunner.Path("/srv/runner/config.toml") != nil || rootRunner.Path("/srv/kube/config") != nil || rootRunner.Path("/etc/kubeconfig") == nil || rootRunner.Path("/root/.bashrc") == nil {
		t.Errorf("root's runner: %+v", rootRunner)
	}
}

// Narrowing the mode of a file the runner's user owns is allowed wherever
// it is (it gives nothing away); chown is not.
func TestChangeFixNarrowsOwnFiles(t *testing.T) {
	env := scopeRoot(t)
	ra := process(999, "gitlab-runner")
	ra.Unit = unit("gitlab-runner")
	s := fixScope(env, ra, &configfacts.ConfigFile{Path: "/etc/gitlab-runner/config.toml"}, nil, &InCluster{})
	s.env = env
	s.Roots = nil // nothing is the runner's by directory
	if st := ChangeFix(s, "gitlab-runner", Change{Path: "/home/gitlab-runner/.kube/config", Mode: "0600"}); st.Kind != checks.KindShell {
		t.Errorf("narrowing the runner's own file was refused: %+v", st)
	}
	if st := ChangeFix(s, "gitlab-runner", Change{Path: "/home/gitlab-runner/.kube/config", Mode: "0644"}); st.Kind == checks.KindShell {
		t.Errorf("widening was allowed: %+v", st)
	}
	if st := ChangeFix(s, "gitlab-runner", Change{Path: "/etc/shadow", Mode: "0600"}); st.Kind == checks.KindShell {
		t.Errorf("root's file was changed: %+v", st)
	}
}

// A fix's kubectl aimed at the runner's kubeconfig is never printed when
// that kubeconfig runs a credential plugin: kubectl would run it as
// whoever pastes the fix.
func TestKubectlRefusesACredentialPlugin(t *testing.T) {
	k := &KubeContext{Kubeconfig: &Kubeconfig{Files: []*KubeFile{{Path: "/etc/gitlab-runner/kubeconfig.yaml"}}}, ContextName: "ci",
		AuthInfo: &clientcmdapi.AuthInfo{ClientCertificate: "/etc/gitlab-runner/client.crt"}}
	text, err := fixcode.Commands(k.Kubectl().Arg("get", "ns")).Render()
	if err != nil || text != "KUBECONFIG=/etc/gitlab-runner/kubeconfig.yaml kubectl --context ci get ns" {
		t.Fatalf("%q, %v", text, err)
	}
	k.AuthInfo = &clientcmdapi.AuthInfo{Exec: &clientcmdapi.ExecConfig{Command: "/home/gitlab-runner/plugin"}}
	if text, err := fixcode.Commands(k.Kubectl().Arg("get", "ns").Sudo()).Render(); err == nil {
		t.Errorf("a kubectl that runs the runner's exec plugin was printed: %s", text)
	}
	if st := checks.Commands(k.Kubectl().Arg("get", "ns")); st.Kind != checks.KindText || !strings.Contains(st.Text, "credential plugin") {
		t.Errorf("the step is %+v", st)
	}
}
