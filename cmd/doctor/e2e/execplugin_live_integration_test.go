//go:build integration

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
	"github.com/socialwebcomputer/doctor/testkit/testenv"
)

// pluginUID is the uid the runner process of these tests runs as: not
// root, and not the test's uid, so a plugin that reports it proves doctor
// ran it as the runner.
const pluginUID = 1001 // startRunnerAs's

// stderrSecret is what the plugins write to their stderr: nothing of it
// may reach doctor's output or its stderr.
const stderrSecret = "wJalrXUtnFEMIK7MDENGbPxRfiCYpluginstderr"

// livePluginHost is a live host for --root /: a runner process of
// pluginUID whose KUBECONFIG names a kubeconfig whose user's credential
// comes from the exec plugin script body, in a directory that uid owns.
type livePluginHost struct {
	dir, marker string
	pid         int
}

func newLivePluginHost(t *testing.T, server string, caPEM []byte, body string) *livePluginHost {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("this test runs the runner as another uid: it needs root (tests here run as root)")
	}
	dir := openDir(t)
	cmdtest.NoErr(t, os.Chown(dir, pluginUID, pluginUID))
	h := &livePluginHost{dir: dir, marker: filepath.Join(dir, "plugin-ran")}
	plugin := filepath.Join(dir, "credential-plugin.sh")
	cmdtest.NoErr(t, os.WriteFile(plugin, []byte("#!/bin/sh\n"+strings.ReplaceAll(body, "MARKER", h.marker)), 0o755))
	kube := filepath.Join(dir, "kubeconfig")
	cmdtest.NoErr(t, os.WriteFile(kube, []byte(execPluginKubeconfig(server, caPEM, plugin, `["--cluster", "tenant-ci"]`, "")), 0o644))
	cfg := filepath.Join(dir, "config.toml")
	cmdtest.NoErr(t, os.WriteFile(cfg, []byte(`concurrent = 1
[[runners]]
  name = "exec-plugin"
  url = "https://gitlab.example.invalid/"
  executor = "kubernetes"
  [runners.kubernetes]
    namespace = "gitlab-runner"
`), 0o644))
	h.pid = startRunnerAs(t, dir, []string{"run", "--config", cfg},
		[]string{"KUBECONFIG=" + kube, "PATH=/usr/bin:/bin", "HOME=" + dir})
	return h
}

// runLive runs doctor on this host's real /proc against the runner pid.
func runLive(t *testing.T, pid int, extra ...string) (*report.Report, string, time.Duration) {
	t.Helper()
	args := append([]string{"run", "--root", "/", "--runner-pid", strconv.Itoa(pid), "-o", "json", "--verbose", "--v", "2",
		"--only", "api-auth"}, extra...)
	t0 := time.Now()
	code, out, stderr := runDoctor(args...)
	took := time.Since(t0)
	var rep report.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("exit %d, stderr %s: %v\n%s", code, stderr, err, out)
	}
	if strings.Contains(out+stderr, stderrSecret[:12]) || strings.Contains(out+stderr, stderrSecret[len(stderrSecret)-12:]) {
		t.Errorf("the plugin's stderr secret reached doctor's output or stderr:\n%s\n%s", out, stderr)
	}
	return &rep, out + stderr, took
}

