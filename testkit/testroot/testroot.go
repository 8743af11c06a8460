// Package testroot lays out a fake host under a temporary directory, the
// same shape as a fixture's root/: /proc entries of a runner process,
// /etc/passwd, config.toml and a kubeconfig. Integration tests use it to
// point doctor (--root) at a runner whose KUBECONFIG names a real cluster.
package testroot

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// Root is a fake host filesystem.
type Root struct {
	Dir string
	t   testing.TB
}

// New makes an empty root with an /etc/passwd holding root and
// gitlab-runner (uid 999).
func New(t testing.TB) *Root {
	return NewAt(t, t.TempDir())
}

// NewAt is New in a directory the caller made: a short one, when a unix
// socket under the root must fit the 108 bytes of sun_path.
func NewAt(t testing.TB, dir string) *Root {
	r := &Root{Dir: dir, t: t}
	r.Write("/etc/passwd", "root:x:0:0:root:/root:/bin/bash\ngitlab-runner:x:999:999:GitLab Runner:/home/gitlab-runner:/bin/bash\n", 0o644)
	return r
}

// Write writes a file at a host path under the root.
func (r *Root) Write(hostPath, content string, mode os.FileMode) string {
	r.t.Helper()
	p := filepath.Join(r.Dir, hostPath)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		r.t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		r.t.Fatal(err)
	}
	return p
}

// Chmod sets a host path's mode under the root.
func (r *Root) Chmod(hostPath string, mode os.FileMode) {
	r.t.Helper()
	if err := os.Chmod(filepath.Join(r.Dir, hostPath), mode); err != nil {
		r.t.Fatal(err)
	}
}

// Runner writes /proc/<pid>/{comm,cmdline,environ,status} of a
// `gitlab-runner run` process.
func (r *Root) Runner(pid, uid int, env map[string]string, args ...string) {
	r.t.Helper()
	dir := fmt.Sprintf("/proc/%d/", pid)
	if len(args) == 0 {
		args = []string{"/usr/bin/gitlab-runner", "run", "--working-directory", "/home/gitlab-runner",
			"--config", "/etc/gitlab-runner/config.toml", "--service", "gitlab-runner", "--user", "gitlab-runner"}
	}
	r.Write(dir+"comm", "gitlab-runner\n", 0o444)
	r.Write(dir+"cmdline", strings.Join(args, "\x00")+"\x00", 0o444)
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k + "=" + env[k] + "\x00")
	}
	r.Write(dir+"environ", b.String(), 0o400)
	r.Write(dir+"status", fmt.Sprintf("Name:\tgitlab-runner\nPid:\t%d\nUid:\t%d\t%d\t%d\t%d\nGid:\t%d\t%d\t%d\t%d\nGroups:\t\n", pid, uid, uid, uid, uid, uid, uid, uid, uid), 0o444)
}

// GuideConfig is the guide's config.toml with the keys it gets wrong put
// right (pull_policy, no tags in the file) and a token that is no token.
const GuideConfig = `concurrent = 2
check_interval = 3

[[runners]]
  name = "kcp-tenant-kubernetes"
  url = "https://gitlab.example.invalid:8443/"
  token = "glrt-not-a-real-token-0000"
  executor = "kubernetes"
  output_limit = 51200

  [runners.kubernetes]
    namespace = "gitlab-runner"
    pull_policy = ["if-not-present"]
    cpu_request = "100m"
    memory_request = "128Mi"
    helper_cpu_request = "100m"
    helper_memory_request = "128Mi"
    poll_timeout = 3600

    [runners.kubernetes.affinity]
      [runners.kubernetes.affinity.pod_anti_affinity]
        [[runners.kubernetes.affinity.pod_anti_affinity.required_during_scheduling_ignored_during_execution]]
          topology_key = "kubernetes.io/hostname"
          [runners.kubernetes.affinity.pod_anti_affinity.required_during_scheduling_ignored_during_execution.label_selector]
            [[runners.kubernetes.affinity.pod_anti_affinity.required_during_scheduling_ignored_during_execution.label_selector.match_expressions]]
              key = "project.runner.gitlab.com/id"
              operator = "Exists"
`

// KubeconfigPath is where the guide installs the kubeconfig.
const KubeconfigPath = "/etc/gitlab-runner/tenant-ci/kubeconfig.yaml"

// GuideRunner lays out the guide's runner as it should be: root-run systemd
// service with the KUBECONFIG drop-in, config.toml as given, and the
// kubeconfig at KubeconfigPath with modes 0600 in a 0700 directory.
func (r *Root) GuideRunner(config string, kubeconfig []byte) {
	r.t.Helper()
	r.Runner(4242, 0, map[string]string{
		"KUBECONFIG": KubeconfigPath,
		"LANG":       "C.UTF-8",
		"PATH":       "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin",
	})
	r.Write("/etc/gitlab-runner/config.toml", config, 0o600)
	r.Write(KubeconfigPath, string(kubeconfig), 0o600)
	r.Chmod(filepath.Dir(KubeconfigPath), 0o700)
}

// Status rewrites /proc/<pid>/status with the uid, primary gid and
// supplementary groups (a pod's fsGroup lands there) of a runner.
func (r *Root) Status(pid, uid, gid int, groups ...int) {
	r.t.Helper()
	gs := make([]string, len(groups))
	for i, g := range groups {
		gs[i] = fmt.Sprint(g)
	}
	r.Write(fmt.Sprintf("/proc/%d/status", pid), fmt.Sprintf("Name:\tgitlab-runner\nPid:\t%d\nUid:\t%d\t%d\t%d\t%d\nGid:\t%d\t%d\t%d\t%d\nGroups:\t%s\n",
		pid, uid, uid, uid, uid, gid, gid, gid, gid, strings.Join(gs, " ")), 0o444)
}

// Chown sets a host path's owner under the root (the tests run as root).
func (r *Root) Chown(hostPath string, uid, gid int) {
	r.t.Helper()
	if err := os.Lchown(filepath.Join(r.Dir, hostPath), uid, gid); err != nil {
		r.t.Fatalf("chown %s: %v (these tests run as root, as CI does)", hostPath, err)
	}
}

// Zero makes hostPath under the root the character device /dev/zero is
// (1:5). Under --root paths resolve inside the root, as a chroot's would,
// so a symlink to /dev/zero there finds the root's own /dev/zero: this.
func (r *Root) Zero(hostPath string) { MakeZero(r.t, r.Dir, hostPath) }

// MakeZero is Zero for a root laid out by hand.
func MakeZero(t testing.TB, root, hostPath string) {
	t.Helper()
	p := filepath.Join(root, hostPath)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mknod(p, syscall.S_IFCHR|0o666, int(unix.Mkdev(1, 5))); err != nil {
		t.Fatalf("mknod %s: %v (these tests run as root, as CI does)", hostPath, err)
	}
}
