package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/testkit/cmdtest"
)

// A host with no runner (an empty /proc, no unit, no config.toml): the
// default output says where doctor looked, the process in /proc, the unit
// and the config path, without --verbose; nothing says a file that does not
// exist "did not decode", and no output speaks of "the guide".
func TestNoRunnerSaysWhereItLooked(t *testing.T) {
	root := t.TempDir()
	cmdtest.NoErr(t, os.Mkdir(filepath.Join(root, "proc"), 0o755))
	_, out, _ := runDoctor("run", "--root", root, "--offline")
	for _, want := range []string{
		"none in /proc whose comm or argv[0] is gitlab-runner",
		"No runner was found here; where doctor looked:",
		"no gitlab-runner.service on systemd's unit path (/etc/systemd/system, /run/systemd/system, /lib/systemd/system, /usr/lib/systemd/system)",
		"/etc/gitlab-runner/config.toml does not exist; give --config",
	} {
		if !strings.Contains(flat(out), want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	_, verbose, _ := runDoctor("run", "--root", root, "--offline", "--verbose", "-o", "json")
	for name, s := range map[string]string{"table": out, "json --verbose": verbose} {
		for _, bad := range []string{"did not decode", "the guide"} {
			if strings.Contains(s, bad) {
				t.Errorf("%s says %q:\n%s", name, bad, s)
			}
		}
	}
	if !strings.Contains(verbose, "needs config-decode: no config.toml was read") {
		t.Errorf("config-unknown-keys' reason:\n%s", verbose)
	}
}
