package fleetingconnector

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/checktest"
	"github.com/socialwebcomputer/doctor/testkit/testpki"
	"github.com/socialwebcomputer/doctor/testkit/testroot"
	"github.com/socialwebcomputer/doctor/testkit/tools"
)

// connector is the document's runner with its [runners.autoscaler] lines
// replaced by extra where given.
func connector(executor, shell, connectorLines string) string {
	s := "[[runners]]\n  name = \"dvp\"\n  url = \"https://code.example.invalid\"\n  executor = \"" + executor + "\"\n"
	if shell != "" {
		s += "  shell = \"" + shell + "\"\n"
	}
	return s + `  [runners.autoscaler]
    plugin = "fleeting-plugin-dvp"
    [runners.autoscaler.connector_config]
` + connectorLines
}

const docConnector = `      username = "gitlab-runner"
      key_path = "/ssh/id_ed25519"
      use_static_credentials = true
      use_external_addr = false
`

// pod lays out the document's Deployment: uid 1001, fsGroup 1001, the key
// Secret at /ssh with defaultMode 0440, the service-account token.
func pod(t *testing.T, config string) *testroot.Root {
	t.Helper()
	r := testroot.New(t)
	r.Runner(77, 1001, map[string]string{"HOME": "/home/gitlab-runner", "KUBERNETES_SERVICE_HOST": "127.0.0.1", "KUBERNETES_SERVICE_PORT": "6443"},
		"gitlab-runner", "run", "--config", "/etc/gitlab-runner/config.toml")
	r.Status(77, 1001, 1001, 1001)
	r.Write("/etc/gitlab-runner/config.toml", config, 0o600)
	// The runner reads its own config.toml: doctor reads it as the runner.
	r.Chown("/etc/gitlab-runner/config.toml", 1001, 1001)
	key, _, err := testpki.SSHKey("ed25519", "dvp")
	if err != nil {
		t.Fatal(err)
	}
	r.Write("/ssh/id_ed25519", string(key), 0o440)
	r.Chown("/ssh/id_ed25519", 0, 1001)
	r.Write(serviceAccountToken, "stand-in", 0o644)
	return r
}

func runCheck(t *testing.T, r *testroot.Root) checks.CheckResult {
	t.Helper()
	return checktest.Run(t, r.Dir, Check)
}

func TestDocumentsDeployment(t *testing.T) {
	checktest.WantSays(t, runCheck(t, pod(t, connector("instance", "bash", docConnector))), checks.StatusPass)
}

// fsGroup + defaultMode 0440 reads through the group; 0400 root-owned
// does not, and the finding names the runner's groups and the pod fix.
func TestKeyModes(t *testing.T) {
	r := pod(t, connector("instance", "bash", docConnector))
	r.Chmod("/ssh/id_ed25519", 0o400)
	r.Chown("/ssh/id_ed25519", 0, 0)
	checktest.WantSays(t, runCheck(t, r), checks.StatusFail,
		"cannot read the connector key /ssh/id_ed25519", "groups 1001", "mode 0400 owner 0:0",
		"reading instance group connector key: open /ssh/id_ed25519: permission denied", "defaultMode: 0440", "fsGroup: 1001")
	// The same key without the group: 0440 root:root is no better.
	r.Chmod("/ssh/id_ed25519", 0o440)
	checktest.WantSays(t, runCheck(t, r), checks.StatusFail, "mode 0440 owner 0:0")
	// Root reads it whatever the mode.
	r.Status(77, 0, 0)
	checktest.WantSays(t, runCheck(t, r), checks.StatusPass)
}

