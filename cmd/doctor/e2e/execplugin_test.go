package e2e

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/testkit/cmdtest"
	"github.com/socialwebcomputer/doctor/testkit/testroot"
)

// A kubeconfig whose user gets its credential from an exec plugin: doctor
// never runs it (a marker file the plugin would write stays absent), says
// what the plugin is, and the API checks are unknown with that reason.
func TestExecCredentialPluginIsNeverRun(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "plugin-ran")
	plugin := filepath.Join(dir, "credential-plugin.sh")
	cmdtest.NoErr(t, os.WriteFile(plugin, []byte("#!/bin/sh\ntouch "+marker+"\necho '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":{\"token\":\"x\"}}'\n"), 0o755))
	kubeconfig := execPluginKubeconfig("https://127.0.0.1:1/clusters/root:k3x9q2mf:tenant-ci:clusters", nil, plugin,
		`["--cluster", "tenant-ci"]`, "[{name: AWS_SECRET_ACCESS_KEY, value: wJalrXUtnFEMIK7MDENGbPxRfiCYplanted}]")
	root := testroot.New(t)
	root.GuideRunner(testroot.GuideConfig, []byte(kubeconfig))
	// Without --exec-credential-plugins; and with it, under a --root that
	// is not /: the kubeconfig is a copy from elsewhere, never run.
	for _, flags := range [][]string{nil, {"--exec-credential-plugins"}} {
		args := append([]string{"run", "--root", root.Dir, "-o", "json", "--now", "2026-11-29T12:00:00Z", "--timeout", "20s", "--skip", "gitlab-reachability"}, flags...)
		rep, out := runReport(t, args...)
		if _, err := os.Stat(marker); err == nil {
			t.Fatalf("doctor %v ran the kubeconfig's exec credential plugin", flags)
		}
		var reason string
		for _, c := range rep.Checks {
			if c.ID == "api-auth" {
				reason = c.Reason
				if c.Status != "unknown" {
					t.Errorf("%v: api-auth is %s, want unknown: %s", flags, c.Status, c.Reason)
				}
			}
		}
		if !strings.Contains(reason, "credential-plugin.sh") || !strings.Contains(reason, "runs no code from its input") {
			t.Errorf("%v: api-auth's reason does not describe the plugin: %q", flags, reason)
		}
		if flags != nil && !strings.Contains(reason, "runs one only on a live host: under --root "+root.Dir) {
			t.Errorf("%v: api-auth's reason does not say the flag needs a live host: %q", flags, reason)
		}
		if strings.Contains(out, "wJalrXUtnFEMIK7MDENGbPxRfiCY") {
			t.Errorf("%v: the plugin's secret env reached the output", flags)
		}
		if rep.Summary.ExitCode == 0 {
			t.Errorf("%v: exit 0 with the API checks unknown", flags)
		}
	}
}

// execPluginKubeconfig is a kubeconfig whose one user gets its credential
// from the exec plugin command, for the tests of plugins and of their
// secrets. caPEM may be nil; args is a YAML flow sequence, env one or "".
func execPluginKubeconfig(server string, caPEM []byte, command, args, env string) string {
	ca := ""
	if len(caPEM) > 0 {
		ca = "\n    certificate-authority-data: " + base64.StdEncoding.EncodeToString(caPEM)
	}
	if env != "" {
		env = "\n      env: " + env
	}
	return `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster:
    server: ` + server + ca + `
contexts:
- name: c
  context: {cluster: c, user: u}
current-context: c
users:
- name: u
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: ` + command + `
      args: ` + args + env + `
      interactiveMode: Never
`
}
