package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/report"
	"github.com/socialwebcomputer/doctor/testkit/cmdtest"
	"github.com/socialwebcomputer/doctor/testkit/testpki"
	"github.com/socialwebcomputer/doctor/testkit/testroot"
)

// The planted-secrets corpus of files (issue 20): secrets a pattern never
// found, because the file wrote them in a shape no pattern was written for
// (a kubeconfig's key behind a comment, in a flow mapping, a block scalar,
// an alias; a TOML multi-line string; a variable named like nothing
// secret), a file the runner itself could not read, a symlink out of
// --root. No output, the bundle included, may hold any of them or a
// 12-character piece of one; and analyze of each bundle finds what the
// live run found.

const (
	tomlMlBasic     = "MlBasic7Qw3Zp9Lx2Mc5Vb8Nh1"
	tomlMlLiteral   = "MlLiteral5Rz1Qm7Tx3Wl8Pn"
	tomlScript      = "ScriptPw2Tq9Lm6Xz3Wb8N"
	tomlComment     = "CmtPw4Kq8Zm2Lx6Tn9"
	tomlBroken      = "BrokenMl8Kq2Zm6Tx1LpWc"
	envSMTP         = "EnvSmtp8Kq2Zm6Tx1LpQw"
	envPlain        = "plaintextvalue-of-a-var"
	unitComment     = "UnitCmt7Qw3Zp9Lx2Mc5"
	envFileValue    = "EnvFileNote4Kq8Zm2Lx6"
	kubeFlowPw      = "FlowPw7Qz2Lm9Tx4Wb"
	kubeAliasTok    = "AliasTok9Qm2Zp7Lx4Wc"
	kubeCommentTok  = "CmtKubeTok3Zq8Lm1Tx5"
	outsideSecret   = "OutsideRoot6Zq2Lm9Tx4Wb7"
	rootOnlySecret  = "RootOnlyTok5Wq1Zm7Tx3Lp"
	rootOnlyKubeTok = "RootOnlyKube8Qz2Lm5Tx9"
)

func TestNoPlantedFileSecretInAnyOutput(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	hosts := []secretHost{
		shapesHost(t, now),
		decodeHost(t, "multi-line string", "  notes = \"\"\"\n"+tomlBroken+"\n", planted{"an unterminated multi-line string", tomlBroken}),
		decodeHost(t, "literal multi-line string", "  notes = '''\n"+tomlBroken+"\n  x = 1\n", planted{"an unterminated literal multi-line string", tomlBroken}),
		symlinkOutHost(t, now),
	}
	bundled := map[string][]string{hosts[0].name: {"/etc/gitlab-runner/config.toml", testroot.KubeconfigPath, "/proc/4242/environ",
		"/etc/systemd/system/gitlab-runner.service", "/etc/systemd/system/gitlab-runner.service.d/env.conf", "/etc/default/gitlab-runner"}}
	for _, h := range hosts {
		t.Run(h.name, func(t *testing.T) {
			outputs := secretRunOutputs(t, h.root, now)
			assertNoPlanted(t, h, outputs)
			// The files that carry the secrets were read: the bundle
			// holds their redacted copies.
			for _, f := range bundled[h.name] {
				if _, ok := outputs["bundle doctor-bundle/root"+f]; !ok {
					t.Errorf("the bundle has no copy of %s: the route through it is not taken", f)
				}
			}
			// The bundle is the same input to the same checks.
			b := filepath.Join(t.TempDir(), "b.tar.gz")
			_, out, _ := runDoctor("run", "--root", h.root, "--now", now.Format(time.RFC3339), "-o", "json", "--bundle", b,
				"--timeout", "10s", "--request-timeout", "2s", "--resolver", "127.0.0.1:9", "--public-dns", "127.0.0.1:9")
			var live report.Report
			cmdtest.NoErr(t, json.Unmarshal([]byte(out), &live))
			assertAnalyzeEqualsLive(t, &live, b, h.root)
		})
	}
}

