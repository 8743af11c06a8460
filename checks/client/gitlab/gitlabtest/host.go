package gitlabtest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/checks/client/gitlab"
	"github.com/socialwebcomputer/doctor/testkit/testpki"
	"github.com/socialwebcomputer/doctor/testkit/testroot"
)

// CAPath is where a fake GitLab's CA lives under the root, as tls-ca-file names it.
const CAPath = "/etc/gitlab-runner/certs/gitlab-ca.crt"

// Runner is one [[runners]] element of Config.
type Runner struct{ Name, URL, Token, CAFile string }

// Config renders a config.toml with the given [[runners]].
func Config(rs ...Runner) string {
	var b strings.Builder
	b.WriteString("concurrent = 2\ncheck_interval = 3\n")
	for _, r := range rs {
		fmt.Fprintf(&b, "\n[[runners]]\n  name = %q\n  url = %q\n  token = %q\n  executor = \"kubernetes\"\n", r.Name, r.URL, r.Token)
		if r.CAFile != "" {
			fmt.Fprintf(&b, "  tls-ca-file = %q\n", r.CAFile)
		}
	}
	return b.String()
}

// NewRoot lays out a root-run runner (pid 4242, --config
// /etc/gitlab-runner/config.toml) with config and, when given, the CA at CAPath.
func NewRoot(t testing.TB, config string, ca *testpki.CA) *testroot.Root {
	r := testroot.New(t)
	r.Runner(4242, 0, map[string]string{"PATH": "/usr/bin:/bin"})
	r.Write("/etc/gitlab-runner/config.toml", config, 0o600)
	if ca != nil {
		r.Write(CAPath, string(ca.CertPEM), 0o644)
	}
	return r
}

// Settings point every resolver doctor asks at loopback servers, declare
// this host off the tailnet (so no test ever dials a tailnet address), and
// shorten every stage's deadline.
func Settings(resolver, public string, stage time.Duration) map[string]string {
	return map[string]string{
		"resolver":                 resolver,
		"public-dns":               public,
		gitlab.SettingTailnet:      "no",
		gitlab.SettingStageTimeout: stage.String(),
	}
}
