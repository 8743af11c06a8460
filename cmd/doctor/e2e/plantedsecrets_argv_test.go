package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/internal/redact"
	"github.com/socialwebcomputer/doctor/testkit/testroot"
)

// secretFlags are a command line that carries a secret under every flag
// of the runner's settings whose name says secret (redact.SettingFlags,
// derived from the runner's config structs), half in the --flag value
// form and half in --flag=value, with -t and a flag no version has
// (--docker-password); and the secrets planted. tag tells the hosts'
// secrets apart.
func secretFlags(tag string) ([]string, []planted) {
	var args []string
	var secrets []planted
	n := 0
	for _, f := range append(redact.SettingFlags(), "docker-password") {
		if !redact.SecretKey(f) && f != "t" {
			continue
		}
		n++
		s := fmt.Sprintf("%sFlg%02dQz7Lm3Xw9", tag, n)
		dashes := "--"
		if len(f) == 1 {
			dashes = "-"
		}
		if n%2 == 0 {
			args = append(args, dashes+f+"="+s)
		} else {
			args = append(args, dashes+f, s)
		}
		secrets = append(secrets, planted{"--" + f + " on a command line", s})
	}
	return args, secrets
}

// argvHosts: the runner's command lines and its unit's ExecStart= carry a
// secret under every secret setting's flag. One host runs no `gitlab-runner
// run` but a run-single with them, its unit's ExecStart= the same (doctor
// shows the unit's command line); the other runs two `run` processes whose
// command lines carry them (doctor lists both, whole).
func argvHosts(t *testing.T) []secretHost {
	single := testroot.New(t)
	flags, secrets := secretFlags("Sgl")
	single.Runner(4242, 0, nil, append([]string{"/usr/bin/gitlab-runner", "run-single", "--url", "https://gitlab.example.invalid/",
		"--executor", "shell"}, flags...)...)
	unitFlags, unitSecrets := secretFlags("Unt")
	single.Write("/etc/systemd/system/gitlab-runner.service", "[Unit]\nDescription=GitLab Runner\n[Service]\n"+
		"ExecStart=/usr/bin/gitlab-runner run-single --url https://gitlab.example.invalid/ \\\n  "+strings.Join(quoteAll(unitFlags), " ")+"\n"+
		"[Install]\nWantedBy=multi-user.target\n", 0o644)
	single.Write("/etc/gitlab-runner/config.toml", testroot.GuideConfig, 0o600)

	two := testroot.New(t)
	f1, s1 := secretFlags("One")
	f2, s2 := secretFlags("Two")
	two.Runner(4242, 0, nil, append([]string{"/usr/bin/gitlab-runner", "run", "--config", "/etc/gitlab-runner/config.toml"}, f1...)...)
	two.Runner(4343, 0, nil, append([]string{"/usr/bin/gitlab-runner", "--debug", "run", "-c", "/etc/gitlab-runner/config.toml"}, f2...)...)
	two.Write("/etc/gitlab-runner/config.toml", testroot.GuideConfig, 0o600)
	return []secretHost{
		{name: "a run-single and its unit's ExecStart with every secret flag", root: single.Dir,
			secrets: append(secrets, unitSecrets...), routes: []string{"runner-process"}, says: []string{"--token", "--kubernetes-bearer_token"}},
		{name: "two run processes with every secret flag", root: two.Dir, secrets: append(s1, s2...),
			routes: []string{"runner-process"}, says: []string{"--cache-s3-secret-key", "--ssh-password"}},
	}
}

// quoteAll double-quotes each word for ExecStart=.
func quoteAll(words []string) []string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = `"` + w + `"`
	}
	return out
}
