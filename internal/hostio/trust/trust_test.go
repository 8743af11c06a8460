//go:build unix

package trust

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Under sudo the user who called it counts as the invoker, as git counts
// SUDO_UID; without sudo no user but root and the effective one does.
func TestInvokerUnderSudo(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("needs root, as SUDO_UID only counts for root")
	}
	t.Setenv("SUDO_UID", "")
	if Invoker(1000) || !Invoker(0) {
		t.Errorf("without sudo: uid 1000 %v, root %v; want false, true", Invoker(1000), Invoker(0))
	}
	t.Setenv("SUDO_UID", "1000")
	if !Invoker(1000) || Invoker(1001) {
		t.Errorf("under sudo -u 1000: uid 1000 %v, 1001 %v; want true, false", Invoker(1000), Invoker(1001))
	}
}

func TestDirStickyAndModes(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		mode   os.FileMode
		sticky bool
		want   string // "" trusted
	}{
		{0o755, false, ""},
		{0o775, false, "with mode 0775: writable by its group"},
		{0o777, true, "with mode 0777: writable by its group and every user"},
		{0o777 | os.ModeSticky, true, ""},
		{0o777 | os.ModeSticky, false, "with mode 1777: writable by its group and every user"},
	} {
		if err := os.Chmod(dir, c.mode); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(dir)
		if err != nil {
			t.Fatal(err)
		}
		err = Dir(dir, fi, c.sticky)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%v (sticky allowed %v): %v, want trusted", c.mode, c.sticky, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%v (sticky allowed %v): %v, want %q", c.mode, c.sticky, err, c.want)
		}
	}
	f := filepath.Join(dir, "f")
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(f, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(f)
	if err := File(f, fi); err == nil || !strings.Contains(err.Error(), "owned by uid 65534 with mode 0644: another user's") {
		t.Errorf("another user's file: %v", err)
	}
}
