package fleetingstate

import (
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/checktest"
	"github.com/socialwebcomputer/doctor/testkit/testroot"
)

// mountinfo of the document's runner pod with a PersistentVolumeClaim at
// /home/gitlab-runner/state and the config emptyDir at /etc/gitlab-runner.
const podMounts = `2553 2474 0:312 / / rw,relatime - overlay overlay rw,lowerdir=/l,upperdir=/u,workdir=/w
2560 2553 253:1 /var/lib/kubelet/pods/7d0c/volumes/kubernetes.io~empty-dir/config /etc/gitlab-runner rw,relatime - ext4 /dev/vda1 rw
2561 2553 0:298 / /dev/shm rw - tmpfs shm rw
2562 2553 252:16 / /home/gitlab-runner/state rw,relatime - ext4 /dev/rbd0 rw
`

func config(state string) string {
	return `[[runners]]
  name = "dvp"
  url = "https://code.example.invalid"
  token = "glrt-notARealToken"
  executor = "instance"
  [runners.autoscaler]
    plugin = "fleeting-plugin-dvp"
` + state
}

const docState = `    [runners.autoscaler.state_storage]
      enabled = true
      dir = "/home/gitlab-runner/state"
      keep_instance_with_acquisitions = true
`

func pod(t *testing.T, cfg string) *testroot.Root {
	t.Helper()
	r := testroot.New(t)
	r.Runner(77, 1001, map[string]string{"HOME": "/home/gitlab-runner"}, "gitlab-runner", "run", "--config", "/etc/gitlab-runner/config.toml")
	r.Status(77, 1001, 1001, 1001)
	r.Write("/proc/77/mountinfo", podMounts, 0o444)
	r.Write("/etc/gitlab-runner/config.toml", cfg, 0o600)
	// The runner reads its own config.toml: doctor reads it as the runner.
	r.Chown("/etc/gitlab-runner/config.toml", 1001, 1001)
	return r
}

func runCheck(t *testing.T, r *testroot.Root) checks.CheckResult {
	t.Helper()
	return checktest.Run(t, r.Dir, Check)
}

func TestDocumentsStateStorage(t *testing.T) {
	checktest.WantSays(t, runCheck(t, pod(t, config(docState))), checks.StatusPass)
}

func TestOff(t *testing.T) {
	res := runCheck(t, pod(t, config("")))
	checktest.WantSays(t, res, checks.StatusFail, "state_storage] is off: a restarted runner replaces every VM",
		"no data on pre-existing instance so removing for safety", `dir = "/home/gitlab-runner/state"`, "PersistentVolumeClaim")
	if res.Findings[0].Severity != checks.Warning {
		t.Errorf("state storage off is %s, want a warning: a restart costs VMs, it breaks no job", res.Findings[0].Severity)
	}
	// With vm_isolation the runner keeps pre-existing instances anyway.
	res = runCheck(t, pod(t, config("    [runners.autoscaler.vm_isolation]\n      enabled = true\n")))
	checktest.WantSays(t, res, checks.StatusSkipped, "vm_isolation is on")
}

func TestDirNotPersistent(t *testing.T) {
	// Unset: <config dir>/.taskscaler, the emptyDir of the document's init container.
	cfg := config("    [runners.autoscaler.state_storage]\n      enabled = true\n      keep_instance_with_acquisitions = true\n")
	checktest.WantSays(t, runCheck(t, pod(t, cfg)), checks.StatusFail,
		"state_storage.dir /etc/gitlab-runner/.taskscaler is on a Kubernetes emptyDir volume", "/proc/77/mountinfo:2")
	cfg = config("    [runners.autoscaler.state_storage]\n      enabled = true\n      dir = \"/dev/shm/state\"\n      keep_instance_with_acquisitions = true\n")
	checktest.WantSays(t, runCheck(t, pod(t, cfg)), checks.StatusFail, "/dev/shm/state is on tmpfs (memory)")
	cfg = config("    [runners.autoscaler.state_storage]\n      enabled = true\n      dir = \"/var/lib/state\"\n      keep_instance_with_acquisitions = true\n")
	checktest.WantSays(t, runCheck(t, pod(t, cfg)), checks.StatusFail, "/var/lib/state is on overlay, the container's writable layer")
}

func TestNoKeep(t *testing.T) {
	cfg := config("    [runners.autoscaler.state_storage]\n      enabled = true\n      dir = \"/home/gitlab-runner/state\"\n")
	checktest.WantSays(t, runCheck(t, pod(t, cfg)), checks.StatusFail,
		"keep_instance_with_acquisitions is false", "pre-existing instance has acquisition so removing for safety")
}

