package hostio_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/socialwebcomputer/doctor/internal/hostio"
)

// hostSecret is a file of the machine running the test, outside every
// root: no operation under a root may reach it.
const hostSecret = "HostOnly7Qz2Lm9Tx4Wb"

// escapeRoot lays out a root whose symlinks point out of it every way a
// copied host's can: absolute, relative climbing past /, a directory
// component, a chain; and ones that stay inside, which must keep working.
func escapeRoot(t *testing.T) (root, outside string) {
	t.Helper()
	outside = t.TempDir()
	write(t, filepath.Join(outside, "secret"), hostSecret)
	noErrT(t, os.Mkdir(filepath.Join(outside, "dir"), 0o755))
	write(t, filepath.Join(outside, "dir", "secret"), hostSecret)
	root = t.TempDir()
	for _, d := range []string{"etc/gitlab-runner", "srv", "real"} {
		noErrT(t, os.MkdirAll(filepath.Join(root, d), 0o755))
	}
	write(t, filepath.Join(root, "real", "config.toml"), "inside\n")
	// The same names inside the root, so a resolution that stays inside
	// finds the root's own files.
	noErrT(t, os.MkdirAll(filepath.Join(root, filepath.Dir(outside)), 0o755))
	links := map[string]string{
		"etc/abs":                outside + "/secret",
		"etc/rel":                strings.Repeat("../", 40) + strings.TrimPrefix(outside, "/") + "/secret",
		"etc/dirlink":            outside + "/dir",
		"etc/reldirlink":         "../../../../../../../../" + strings.TrimPrefix(outside, "/") + "/dir",
		"etc/chain":              "/etc/abs",
		"etc/gitlab-runner/conf": "/real/config.toml",
		"etc/gitlab-runner/rel":  "../../real/config.toml",
		"srv/up":                 "../..",
	}
	for l, target := range links {
		noErrT(t, os.Symlink(target, filepath.Join(root, l)))
	}
	return root, outside
}

// Under --root every Env operation resolves symlinks inside the root, as a
// chroot would: a link out of it (absolute, relative, through a directory,
// chained) finds nothing of the host, one inside it finds the root's file.
func TestEnvResolvesInsideRoot(t *testing.T) {
	root, outside := escapeRoot(t)
	env := &hostio.Env{Root: root}
	for _, p := range []string{"/etc/abs", "/etc/rel", "/etc/dirlink/secret", "/etc/reldirlink/secret", "/etc/chain",
		"/srv/up" + outside + "/secret", "/../../.." + outside + "/secret"} {
		if b, err := env.ReadFile(p); err == nil || !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("ReadFile(%s) = %q, %v; want not found inside the root", p, b, err)
		}
		if st, err := env.Stat(p); err == nil {
			t.Errorf("Stat(%s) found %s (%d bytes) outside the root", p, st.Name(), st.Size())
		}
	}
	for _, p := range []string{"/etc/dirlink", "/etc/reldirlink", "/srv/up" + outside + "/dir"} {
		if ents, err := env.ReadDir(p); err == nil {
			t.Errorf("ReadDir(%s) listed %d entries outside the root", p, len(ents))
		}
		if _, err := env.Lstat(p + "/secret"); err == nil {
			t.Errorf("Lstat(%s/secret) found the host's file", p)
		}
	}
	for _, p := range []string{"/etc/gitlab-runner/conf", "/etc/gitlab-runner/rel", "/srv/up/real/config.toml", "/etc/../real/config.toml"} {
		b, err := env.ReadFile(p)
		if err != nil || string(b) != "inside\n" {
			t.Errorf("ReadFile(%s) = %q, %v; want the root's own file", p, b, err)
		}
		if st, err := env.Stat(p); err != nil || st.Name() != filepath.Base(p) || !st.Mode().IsRegular() {
			t.Errorf("Stat(%s) = %v, %v; want a regular file named as asked", p, st, err)
		}
	}
	// Lstat and Readlink see the link itself, its parents resolved inside.
	if st, err := env.Lstat("/etc/abs"); err != nil || st.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("Lstat(/etc/abs) = %v, %v; want the symlink", st, err)
	}
	if target, err := env.Readlink("/srv/up/etc/abs"); err != nil || target != outside+"/secret" {
		t.Errorf("Readlink = %q, %v; want the target as written", target, err)
	}
	if ents, err := env.ReadDir("/srv/up/etc/gitlab-runner"); err != nil || len(ents) != 2 || ents[0].Name() != "conf" {
		t.Errorf("ReadDir = %v, %v; want conf and rel, sorted", ents, err)
	}
	if _, err := env.Readlink("/etc/dirlink/secret"); err == nil {
		t.Error("Readlink through a link out of the root reached the host")
	}
	if st, err := env.Lstat("/"); err != nil || !st.IsDir() {
		t.Errorf("Lstat(/) = %v, %v; want the root itself", st, err)
	}
	// What client-go and the runner binary's reader open by name.
	j, err := hostio.JoinInRoot(root, "/etc/chain")
	if err != nil || !strings.HasPrefix(j, root+"/") {
		t.Errorf("JoinInRoot = %q, %v; want a path inside the root", j, err)
	}
	if b, _ := os.ReadFile(j); strings.Contains(string(b), hostSecret) {
		t.Error("JoinInRoot led to the host's file")
	}
}

// The bounds hold under a root as on the host: a device the root's own
// /dev/zero names, a FIFO and a symlink loop are refused, named, without
// blocking.
func TestEnvInRootRefusesWhatIsNotAFile(t *testing.T) {
	root := t.TempDir()
	noErrT(t, os.MkdirAll(filepath.Join(root, "dev"), 0o755))
	noErrT(t, os.MkdirAll(filepath.Join(root, "etc"), 0o755))
	if err := syscall.Mknod(filepath.Join(root, "dev", "zero"), syscall.S_IFCHR|0o666, 1<<8|5); err != nil {
		t.Fatalf("mknod (the tests run as root): %v", err)
	}
	noErrT(t, os.Symlink("/dev/zero", filepath.Join(root, "etc", "zero")))
	noErrT(t, syscall.Mkfifo(filepath.Join(root, "etc", "fifo"), 0o600))
	noErrT(t, os.Symlink("loop", filepath.Join(root, "etc", "loop")))
	env := &hostio.Env{Root: root}
	for p, want := range map[string]string{
		"/etc/zero": "not a regular file (a character device)",
		"/etc/fifo": "not a regular file (a FIFO)",
		"/etc/loop": "too many levels of symbolic links",
		"/etc":      "is a directory",
	} {
		_, err := env.ReadFile(p)
		if err == nil || err.Error() != p+": "+want {
			t.Errorf("ReadFile(%s) = %v; want %q", p, err, want)
		}
	}
}

func write(t *testing.T, p, s string) {
	t.Helper()
	noErrT(t, os.WriteFile(p, []byte(s), 0o600))
}

func noErrT(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
