package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/socialwebcomputer/doctor/internal/hostio/trust"
	"github.com/socialwebcomputer/doctor/report"
)

// maxDoctorFile bounds .doctor.yaml: an ignore is about 100 bytes, so a
// MiB holds thousands.
const maxDoctorFile = 1 << 20

// trustDoctorFile says why the .doctor.yaml doctor found by itself in the
// working directory is not one to honour, nil when it is. Its ignores hide
// findings, and doctor runs as root: a file another user could write would
// let that user choose what root's report leaves out. So, as git's
// safe.directory and ssh's StrictModes decide, it is honoured only when the
// file is the invoker's or root's (trust.Invoker) and writable by its owner
// alone, and so are the directory it is in and, when it is a symlink, the
// link and the directory its target is in: anyone else who may write one of
// those may swap the file. A sticky directory (/tmp) is enough, since there
// no one may rename or remove a file that is not theirs. The directories
// above are not examined: whoever swaps one of those brings only files whose
// owner is checked here.
func trustDoctorFile(path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	dirs := []string{filepath.Dir(abs)}
	lfi, err := os.Lstat(abs)
	if err != nil {
		return err
	}
	if lfi.Mode()&os.ModeSymlink != 0 {
		if err := trust.Link(abs, lfi); err != nil {
			return err
		}
		real, err := filepath.EvalSymlinks(abs)
		if err != nil {
			return err
		}
		dirs = append(dirs, filepath.Dir(real))
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return err
	}
	if err := trust.File(abs, fi); err != nil {
		return err
	}
	for _, d := range dirs {
		dfi, err := os.Stat(d)
		if err != nil {
			return err
		}
		if err := trust.Dir(d, dfi, true); err != nil {
			return err
		}
	}
	return nil
}

// refusedDoctorFile is the report's word on a .doctor.yaml not honoured:
// one ignore of check "*" (every ignore the file may hold), not evaluated,
// whose note says why and what makes the file trusted. Nothing of the file
// is read, so nothing its author wrote reaches the report.
func refusedDoctorFile(path string, why error) *report.Ignore {
	fix := "make it yours or root's and writable by you alone"
	var u *trust.Untrusted
	if errors.As(why, &u) {
		fix = u.Fix()
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	return &report.Ignore{Check: "*", Source: path, Reason: "every ignore of " + path + ", none read",
		Status: report.IgnoreNotEvaluated,
		Note: fmt.Sprintf("doctor did not read %s: %v. A %s found in the working directory is honoured only when it and "+
			"its directory are yours or root's and writable by their owner alone (as git's safe.directory); %s, "+
			"or name the file with --config-file", abs, why, DoctorFile, fix)}
}