// shapesHost is a runner whose kubeconfig writes its users' keys, tokens
// and passwords in every shape YAML has, whose config.toml keeps secrets
// in both multi-line string forms, a script and comments, and whose
// environment has secrets under names that say nothing.
func shapesHost(t *testing.T, now time.Time) secretHost {
	ca, err := testpki.NewCA("tenant-ci PKI", now.Add(-48*time.Hour), now.Add(10*365*24*time.Hour))
	cmdtest.NoErr(t, err)
	kubeconfig, keys, err := testpki.ShapedKubeconfig(ca, "https://127.0.0.1:1/clusters/root:k3x9q2mf:tenant-ci:clusters",
		testpki.ShapedSecrets{Token: kubeCommentTok, Password: kubeFlowPw, AliasToken: kubeAliasTok},
		"did:plc:ewvi7nxzyoun6zhxrhs64oiz", []string{"socialweb.computer:cluster-owners"}, now.Add(-time.Hour), now.Add(11*time.Hour))
	cmdtest.NoErr(t, err)
	var secrets []planted
	for _, shape := range testpki.ShapedUsers {
		for _, s := range keySecrets(t, keys[shape][1]) {
			secrets = append(secrets, planted{"the " + shape + "-shaped client key: " + s.where, s.secret})
		}
	}
	config := strings.Replace(testroot.GuideConfig, "  output_limit = 51200\n", `  output_limit = 51200
  # the old password: `+tomlComment+`
  notes = """
`+tomlMlBasic+`
"""
  description = '''
`+tomlMlLiteral+`
'''
  pre_build_script = """
export DEPLOY_PASSWORD=`+tomlScript+`
"""
`, 1)
	root := testroot.New(t)
	root.GuideRunner(config, []byte(kubeconfig))
	root.Write("/etc/systemd/system/gitlab-runner.service", "[Unit]\nDescription=GitLab Runner\n# the relay's password: "+unitComment+"\n"+
		"[Service]\nExecStart=/usr/bin/gitlab-runner run --config /etc/gitlab-runner/config.toml\nEnvironmentFile=/etc/default/gitlab-runner\n", 0o644)
	root.Write("/etc/systemd/system/gitlab-runner.service.d/env.conf", "[Service]\n"+
		"Environment=\"KUBECONFIG="+testroot.KubeconfigPath+"\" \\\n  SMTP_RELAY="+envSMTP+" RELAY_NOTE="+envPlain+"\n", 0o644)
	root.Write("/etc/default/gitlab-runner", "# old: "+unitComment+"\nDEPLOY_NOTE='"+envFileValue+"'\n", 0o600)
	root.Runner(4242, 0, map[string]string{
		"KUBECONFIG": testroot.KubeconfigPath,
		"PATH":       "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin",
		"SMTP_RELAY": envSMTP,
		"RELAY_NOTE": envPlain,
	})
	secrets = append(secrets,
		planted{"a token behind a YAML comment's line", kubeCommentTok},
		planted{"a password in a flow mapping", kubeFlowPw},
		planted{"a token beside a merge key", kubeAliasTok},
		planted{"a basic multi-line string under an unknown key", tomlMlBasic},
		planted{"a literal multi-line string under an unknown key", tomlMlLiteral},
		planted{"a password in pre_build_script", tomlScript},
		planted{"a config.toml comment", tomlComment},
		planted{"an environ variable named like nothing secret", envSMTP},
		planted{"an environ variable whose value looks like nothing secret", envPlain},
		planted{"a unit's comment", unitComment},
		planted{"an environment file's variable named like nothing secret", envFileValue},
	)
	return secretHost{name: "every shape a file writes a secret in", root: root.Dir, secrets: secrets,
		routes: []string{"config-unknown-keys"},
		says:   []string{"notes = <string, 27 characters, looks secret>"}}
}

