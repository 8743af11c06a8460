package hostfacts

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/socialwebcomputer/doctor/internal/hostio"
)

// DoctorCannotRead is the "could not check" error for a file that doctor's
// own uid may not read: its EACCES says nothing of the runner, whose uid
// may read it (doctor run as a user, the runner as root). It returns nil
// when err is no permission error, or when the runner is denied as well,
// by the file's mode and owner: then the caller's finding about the runner
// stands. ra nil means the file's reader is not known.
func DoctorCannotRead(env *hostio.Env, file string, err error, ra *RunAs) error {
	if !errors.Is(err, fs.ErrPermission) {
		return nil
	}
	runner := "the runner"
	if ra != nil {
		runner = ra.Label()
	}
	verdict := "whether " + runner + " can is unknown"
	if ra != nil && ra.UIDKnown {
		if st, serr := env.Stat(file); serr == nil {
			if len(Denied(env, file, st, ra, Read)) > 0 {
				return nil
			}
			verdict = runner + " can, by its mode and owner"
		}
	}
	who := "doctor"
	// A bundle keeps the uid doctor ran as, so analyze says the same.
	if uid, err := hostio.Probe(env, "doctor-uid", "euid", func() (int, error) { return os.Geteuid(), nil }); err == nil {
		who = fmt.Sprintf("doctor runs as uid %d and", uid)
	}
	return fmt.Errorf("%s may not read %s (permission denied); %s: run doctor as root "+
		"(sudo doctor run) or as the runner's user", who, file, verdict)
}
