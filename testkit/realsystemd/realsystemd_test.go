package realsystemd

import (
	"strings"
	"testing"
)

// The manager answers for a layout: the unit's fragment, drop-ins and
// environment as it loaded them, and its version is the one the
// differential tests claim (Debian 12's 252).
func TestManagerAnswers(t *testing.T) {
	m := Start(t)
	t.Logf("systemd %s, merged /usr: %v", m.Version, m.MergedUsr)
	err := m.Layout(map[string]File{
		"/lib/systemd/system/t.service":                 {Content: "[Service]\nEnvironment=A=1 B=2\nExecStart=/bin/true\n"},
		"/etc/systemd/system/t.service.d/override.conf": {Content: "[Service]\nEnvironment=\nEnvironment=C=3\n"},
	})
	if err != nil {
		t.Fatal(err)
	}
	got, out, err := m.Show("t.service", "FragmentPath", "DropInPaths", "Environment", "LoadState")
	if err != nil {
		t.Fatal(err)
	}
	if got["Environment"][0] != "C=3" || got["LoadState"][0] != "loaded" || !strings.HasSuffix(got["FragmentPath"][0], "/systemd/system/t.service") ||
		got["DropInPaths"][0] != "/etc/systemd/system/t.service.d/override.conf" {
		t.Errorf("systemctl show:\n%s", out)
	}
}