// A dir the runner cannot write stops the autoscaler: an error, not a warning.
// The fix gives it to the runner's user: here a user's own runner (its
// config.toml is its own), whose home /etc/passwd names.
func TestDirNotWritable(t *testing.T) {
	r := pod(t, config(docState))
	r.Write("/etc/passwd", "root:x:0:0:root:/root:/bin/bash\ngitlab-runner:x:1001:1001::/home/gitlab-runner:/bin/bash\n", 0o644)
	r.Write("/home/gitlab-runner/state/.keep", "", 0o644)
	r.Chmod("/home/gitlab-runner/state", 0o755) // root's
	res := runCheck(t, r)
	checktest.WantSays(t, res, checks.StatusFail, "cannot write state_storage.dir /home/gitlab-runner/state", "creating state storage",
		"sudo chown 1001:1001 /home/gitlab-runner/state\nsudo chmod 0700 /home/gitlab-runner/state")
	if res.Findings[0].Severity != checks.Error {
		t.Errorf("an unwritable dir is %s, want an error", res.Findings[0].Severity)
	}
	r.Chown("/home/gitlab-runner/state", 1001, 1001)
	checktest.WantSays(t, runCheck(t, r), checks.StatusPass)
}

// The state dir is chowned only where it is the runner's own, and only for
// a runner doctor can vouch for (kubefacts.FixScope): a dir outside its home,
// or a runner no unit names with root's config.toml, gets a sentence.
func TestDirNotWritableNotTheRunnersOwn(t *testing.T) {
	r := pod(t, config(strings.Replace(docState, "/home/gitlab-runner/state", "/srv/state", 1)))
	r.Write("/etc/passwd", "root:x:0:0:root:/root:/bin/bash\ngitlab-runner:x:1001:1001::/home/gitlab-runner:/bin/bash\n", 0o644)
	r.Write("/proc/77/mountinfo", podMounts+"2563 2553 252:17 / /srv/state rw,relatime - ext4 /dev/rbd1 rw\n", 0o444)
	r.Write("/srv/state/.keep", "", 0o644)
	r.Chmod("/srv/state", 0o755)
	res := runCheck(t, r)
	checktest.WantSays(t, res, checks.StatusFail, "cannot write state_storage.dir /srv/state",
		"doctor prints no command here: /srv/state is not in a directory of the runner's own")

	r = pod(t, config(docState))
	r.Chown("/etc/gitlab-runner/config.toml", 0, 0)
	r.Chmod("/etc/gitlab-runner/config.toml", 0o644)
	r.Write("/home/gitlab-runner/state/.keep", "", 0o644)
	r.Chmod("/home/gitlab-runner/state", 0o755)
	res = runCheck(t, r)
	checktest.WantSays(t, res, checks.StatusFail, "cannot write state_storage.dir /home/gitlab-runner/state",
		"doctor prints no command here: doctor acts for no runner it cannot vouch for (pid 77 (uid 1001)")
	for _, f := range res.Findings {
		if strings.Contains(f.Fix.String(), "sudo") {
			t.Errorf("a command acts for a runner nobody installed: %s", f.Fix)
		}
	}
}

// A status that does not say the uid leaves writability unknown, never a
// pass, and never a fix with chown -1 (issue 8).
func TestDirWithUIDUnknown(t *testing.T) {
	r := pod(t, config(docState))
	r.Write("/home/gitlab-runner/state/.keep", "", 0o644)
	r.Chmod("/home/gitlab-runner/state", 0o755)
	r.Write("/proc/77/status", "Name:\tgitlab-runner\nUid:\t1001\t10", 0o444) // cut inside the Uid line
	res := runCheck(t, r)
	checktest.WantSays(t, res, checks.StatusUnknown, "cannot tell whether pid 77 (uid unknown) can write /home/gitlab-runner/state",
		"/proc/77/status: no complete Uid line")
	for _, f := range res.Findings {
		if strings.Contains(f.Fix.String(), "-1") {
			t.Errorf("a fix built from an unknown uid: %s", f.Fix)
		}
	}
}

// Without a process there is no mount table: unknown, never a guess.
func TestNoProcess(t *testing.T) {
	r := testroot.New(t)
	r.Write("/etc/systemd/system/gitlab-runner.service", "[Service]\nExecStart=/usr/bin/gitlab-runner run --config /etc/gitlab-runner/config.toml\n", 0o644)
	r.Write("/etc/gitlab-runner/config.toml", config(docState), 0o600)
	checktest.WantSays(t, runCheck(t, r), checks.StatusUnknown, "its mount table is unknown")
}

func TestPatterns(t *testing.T) {
	checktest.WantPatterns(t, Check,
		`no data on pre-existing instance so removing for safety`,
		`pre-existing instance has acquisition so removing for safety`,
		`error=failed to update executor: initializing taskscaler: creating state storage: mkdir /home/gitlab-runner/state: permission denied`)
}
