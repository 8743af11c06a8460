package configfacts

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/checks/facts/hostfacts"
	"github.com/socialwebcomputer/doctor/internal/hostio"
)

// The guide's runner pod seen from its node: config.toml in the container's
// emptyDir, reached through /proc/<pid>/root, and named as that volume.
func TestRunnerPathThroughPodMounts(t *testing.T) {
	dir := t.TempDir()
	write := func(p, s string) {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("proc/77/root/etc/gitlab-runner/config.toml", "concurrent = 4\n")
	write("proc/77/mountinfo", "3012 2990 0:312 / / rw - overlay overlay rw\n"+
		"3021 3012 253:1 /var/lib/kubelet/pods/5e3c/volumes/kubernetes.io~empty-dir/config /etc/gitlab-runner rw - ext4 /dev/vda1 rw\n"+
		"3022 3012 0:99 /var/lib/kubelet/pods/5e3c/volumes/kubernetes.io~secret/ssh /ssh ro - tmpfs tmpfs ro\n")
	env := &hostio.Env{Root: dir}
	proc := &hostfacts.Process{PID: 77}
	if got := RunnerPath(env, proc, "/etc/gitlab-runner/config.toml"); got != "/proc/77/root/etc/gitlab-runner/config.toml" {
		t.Errorf("RunnerPath = %q", got)
	}
	if got := RunnerPath(env, proc, "/etc/missing"); got != "/etc/missing" {
		t.Errorf("a path the container does not show: %q", got)
	}
	if got := RunnerPath(env, nil, "/etc/gitlab-runner/config.toml"); got != "/etc/gitlab-runner/config.toml" {
		t.Errorf("no process: %q", got)
	}
	if got := podMount(env, proc, "/etc/gitlab-runner/config.toml"); !strings.Contains(got, `empty-dir volume "config"`) || !strings.Contains(got, "the Secret") {
		t.Errorf("podMount = %q", got)
	}
	if got := podMount(env, proc, "/ssh/id_ed25519"); !strings.Contains(got, `secret volume "ssh"`) {
		t.Errorf("podMount of the key = %q", got)
	}
	if got := podMount(env, proc, "/home/gitlab-runner/x"); got != "" {
		t.Errorf("a path on the container's own filesystem: %q", got)
	}
}
