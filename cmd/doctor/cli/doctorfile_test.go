//go:build unix

package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/report"
	"github.com/socialwebcomputer/doctor/testkit/cmdtest"
)

// doctorFileRun is doctor run in dir (its working directory), with a
// deadline: a read that blocks fails the test instead of hanging it.
func doctorFileRun(t *testing.T, dir string, args ...string) (code int, rep *report.Report, stderr string) {
	t.Helper()
	wd, err := os.Getwd()
	cmdtest.NoErr(t, err)
	cmdtest.NoErr(t, os.Chdir(dir))
	defer func() { cmdtest.NoErr(t, os.Chdir(wd)) }()
	type result struct {
		code        int
		out, stderr string
	}
	done := make(chan result, 1)
	go func() {
		code, out, errs := runDoctor(append(args, "-o", "json")...)
		done <- result{code, out, errs}
	}()
	var r result
	select {
	case r = <-done:
	case <-time.After(20 * time.Second):
		t.Fatalf("doctor %q in %s did not end", args, dir)
	}
	if r.code != report.ExitCantRun {
		rep = &report.Report{}
		if err := json.Unmarshal([]byte(r.out), rep); err != nil {
			t.Fatalf("exit %d, not a report: %v\n%s\n%s", r.code, err, r.out, r.stderr)
		}
	}
	return r.code, rep, r.stderr
}