// On a host, the key is given to the runner's user, and a directory in the
// way made searchable: for a runner its unit runs as that user, or a
// user's own runner (its config.toml its own), in its home. A runner no
// unit names, with root's config.toml, gets no command (kubefacts.FixScope).
func TestKeyModeFixOnAHost(t *testing.T) {
	const file = "/home/gitlab-runner/.ssh/id_ed25519"
	host := func(unit, ownConfig bool) *testroot.Root {
		r := pod(t, connector("instance", "bash", strings.NewReplacer("/ssh/id_ed25519", file, "use_external_addr = false", "use_external_addr = true").Replace(docConnector)))
		r.Runner(77, 1001, map[string]string{"HOME": "/home/gitlab-runner"}, "gitlab-runner", "run", "--config", "/etc/gitlab-runner/config.toml")
		r.Status(77, 1001, 1001, 1001)
		if err := os.Remove(filepath.Join(r.Dir, serviceAccountToken)); err != nil {
			t.Fatal(err)
		}
		r.Write("/etc/passwd", "root:x:0:0:root:/root:/bin/bash\ngitlab-runner:x:1001:1001::/home/gitlab-runner:/bin/bash\n", 0o644)
		if unit {
			r.Write("/etc/systemd/system/gitlab-runner.service", "[Service]\nUser=gitlab-runner\nExecStart=/usr/bin/gitlab-runner run --config /etc/gitlab-runner/config.toml\n", 0o644)
		}
		if !ownConfig {
			r.Chown("/etc/gitlab-runner/config.toml", 0, 0)
			r.Chmod("/etc/gitlab-runner/config.toml", 0o644)
		}
		key, _, err := testpki.SSHKey("ed25519", "dvp")
		if err != nil {
			t.Fatal(err)
		}
		r.Write(file, string(key), 0o400)
		r.Chown(file, 0, 0)
		return r
	}
	for _, h := range []struct {
		name            string
		unit, ownConfig bool
	}{{"unit", true, false}, {"own config", false, true}} {
		r := host(h.unit, h.ownConfig)
		checktest.WantSays(t, runCheck(t, r), checks.StatusFail, "cannot read the connector key "+file,
			"sudo chown gitlab-runner "+file+"\nsudo chmod 0400 "+file)
		r.Chown(file, 1001, 1001)
		r.Chmod("/home/gitlab-runner/.ssh", 0o700)
		checktest.WantSays(t, runCheck(t, r), checks.StatusFail, "(blocked at /home/gitlab-runner/.ssh)",
			"Let the runner's user traverse the directories in the way", "sudo chmod o+x /home/gitlab-runner/.ssh")
	}

	res := runCheck(t, host(false, false))
	checktest.WantSays(t, res, checks.StatusFail, "cannot read the connector key "+file,
		"doctor prints no command here: doctor acts for no runner it cannot vouch for (pid 77 (uid 1001 gitlab-runner)")
	if strings.Contains(checktest.Text(res), "sudo") {
		t.Errorf("a command acts for a runner nobody installed:\n%s", checktest.Text(res))
	}
}

func TestNoUsername(t *testing.T) {
	cfg := connector("instance", "bash", strings.Replace(docConnector, "      username = \"gitlab-runner\"\n", "", 1))
	checktest.WantSays(t, runCheck(t, pod(t, cfg)), checks.StatusFail, "connector_config.username is not set")
}

func TestKeyMissingOrPublic(t *testing.T) {
	r := pod(t, connector("instance", "bash", strings.Replace(docConnector, "/ssh/id_ed25519", "/ssh/id_rsa", 1)))
	checktest.WantSays(t, runCheck(t, r), checks.StatusFail, "/ssh/id_rsa cannot be read (no such file or directory)")

	r = pod(t, connector("instance", "bash", strings.Replace(docConnector, "/ssh/id_ed25519", "/ssh/id_ed25519.pub", 1)))
	_, pub, err := testpki.SSHKey("ed25519", "dvp")
	if err != nil {
		t.Fatal(err)
	}
	r.Write("/ssh/id_ed25519.pub", pub+"\n", 0o444)
	checktest.WantSays(t, runCheck(t, r), checks.StatusFail, "holds a public key (an Ed25519 public key in authorized_keys format")

	r.Write("/ssh/id_ed25519.pub", "password123\n", 0o444)
	checktest.WantSays(t, runCheck(t, r), checks.StatusFail, "holds no SSH private key", "12 bytes")
}

