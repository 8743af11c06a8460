package cli

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/internal/hostio/atomicfile"
	"github.com/socialwebcomputer/doctor/report"
)

// checkOutputs refuses, before the run, the files doctor would write after
// it in a directory it may not trust (atomicfile.CheckDir: a symlink, or one
// another user may write; for the textfile and the bundle, left for another
// program, CheckPublishDir: a symlink, or one writable by more than its
// owner), and a cache directory that is not the invoker's
// alone (atomicfile.PrivateDir). The default cache directory, which the
// operator did not name, is then not used, and stderr says so; one named
// with --cache-dir is exit 3. The writes check again: this is the early
// word, not the guard.
func (a *app) checkOutputs(f *runFlags, env *hostio.Env) error {
	for _, o := range []struct {
		flag, path string
		check      func(string) error
	}{{"--state", f.state, atomicfile.CheckDir}, {"--textfile", f.textfile, atomicfile.CheckPublishDir}, {"--bundle", f.bundle, atomicfile.CheckPublishDir}} {
		if o.path == "" {
			continue
		}
		if err := o.check(o.path); err != nil {
			return &exitError{code: report.ExitCantRun, msg: fmt.Sprintf("%s %s: %v", o.flag, o.path, err)}
		}
	}
	if env.CacheDir == "" || env.Offline {
		return nil
	}
	err := atomicfile.PrivateDir(env.CacheDir)
	switch {
	case err == nil, errors.Is(err, fs.ErrNotExist): // made, mode 0700, when first written
		return nil
	case f.cacheDir.set:
		return &exitError{code: report.ExitCantRun, msg: fmt.Sprintf("--cache-dir %s: %v", env.CacheDir, err)}
	}
	fmt.Fprintf(a.io.Err, "doctor: no cache this run: %v\n", err)
	env.CacheDir = ""
	return nil
}
