//go:build integration

package cli

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/internal/testing/fixture"
	"github.com/socialwebcomputer/doctor/internal/testing/testenv"
	"github.com/socialwebcomputer/doctor/internal/testing/testroot"
	"github.com/socialwebcomputer/doctor/report"
)

// deckhouseDockerConfig is the config.toml the Deckhouse document's
// `register --executor docker --docker-image alpine:3 --docker-helper-image
// …/runner-helper:<VERSION>` writes, with <VERSION> given and an address
// under .invalid.
func deckhouseDockerConfig(helperTag string) string {
	return fmt.Sprintf(`concurrent = 1
check_interval = 0

[[runners]]
  name = "code-runner"
  url = "https://code.example.invalid"
  token = "glrt-not-a-real-token-0000"
  executor = "docker"
  [runners.docker]
    tls_verify = false
    image = "alpine:3"
    helper_image = "registry.deckhouse.ru/deckhouse/ee/packages/code/images/runner-helper:%s"
    privileged = false
    volumes = ["/cache"]
    shm_size = 0
`, helperTag)
}

// stampedRunner builds a program stamped as gitlab-runner VERSION is (-X
// …/common.VERSION in -ldflags, which internal/source/runnerversion reads) at the
// root's /usr/bin/gitlab-runner.
func stampedRunner(t *testing.T, root *testroot.Root, version string) {
	t.Helper()
	src := t.TempDir()
	os.WriteFile(filepath.Join(src, "go.mod"), []byte("module example.com/runner\n\ngo 1.22\n"), 0o644)
	os.WriteFile(filepath.Join(src, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644)
	out := filepath.Join(root.Dir, "usr/bin/gitlab-runner")
	cmd := exec.Command("go", "build", "-buildvcs=false", "-o", out, "-ldflags", "-X gitlab.com/gitlab-org/gitlab-runner/common.VERSION="+version, ".")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "GOPROXY=off", "GOFLAGS=", "CGO_ENABLED=0", "GOWORK=off")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
}

// dockerRunner writes the runner process of the Deckhouse document's docker
// run: uid and gid 1001 in a container (its cgroup says docker), with the
// supplementary groups --group-add gave it.
func dockerRunner(root *testroot.Root, groups string) {
	root.Runner(4242, 1001, map[string]string{"HOME": "/home/gitlab-runner", "PATH": "/usr/local/bin:/usr/bin:/bin"},
		"/usr/bin/gitlab-runner", "run", "--config", "/etc/gitlab-runner/config.toml", "--working-directory=/home/gitlab-runner")
	root.Write("/proc/4242/status", fmt.Sprintf("Name:\tgitlab-runner\nPid:\t4242\nUid:\t1001\t1001\t1001\t1001\nGid:\t1001\t1001\t1001\t1001\nGroups:\t%s\n", groups), 0o444)
	root.Write("/proc/4242/cgroup", "0::/system.slice/docker-5f3c0d2e9a41.scope\n", 0o444)
}

