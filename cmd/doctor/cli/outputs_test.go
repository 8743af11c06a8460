//go:build unix

package cli

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/report"
	"github.com/socialwebcomputer/doctor/testkit/cmdtest"
)

// doctor writes --state, --textfile and --bundle as root: into a directory
// that is a symlink, another user's, or one every user may write it does
// not, and says so before the run, naming the path, its owner and mode.
// --cache-dir is refused alike; the default cache directory, which no one
// named, is not used and the run goes on.
func TestOutputsRefuseAnUntrustedDirectory(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("needs root, to give directories to another user")
	}
	root := cmdtest.FixtureRoot(t, "healthy")
	base := t.TempDir()
	mine := filepath.Join(base, "mine")
	cmdtest.NoErr(t, os.Mkdir(mine, 0o700))
	link := filepath.Join(base, "link")
	cmdtest.NoErr(t, os.Symlink(mine, link))
	theirs := filepath.Join(base, "theirs")
	cmdtest.NoErr(t, os.Mkdir(theirs, 0o777))
	cmdtest.NoErr(t, os.Chmod(theirs, 0o777)) // past the umask
	cmdtest.NoErr(t, os.Chown(theirs, cmdtest.Nobody, cmdtest.Nobody))
	open := filepath.Join(base, "open")
	cmdtest.NoErr(t, os.Mkdir(open, 0o700))
	cmdtest.NoErr(t, os.Chmod(open, 0o777))

	for _, c := range []struct {
		flag, path string
		says       []string
	}{
		{"--state", filepath.Join(link, "state.json"), []string{"directory " + link + ": is a symlink (to " + mine + ")"}},
		{"--textfile", filepath.Join(open, "doctor.prom"), []string{open + " is owned by uid 0 with mode 0777", "writable by its group and every user", "chmod go-w " + open}},
		{"--bundle", filepath.Join(theirs, "b.tar.gz"), []string{theirs + " is owned by uid 65534 with mode 0777", "writable by its group and every user"}},
		{"--cache-dir", theirs, []string{"--cache-dir " + theirs, "owned by uid 65534 with mode 0777"}},
		{"--cache-dir", link, []string{"--cache-dir " + link, "is a symlink"}},
	} {
		t.Run(c.flag+" "+filepath.Base(filepath.Dir(c.path))+"/"+filepath.Base(c.path), func(t *testing.T) {
			code, out, errs := runDoctor("run", "--root", root, "--only", "config-lint", c.flag, c.path)
			if code != report.ExitCantRun || out != "" {
				t.Errorf("exit %d, stdout %q; want exit 3 before the run", code, out)
			}
			for _, s := range append(c.says, c.flag+" "+c.path) {
				if !strings.Contains(errs, s) {
					t.Errorf("stderr does not say %q:\n%s", s, errs)
				}
			}
			for _, d := range []string{mine, theirs, open} {
				if ents, _ := os.ReadDir(d); len(ents) > 0 {
					t.Errorf("%s was written in: %v", d, ents)
				}
			}
		})
	}

	t.Run("the default cache directory", func(t *testing.T) {
		home := t.TempDir()
		cache := filepath.Join(home, ".cache", "doctor")
		cmdtest.NoErr(t, os.MkdirAll(cache, 0o700))
		cmdtest.NoErr(t, os.Chown(cache, cmdtest.Nobody, cmdtest.Nobody))
		var out, errb bytes.Buffer
		code := Main([]string{"run", "--root", root, "--only", "config-lint"},
			IO{Out: &out, Err: &errb, Getenv: func(k string) string { return map[string]string{"HOME": home}[k] }})
		if code != report.ExitOK {
			t.Errorf("exit %d; want the run's own, 0:\n%s", code, errb.String())
		}
		if want := "doctor: no cache this run: directory " + cache + " is owned by uid 65534"; !strings.Contains(errb.String(), want) {
			t.Errorf("stderr does not say %q:\n%s", want, errb.String())
		}
	})
}

// The temporary files of killed writes of --state, --textfile and --bundle
// (named for the file and a pid that is gone) are removed by the next run
// that writes the file; another file's stay.
func TestRunSweepsTheTemporaryFilesOfKilledWrites(t *testing.T) {
	root := cmdtest.FixtureRoot(t, "healthy")
	dir := t.TempDir()
	gone := exec.Command("true")
	cmdtest.NoErr(t, gone.Run())
	pid := gone.Process.Pid
	var left []string
	for _, f := range []string{"state.json", "doctor.prom", "b.tar.gz"} {
		p := filepath.Join(dir, fmt.Sprintf(".%s.doctor-tmp-%d-0a1b2c3d", f, pid))
		cmdtest.NoErr(t, os.WriteFile(p, []byte("cut short"), 0o600))
		left = append(left, p)
	}
	other := filepath.Join(dir, fmt.Sprintf(".other.doctor-tmp-%d-0a1b2c3d", pid))
	cmdtest.NoErr(t, os.WriteFile(other, nil, 0o600))
	code, _, errs := runDoctor("run", "--root", root, "--offline", "--state", filepath.Join(dir, "state.json"),
		"--textfile", filepath.Join(dir, "doctor.prom"), "--bundle", filepath.Join(dir, "b.tar.gz"))
	if code == report.ExitCantRun {
		t.Fatalf("exit %d:\n%s", code, errs)
	}
	for _, p := range left {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s is still there", filepath.Base(p))
		}
	}
	if _, err := os.Lstat(other); err != nil {
		t.Errorf("another file's temporary file was removed: %v", err)
	}
	for _, f := range []string{"state.json", "doctor.prom", "b.tar.gz"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s was not written: %v", f, err)
		}
	}
}
