package testroot

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// DockerPasswd is /etc/passwd of the Deckhouse document's runner
// container: root, and gitlab-runner as uid and gid 1001.
const DockerPasswd = "root:x:0:0:root:/root:/bin/bash\ngitlab-runner:x:1001:1001::/home/gitlab-runner:/bin/bash\n"

// DeckhouseDockerConfig is the config.toml the Deckhouse document's
// `register --executor docker --docker-image alpine:3 --docker-helper-image
// …/runner-helper:<VERSION>` writes, with <VERSION> given and an address
// under .invalid.
func DeckhouseDockerConfig(helperTag string) string {
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

// StampedRunner builds a program stamped as gitlab-runner version is (-X
// …/common.VERSION in -ldflags, which internal/source/runnerversion reads)
// at the root's /usr/bin/gitlab-runner.
func (r *Root) StampedRunner(version string) {
	r.t.Helper()
	if err := BuildStampedRunner(filepath.Join(r.Dir, "usr/bin/gitlab-runner"), version); err != nil {
		r.t.Fatal(err)
	}
}

// BuildStampedRunner writes to out a program stamped as gitlab-runner
// version is: a fixture's runner binary, whose version git carries rather
// than the runner's megabytes. It is built offline from an empty main,
// so nothing of the runner is in it and nothing in it runs.
func BuildStampedRunner(out, version string) error {
	src, err := os.MkdirTemp("", "stamped-runner-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(src)
	if err := os.WriteFile(filepath.Join(src, "go.mod"), []byte("module example.com/runner\n\ngo 1.22\n"), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(src, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	cmd := exec.Command("go", "build", "-buildvcs=false", "-o", out, "-ldflags", "-X gitlab.com/gitlab-org/gitlab-runner/common.VERSION="+version, ".")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "GOPROXY=off", "GOFLAGS=", "CGO_ENABLED=0", "GOWORK=off")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build of a runner stamped %s: %v\n%s", version, err, b)
	}
	return nil
}

// DockerRunner writes the runner process of the Deckhouse document's docker
// run: uid and gid 1001 in a container (its cgroup says docker), with the
// supplementary groups --group-add gave it ("1001 998"), and its
// config.toml, the runner's own (doctor reads it as the runner).
func (r *Root) DockerRunner(config, groups string) {
	r.t.Helper()
	r.Write("/etc/gitlab-runner/config.toml", config, 0o600)
	r.Chown("/etc/gitlab-runner/config.toml", 1001, 1001)
	r.Runner(4242, 1001, map[string]string{"HOME": "/home/gitlab-runner", "PATH": "/usr/local/bin:/usr/bin:/bin"},
		"/usr/bin/gitlab-runner", "run", "--config", "/etc/gitlab-runner/config.toml", "--working-directory=/home/gitlab-runner")
	r.Write("/proc/4242/status", fmt.Sprintf("Name:\tgitlab-runner\nPid:\t4242\nUid:\t1001\t1001\t1001\t1001\nGid:\t1001\t1001\t1001\t1001\nGroups:\t%s\n", groups), 0o444)
	r.Write("/proc/4242/cgroup", "0::/system.slice/docker-5f3c0d2e9a41.scope\n", 0o444)
}