// TestDockerExecutorScenarios runs doctor against a real Docker Engine
// (Debian's docker.io) listening on /var/run/docker.sock inside the
// scenario's root, one daemon for every scenario.
func TestDockerExecutorScenarios(t *testing.T) {
	root := testroot.New(t)
	root.Write("/etc/passwd", "root:x:0:0:root:/root:/bin/bash\ngitlab-runner:x:1001:1001::/home/gitlab-runner:/bin/bash\n", 0o644)
	stampedRunner(t, root, "19.3.1")
	sock := filepath.Join(root.Dir, "var/run/docker.sock")
	d := testenv.StartDockerd(t, sock)
	t.Logf("dockerd /version: %.160s", d.Version(t))
	st, err := os.Stat(sock)
	if err != nil {
		t.Fatal(err)
	}
	gid := int(st.Sys().(*syscall.Stat_t).Gid)
	if gid == 0 {
		// No docker group on this machine: dockerd left the socket
		// root:root; give it a group of its own, as the docker group is.
		gid = 2375
		if err := os.Chown(sock, 0, gid); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(sock, 0o660); err != nil {
		t.Fatal(err)
	}

	run := func(t *testing.T, config, groups string) *report.Report {
		t.Helper()
		root.Write("/etc/gitlab-runner/config.toml", config, 0o600)
		root.Chown("/etc/gitlab-runner/config.toml", 1001, 1001) // the runner's own: doctor reads it as the runner
		dockerRunner(root, groups)
		rep, _ := runReport(t, "run", "--root", root.Dir, "-o", "json", "--now", time.Now().UTC().Format(time.RFC3339),
			"--timeout", "30s", "--skip", "gitlab-reachability,runner-token")
		return rep
	}
	status := func(rep *report.Report, id string) string {
		for _, c := range rep.Checks {
			if c.ID == id {
				return string(c.Status)
			}
		}
		return ""
	}

	t.Run("healthy", func(t *testing.T) {
		rep := run(t, deckhouseDockerConfig("v19.3.1"), fmt.Sprintf("1001 %d", gid))
		for _, f := range rep.Findings {
			if f.Severity >= checks.Error {
				t.Errorf("healthy Docker runner has %s %s: %s", f.Severity, f.Check, f.Cause)
			}
		}
		for _, id := range []string{"docker-socket", "helper-image"} {
			if s := status(rep, id); s != "pass" {
				t.Errorf("%s is %q, want pass", id, s)
			}
		}
	})

	t.Run("socket-not-accessible", func(t *testing.T) {
		// The document's docker run without --group-add: the runner's
		// only group is its own.
		rep := run(t, deckhouseDockerConfig("v19.3.1"), "1001")
		fixture.AssertWant(t, rep, fixture.Want{Exit: 2, Top: "docker-socket", Says: map[string][]string{"docker-socket": {
			"may not write to /var/run/docker.sock",
			"permission denied while trying to connect to the docker API at unix:///var/run/docker.sock",
			fmt.Sprintf(`--group-add "$(stat -c %%g /var/run/docker.sock)" (here: --group-add %d)`, gid)}}})
	})

	t.Run("helper-version-mismatch", func(t *testing.T) {
		rep := run(t, deckhouseDockerConfig("v19.2.0"), fmt.Sprintf("1001 %d", gid))
		fixture.AssertWant(t, rep, fixture.Want{Exit: 1, Top: "helper-image", Says: map[string][]string{"helper-image": {
			"runs gitlab-runner 19.3.1, but its helper_image", "is v19.2.0", "runner-helper:v19.3.1"}},
			Status: map[string]string{"docker-socket": "pass"}})
	})

	t.Run("helper-for-another-arch", func(t *testing.T) {
		// An arm64 helper on the real daemon, which /version says is amd64
		// on this machine (testenv.md): the helper cannot start.
		cfg := strings.Replace(deckhouseDockerConfig("v19.3.1"), "registry.deckhouse.ru/deckhouse/ee/packages/code/images/runner-helper:v19.3.1",
			"registry.gitlab.com/gitlab-org/gitlab-runner/gitlab-runner-helper:arm64-v19.3.1", 1)
		rep := run(t, cfg, fmt.Sprintf("1001 %d", gid))
		fixture.AssertWant(t, rep, fixture.Want{Exit: 2, Top: "helper-image", Says: map[string][]string{"helper-image": {
			"is built for linux/arm64, but its Docker daemon runs amd64", "Docker Engine 20.10.24"}}})
	})

	t.Run("daemon-not-answering", func(t *testing.T) {
		// A socket file with nothing listening: what a crashed daemon leaves.
		deadRoot := testroot.New(t)
		deadRoot.Write("/etc/passwd", "root:x:0:0:root:/root:/bin/bash\ngitlab-runner:x:1001:1001::/home/gitlab-runner:/bin/bash\n", 0o644)
		p := filepath.Join(deadRoot.Dir, "var/run/docker.sock")
		os.MkdirAll(filepath.Dir(p), 0o755)
		l, err := net.Listen("unix", p)
		if err != nil {
			t.Fatal(err)
		}
		l.(*net.UnixListener).SetUnlinkOnClose(false)
		l.Close()
		os.Chown(p, 0, gid)
		os.Chmod(p, 0o660)
		deadRoot.Write("/etc/gitlab-runner/config.toml", deckhouseDockerConfig("v19.3.1"), 0o600)
		deadRoot.Chown("/etc/gitlab-runner/config.toml", 1001, 1001)
		dockerRunner(deadRoot, fmt.Sprintf("1001 %d", gid))
		rep, _ := runReport(t, "run", "--root", deadRoot.Dir, "-o", "json", "--now", time.Now().UTC().Format(time.RFC3339),
			"--timeout", "30s", "--skip", "gitlab-reachability,runner-token")
		fixture.AssertWant(t, rep, fixture.Want{Exit: 2, Top: "docker-socket", Says: map[string][]string{"docker-socket": {
			"does not answer", "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?"}}})
	})
}

// TestHelperImageNodeArch: against the real apiserver, a Kubernetes
// runner's helper image is judged by the architecture of the nodes its
// jobs land on: the amd64-only Deckhouse helper, and the runner's own
// default (x86_64 unless node_selector says otherwise), on an arm64 node.
func TestHelperImageNodeArch(t *testing.T) {
	env, kubeconfig := twoRunnersWorld(t)
	st := testenv.ReadyNodeStatus("4", "8Gi", testenv.FreePort(t))
	st.NodeInfo.Architecture = "arm64"
	env.CreateNode("arm-1", st)
	base := twoRunnersConfig(kubeRunner{name: "alpha", namespace: "ns-alpha"})
	for name, tc := range map[string]struct {
		helper string
		says   []string
	}{
		"deckhouse helper": {`    helper_image = "registry.deckhouse.ru/deckhouse/ee/packages/code/images/runner-helper:v19.3.1"` + "\n",
			[]string{"runner-helper:v19.3.1 is built for linux/amd64, but jobs may land on nodes of arm64 (arm-1)"}},
		"default helper": {"",
			[]string{"gitlab-runner-helper:x86_64-v19.3.1 is built for linux/amd64, but jobs may land on nodes of arm64 (arm-1)",
				`"kubernetes.io/arch" = "amd64"`}},
	} {
		t.Run(name, func(t *testing.T) {
			root := testroot.New(t)
			root.GuideRunner(strings.Replace(base, "    poll_timeout = 3600\n", "    poll_timeout = 3600\n"+tc.helper, 1), kubeconfig)
			stampedRunner(t, root, "19.3.1")
			rep, _ := runReport(t, "run", "--root", root.Dir, "-o", "json", "--now", time.Now().UTC().Format(time.RFC3339),
				"--timeout", "60s", "--skip", "gitlab-reachability")
			fixture.AssertWant(t, rep, fixture.Want{Exit: 2, Findings: []string{"helper-image"}, Says: map[string][]string{"helper-image": tc.says}})
		})
	}
}