// symlinkOutHost is a copied host whose config.toml and kubeconfig are
// symlinks out of the root, absolute and relative, to files of this
// machine holding secrets: under --root they resolve inside the root, as
// a chroot's would, and are missing.
func symlinkOutHost(t *testing.T, now time.Time) secretHost {
	outside := t.TempDir()
	// Secrets in shapes no pattern finds, so only not reading them keeps
	// them out.
	cmdtest.NoErr(t, os.WriteFile(filepath.Join(outside, "config.toml"), []byte(strings.Replace(testroot.GuideConfig,
		"  output_limit = 51200\n", "  output_limit = 51200\n  notes = \"\"\"\n"+outsideSecret+"\n\"\"\"\n", 1)), 0o600))
	cmdtest.NoErr(t, os.WriteFile(filepath.Join(outside, "kubeconfig.yaml"), []byte("apiVersion: v1\nkind: Config\nusers:\n- {name: u, user: {username: "+outsideSecret+"}}\n"), 0o600))
	root := testroot.New(t)
	root.GuideRunner(testroot.GuideConfig, nil)
	cfg, kube := filepath.Join(root.Dir, "etc/gitlab-runner/config.toml"), filepath.Join(root.Dir, testroot.KubeconfigPath)
	cmdtest.NoErr(t, os.Remove(cfg))
	cmdtest.NoErr(t, os.Remove(kube))
	cmdtest.NoErr(t, os.Symlink(filepath.Join(outside, "config.toml"), cfg))
	cmdtest.NoErr(t, os.Symlink(strings.Repeat("../", 12)+strings.TrimPrefix(filepath.Join(outside, "kubeconfig.yaml"), "/"), kube))
	return secretHost{name: "symlinks out of --root", root: root.Dir, secrets: []planted{{"a host file a symlink out of the root names", outsideSecret}},
		routes: []string{"config-decode"}, says: []string{"config.toml does not exist"}}
}

// A process of uid 1001 named gitlab-runner, whose --config and
// KUBECONFIG name files only root may read, gets root's doctor to read
// neither: config-decode reports the runner's own failure to open its
// config, and nothing of either file reaches any output or the bundle.
func TestRootOnlyFileNamedByAnUnprivilegedRunner(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Second)
	// 0700, root's; a short path, which no redactor takes for base64.
	private, err := os.MkdirTemp("", "rootonly")
	cmdtest.NoErr(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(private) })
	cfg := filepath.Join(private, "config.toml")
	cmdtest.NoErr(t, os.WriteFile(cfg, []byte(strings.Replace(testroot.GuideConfig, "glrt-not-a-real-token-0000", "glrt-"+rootOnlySecret, 1)), 0o600))
	kube := filepath.Join(private, "kubeconfig.yaml")
	cmdtest.NoErr(t, os.WriteFile(kube, []byte("apiVersion: v1\nkind: Config\nusers:\n- {name: u, user: {token: "+rootOnlyKubeTok+"}}\n"), 0o600))
	pid := startRunnerAs(t, openDir(t), []string{"run", "--config", cfg}, []string{"KUBECONFIG=" + kube, "PATH=/usr/bin:/bin"})
	h := secretHost{name: "root-only files of an unprivileged runner", root: "/", secrets: []planted{
		{"the token of a root-only config.toml", rootOnlySecret}, {"the token of a root-only kubeconfig", rootOnlyKubeTok}},
		routes: []string{"config-decode"},
		says:   []string{"config.toml cannot be read (open " + cfg + ": permission denied)"}}
	outputs := secretRunOutputs(t, "/", now, "--runner-pid", strconv.Itoa(pid), "--only", "config-decode,kubeconfig-file,runner-kubeconfig-env")
	assertNoPlanted(t, h, outputs)
	for name, out := range outputs {
		if strings.HasPrefix(name, "bundle ") && strings.Contains(name, strings.TrimPrefix(cfg, "/")) {
			t.Errorf("the bundle holds %s: %.200s", name, out)
		}
	}
}