// TestExecCredentialPluginOnALiveHost: with --exec-credential-plugins on
// a live host, doctor runs the kubeconfig's exec plugin as the runner's
// uid, and the ExecCredential it returns (a real apiserver identity, the
// cluster owner's certificate) authenticates the API checks; the plugin's
// stderr, which holds a secret, is not printed. Without the flag the
// same host runs nothing.
func TestExecCredentialPluginOnALiveHost(t *testing.T) {
	env := testenv.Start(t)
	env.BindOwnersToClusterAdmin()
	env.WaitAuthorized(ownerDID, []string{testenv.OwnersGroup}, "*", "*")
	cert, key := env.OwnerCert(ownerDID, time.Now().Add(12*time.Hour))
	cred, err := json.Marshal(map[string]any{"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",
		"status": map[string]string{"clientCertificateData": string(cert), "clientKeyData": string(key)}})
	cmdtest.NoErr(t, err)
	credFile := filepath.Join(openDir(t), "credential.json")
	cmdtest.NoErr(t, os.WriteFile(credFile, cred, 0o644))
	h := newLivePluginHost(t, env.URL, env.CAPEM, `id -u > MARKER
echo "debug: AWS_SECRET_ACCESS_KEY=`+stderrSecret+`" >&2
cat `+credFile+"\n")

	rep, _, _ := runLive(t, h.pid)
	if _, err := os.Stat(h.marker); err == nil {
		t.Fatal("without --exec-credential-plugins doctor ran the plugin")
	}
	if st, why := checkStatus(rep, "api-auth"); st != "unknown" || !strings.Contains(why, "runs no code from its input") || !strings.Contains(why, "--exec-credential-plugins") {
		t.Errorf("api-auth without the flag: %s %q; want unknown, naming the flag", st, why)
	}

	rep, _, _ = runLive(t, h.pid, "--exec-credential-plugins")
	ran, err := os.ReadFile(h.marker)
	if err != nil {
		t.Fatalf("with --exec-credential-plugins the plugin did not run: %v", err)
	}
	if got := strings.TrimSpace(string(ran)); got != strconv.Itoa(pluginUID) {
		t.Errorf("the plugin ran as uid %s, want the runner's uid %d", got, pluginUID)
	}
	if st, why := checkStatus(rep, "api-auth"); st != "pass" {
		t.Errorf("api-auth with the plugin's credential: %s %q; want pass", st, why)
	}
}

// TestExecCredentialPluginDeadline: a plugin that never answers, and
// forks a child that would outlive it, is killed at the deadline with its
// whole process group: no process of the group is left.
func TestExecCredentialPluginDeadline(t *testing.T) {
	h := newLivePluginHost(t, "https://127.0.0.1:1", nil, `echo $$ > MARKER
echo "AWS_SECRET_ACCESS_KEY=`+stderrSecret+`" >&2
sleep 300 &
sleep 300
`)
	rep, _, took := runLive(t, h.pid, "--exec-credential-plugins", "--request-timeout", "2s", "--timeout", "10s")
	if took > 8*time.Second {
		t.Errorf("doctor took %s with a 2s request timeout", took)
	}
	st, why := checkStatus(rep, "api-auth")
	if st != "unknown" || !strings.Contains(why, "did not answer within 2s") {
		t.Errorf("api-auth: %s %q; want unknown, the plugin killed at the deadline", st, why)
	}
	b, err := os.ReadFile(h.marker)
	if err != nil {
		t.Fatalf("the plugin did not start: %v", err)
	}
	pgid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	cmdtest.NoErr(t, err)
	for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		left := liveInGroup(pgid)
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes of the plugin's group %d are left: %v", pgid, left)
		}
	}
}

// TestExecCredentialPluginFailureStderr: a plugin that fails with a secret
// on its stderr: the run says it failed, and the secret is not printed.
func TestExecCredentialPluginFailureStderr(t *testing.T) {
	h := newLivePluginHost(t, "https://127.0.0.1:1", nil, `touch MARKER
echo "error: login failed for password=`+stderrSecret+`" >&2
exit 3
`)
	rep, all, _ := runLive(t, h.pid, "--exec-credential-plugins")
	if _, err := os.Stat(h.marker); err != nil {
		t.Fatal("the plugin did not run")
	}
	st, why := checkStatus(rep, "api-auth")
	if st != "unknown" || !strings.Contains(why, "failed as uid 1001: exit status 3") {
		t.Errorf("api-auth: %s %q; want unknown, the plugin's failure", st, why)
	}
	if !strings.Contains(all, "login failed") {
		t.Errorf("the redacted stderr is not quoted at all:\n%s", all)
	}
}

// liveInGroup lists the processes of process group pgid that are not
// zombies, from /proc/<pid>/stat (field 5 is the group, 3 the state).
func liveInGroup(pgid int) []string {
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) > 2 && f[2] == strconv.Itoa(pgid) && f[0] != "Z" {
			out = append(out, e.Name()+" "+s[:i+1])
		}
	}
	return out
}