// TestDoctorYAMLIsTrustedOnlyWhenTheInvokersAlone: the working directory's
// .doctor.yaml hides findings only when it and its directory are root's
// (the tests run as root) and writable by their owner alone. Otherwise it
// is not read: the findings show, the exit code is theirs, and stderr and
// the report name the file, its owner and mode, and the fix. A FIFO, a
// symlink to /dev/zero and a file past the bound end at once.
func TestDoctorYAMLIsTrustedOnlyWhenTheInvokersAlone(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("needs root, to give files to another user")
	}
	// Honoured, the file hides cert-expired's one finding (an error) and
	// the run exits 0: what another user's file did before it was refused.
	root := cmdtest.FixtureRoot(t, "cert-expired")
	hides := []byte("ignores:\n  - check: cert-expiry\n    reason: planted\n")
	args := []string{"run", "--root", root, "--offline", "--now", "2026-11-29T12:00:00Z"}

	// lay makes a working directory with a .doctor.yaml; spoil then
	// changes one thing about it.
	lay := func(t *testing.T, spoil func(dir, file string)) string {
		dir := t.TempDir()
		file := filepath.Join(dir, DoctorFile)
		cmdtest.NoErr(t, os.WriteFile(file, hides, 0o644))
		spoil(dir, file)
		return dir
	}
	honoured := func(t *testing.T, dir string) {
		t.Helper()
		code, rep, errs := doctorFileRun(t, dir, args...)
		if code != report.ExitOK || findingOf(rep, "cert-expiry") != nil || len(rep.Ignores) != 1 || rep.Ignores[0].Status != report.IgnoreMatched {
			t.Errorf("exit %d, ignores %+v; want the file honoured, exit 0\n%s", code, rep.Ignores, errs)
		}
	}
	refused := func(t *testing.T, dir string, says ...string) {
		t.Helper()
		code, rep, errs := doctorFileRun(t, dir, args...)
		if code != report.ExitError || findingOf(rep, "cert-expiry") == nil {
			t.Fatalf("exit %d: the file was honoured; want its findings shown, exit 2\n%s", code, errs)
		}
		if len(rep.Ignores) != 1 || rep.Ignores[0].Check != "*" || rep.Ignores[0].Status != report.IgnoreNotEvaluated ||
			rep.Ignores[0].Source != DoctorFile {
			t.Fatalf("ignores %+v: want one not evaluated, of every ignore of %s", rep.Ignores, DoctorFile)
		}
		says = append(says, filepath.Join(dir, DoctorFile), "as git's safe.directory", "--config-file")
		for _, s := range says {
			if !strings.Contains(errs, s) {
				t.Errorf("stderr does not say %q:\n%s", s, errs)
			}
			if !strings.Contains(rep.Ignores[0].Note, s) {
				t.Errorf("the report's note does not say %q: %s", s, rep.Ignores[0].Note)
			}
		}
	}

	t.Run("root's, 0644", func(t *testing.T) {
		honoured(t, lay(t, func(string, string) {}))
	})
	t.Run("root's in a sticky directory", func(t *testing.T) {
		honoured(t, lay(t, func(dir, _ string) { cmdtest.NoErr(t, os.Chmod(dir, 0o777|os.ModeSticky)) }))
	})
	t.Run("another user's", func(t *testing.T) {
		refused(t, lay(t, func(_, file string) { cmdtest.NoErr(t, os.Chown(file, cmdtest.Nobody, cmdtest.Nobody)) }),
			"owned by uid 65534 with mode 0644", "another user's", "chown 0 ")
	})
	t.Run("writable by every user", func(t *testing.T) {
		refused(t, lay(t, func(_, file string) { cmdtest.NoErr(t, os.Chmod(file, 0o666)) }),
			"owned by uid 0 with mode 0666", "writable by its group and every user", "chmod go-w ")
	})
	t.Run("in another user's directory", func(t *testing.T) {
		refused(t, lay(t, func(dir, _ string) { cmdtest.NoErr(t, os.Chown(dir, cmdtest.Nobody, cmdtest.Nobody)) }),
			"owned by uid 65534")
	})
	t.Run("in a directory every user may write", func(t *testing.T) {
		refused(t, lay(t, func(dir, _ string) { cmdtest.NoErr(t, os.Chmod(dir, 0o777)) }),
			"with mode 0777", "writable by its group and every user")
	})
	t.Run("a symlink another user made", func(t *testing.T) {
		refused(t, lay(t, func(dir, file string) {
			target := filepath.Join(t.TempDir(), "ignores.yaml")
			cmdtest.NoErr(t, os.Rename(file, target))
			cmdtest.NoErr(t, os.Symlink(target, file))
			cmdtest.NoErr(t, os.Lchown(file, cmdtest.Nobody, cmdtest.Nobody))
		}), "owned by uid 65534")
	})
	t.Run("a symlink into a directory every user may write", func(t *testing.T) {
		refused(t, lay(t, func(dir, file string) {
			other := t.TempDir()
			cmdtest.NoErr(t, os.Chmod(other, 0o777))
			target := filepath.Join(other, "ignores.yaml")
			cmdtest.NoErr(t, os.Rename(file, target))
			cmdtest.NoErr(t, os.Symlink(target, file))
		}), "with mode 0777")
	})
	t.Run("a symlink to /dev/zero", func(t *testing.T) {
		refused(t, lay(t, func(_, file string) {
			cmdtest.NoErr(t, os.Remove(file))
			cmdtest.NoErr(t, os.Symlink("/dev/zero", file))
		}), "mode 0666")
	})
	t.Run("a FIFO", func(t *testing.T) {
		dir := lay(t, func(_, file string) {
			cmdtest.NoErr(t, os.Remove(file))
			cmdtest.NoErr(t, syscall.Mkfifo(file, 0o644))
		})
		code, _, errs := doctorFileRun(t, dir, args...)
		if code != report.ExitCantRun || !strings.Contains(errs, filepath.Join(dir, DoctorFile)+": not a regular file (a FIFO)") {
			t.Errorf("exit %d, %s; want exit 3 naming the FIFO", code, errs)
		}
	})
	t.Run("past the bound", func(t *testing.T) {
		dir := lay(t, func(_, file string) {
			cmdtest.NoErr(t, os.WriteFile(file, append(hides, make([]byte, maxDoctorFile)...), 0o644))
		})
		code, _, errs := doctorFileRun(t, dir, args...)
		if code != report.ExitCantRun || !strings.Contains(errs, filepath.Join(dir, DoctorFile)+": larger than") {
			t.Errorf("exit %d, %s; want exit 3 naming the file", code, errs)
		}
	})
	// --config-file names a file the operator chose: bounded alike, and
	// honoured whoever owns it.
	t.Run("--config-file, another user's", func(t *testing.T) {
		dir := lay(t, func(_, file string) { cmdtest.NoErr(t, os.Chown(file, cmdtest.Nobody, cmdtest.Nobody)) })
		code, rep, errs := doctorFileRun(t, t.TempDir(), append(args, "--config-file", filepath.Join(dir, DoctorFile))...)
		if code != report.ExitOK || findingOf(rep, "cert-expiry") != nil {
			t.Errorf("exit %d: want the named file honoured\n%s", code, errs)
		}
	})
	t.Run("--config-file, a FIFO", func(t *testing.T) {
		fifo := filepath.Join(t.TempDir(), "fifo.yaml")
		cmdtest.NoErr(t, syscall.Mkfifo(fifo, 0o600))
		code, _, errs := doctorFileRun(t, t.TempDir(), append(args, "--config-file", fifo)...)
		if code != report.ExitCantRun || !strings.Contains(errs, "--config-file "+fifo+": not a regular file (a FIFO)") {
			t.Errorf("exit %d, %s; want exit 3 naming the FIFO", code, errs)
		}
	})
}