// A key ssh-keygen protected with a passphrase: connector_config has no
// passphrase setting, so the runner cannot use it.
func TestPassphraseProtectedKey(t *testing.T) {
	keygen := tools.Need(t, "ssh-keygen", "Debian's openssh-client package")
	file := filepath.Join(t.TempDir(), "id")
	if out, err := exec.Command(keygen, "-q", "-t", "ed25519", "-N", "a passphrase", "-f", file).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
	key, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	r := pod(t, connector("instance", "bash", docConnector))
	r.Write("/ssh/id_ed25519", string(key), 0o440)
	r.Chown("/ssh/id_ed25519", 0, 1001)
	res := runCheck(t, r)
	// /ssh is no directory of the runner's own (a Secret's mount, not its
	// config directory or home): ssh-keygen -p, which rewrites the file as
	// root, is not printed for it (kubefacts.FixScope).
	checktest.WantSays(t, res, checks.StatusFail, "an Ed25519 private key in OpenSSH format, protected by a passphrase",
		"doctor prints no command here: /ssh/id_ed25519 is not in a directory of the runner's own")
	if strings.Contains(checktest.Text(res), "ssh-keygen -p") {
		t.Errorf("ssh-keygen -p is printed for a file that is not the runner's own:\n%s", checktest.Text(res))
	}
	if strings.Contains(checktest.Text(res), "a passphrase\"") || strings.Contains(checktest.Text(res), string(key[40:70])) {
		t.Errorf("the finding carries key material:\n%s", checktest.Text(res))
	}
	// The same key in the runner's config directory: the command rewrites it.
	r = pod(t, connector("instance", "bash", strings.Replace(docConnector, "/ssh/id_ed25519", "/etc/gitlab-runner/ssh/id_ed25519", 1)))
	r.Write("/etc/gitlab-runner/ssh/id_ed25519", string(key), 0o400)
	r.Chown("/etc/gitlab-runner/ssh/id_ed25519", 1001, 1001)
	checktest.WantSays(t, runCheck(t, r), checks.StatusFail, "protected by a passphrase", "sudo ssh-keygen -p -N '' -f /etc/gitlab-runner/ssh/id_ed25519")
}

func TestShell(t *testing.T) {
	checktest.WantSays(t, runCheck(t, pod(t, connector("instance", "sh", docConnector))), checks.StatusFail,
		"shell = \"sh\": on Debian and Ubuntu /bin/sh is dash, and the job preparation script fails under it")
	res := runCheck(t, pod(t, connector("instance", "pwsh", docConnector)))
	checktest.WantSays(t, res, checks.StatusFail, "shell = \"pwsh\"")
	if res.Findings[0].Severity != checks.Warning {
		t.Errorf("pwsh is %s, want a warning", res.Findings[0].Severity)
	}
	// Unset is the instance executor's default, bash.
	checktest.WantSays(t, runCheck(t, pod(t, connector("instance", "", docConnector))), checks.StatusPass)
	// docker-autoscaler runs the script in a container: its shell is not judged.
	checktest.WantSays(t, runCheck(t, pod(t, connector("docker-autoscaler", "sh", docConnector))), checks.StatusPass)
}

func TestExternalAddress(t *testing.T) {
	inside := strings.Replace(docConnector, "use_external_addr = false", "use_external_addr = true", 1)
	res := runCheck(t, pod(t, connector("instance", "bash", inside)))
	checktest.WantSays(t, res, checks.StatusFail, "use_external_addr = true, but the runner runs inside the cluster", "KUBERNETES_SERVICE_HOST=127.0.0.1")
	if res.Findings[0].Severity != checks.Warning {
		t.Errorf("external from inside is %s, want a warning", res.Findings[0].Severity)
	}

	// The same runner on a host: no KUBERNETES_SERVICE_HOST, no token.
	host := func(lines string) *testroot.Root {
		r := pod(t, connector("instance", "bash", lines))
		r.Runner(77, 1001, map[string]string{"HOME": "/home/gitlab-runner"}, "gitlab-runner", "run", "--config", "/etc/gitlab-runner/config.toml")
		r.Status(77, 1001, 1001, 1001)
		if err := os.Remove(filepath.Join(r.Dir, serviceAccountToken)); err != nil {
			t.Fatal(err)
		}
		return r
	}
	checktest.WantSays(t, runCheck(t, host(docConnector)), checks.StatusFail, "use_external_addr is false, but the runner runs outside the cluster")
	checktest.WantSays(t, runCheck(t, host(inside)), checks.StatusPass)
	// The token alone says pod, without the variable.
	r := host(docConnector)
	r.Write(serviceAccountToken, "stand-in", 0o644)
	checktest.WantSays(t, runCheck(t, r), checks.StatusPass)
}

func TestPatterns(t *testing.T) {
	checktest.WantPatterns(t, Check,
		`error=failed to update executor: initializing taskscaler: reading instance group connector key: open /ssh/id_ed25519: permission denied executor=instance`,
		`ERROR: Job failed: prepare environment: Process exited with status 2. Check https://docs.gitlab.com/runner/shells/#shell-profile-loading for more information`,
		`ERROR: Job failed (system failure): ssh: handshake failed: ssh: unable to authenticate, attempted methods [none publickey], no supported methods remain`)
}
