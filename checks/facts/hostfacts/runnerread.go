package hostfacts

import (
	"io/fs"
	"syscall"

	"github.com/socialwebcomputer/doctor/internal/hostio"
)

// A file the runner reaches through its own settings (config.toml by its
// --config, the kubeconfig by its KUBECONFIG, the certificates, keys and
// tokens they name) is read as the runner would read it: only when the
// runner's uid and groups may, by the kernel's rules (Denied). doctor often
// runs as root, and a process of uid 65534 calling itself gitlab-runner
// with --config /root/.ssh/id_rsa must not get doctor to read that file,
// nor a bundle to carry it. Where the runner may not, doctor reports what
// the runner itself meets, and never reads the file.

// RunnerDeniedError is the runner's own failure to open a file it may not
// read: os.Open's error, which is what the runner's config loading
// (toml.DecodeFile in LoadConfig, common/config.go, gitlab-runner v19.3.0)
// and client-go's kubeconfig loading (os.ReadFile in LoadFromFile,
// tools/clientcmd/loader.go, v0.37.2) return: "open <file>: permission
// denied". errors.Is(err, fs.ErrPermission) holds.
type RunnerDeniedError struct {
	Path     string
	Blockers []Blocker // the file, then the directories, that deny the runner
}

func (e *RunnerDeniedError) Error() string {
	return (&fs.PathError{Op: "open", Path: e.Path, Err: syscall.EACCES}).Error()
}

func (e *RunnerDeniedError) Unwrap() error { return syscall.EACCES }

// RunnerReader reads files the runner reads. Its zero value (RA nil) reads
// as doctor: for files the operator named (--config, --kubeconfig), not
// the runner.
type RunnerReader struct {
	Env *hostio.Env
	RA  *RunAs
}

// Read reads p as kind, only when the runner may read it; else it returns a
// *RunnerDeniedError without opening the file. A runner whose uid is
// unknown, or root, is not judged: the read is doctor's, and says what it
// says. A file that does not stat is left to the read, which fails as it
// would.
func (r RunnerReader) Read(p string, kind hostio.FileKind) ([]byte, error) {
	if err := r.Denied(p); err != nil {
		return nil, err
	}
	return r.Env.ReadFileAs(p, kind)
}

// Denied is the runner's error for p when it may not read it, else nil.
func (r RunnerReader) Denied(p string) error {
	if r.RA == nil || !r.RA.UIDKnown || r.RA.UID == 0 {
		return nil
	}
	st, err := r.Env.Stat(p)
	if err != nil {
		return nil
	}
	if blocked := Denied(r.Env, p, st, r.RA, Read); len(blocked) > 0 {
		return &RunnerDeniedError{Path: p, Blockers: blocked}
	}
	return nil
}
