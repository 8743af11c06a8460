package hostio

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// MaxFileSize bounds every local read: config files, kubeconfigs and /proc
// entries are small, and a larger file is a finding, not a reason to load it.
const MaxFileSize = 10 << 20

// Env is the one door to the outside world: every file read goes through
// Root, every clock read through Now, every dial through Dial. That makes a
// fixture, a saved bundle and a live host the same input to the same checks.
type Env struct {
	Root    string    // "/" on a live host; a fixture directory in tests
	Clock   time.Time // --now; zero means the wall clock
	Offline bool      // --offline: network facts and checks are skipped
	// Deep allows the one mutating probe (a pod in the runner namespace,
	// always deleted). Nothing else in doctor writes to a cluster.
	Deep bool
	// ExecCredentialPlugins is --exec-credential-plugins: on a live host
	// (Root "/") a kubeconfig's exec plugin is run, as the runner's user.
	// Without it, or under another root, nothing from an input is run.
	ExecCredentialPlugins bool

	RunnerPID      int    // --runner-pid; 0 means discover
	ConfigPath     string // --config; "" means locate as the runner does
	KubeconfigPath string // --kubeconfig; "" means the runner's KUBECONFIG

	// ContextOverride is --context: every Kubernetes runner uses this
	// context of the kubeconfig instead of its own ([runners.kubernetes]
	// context, else the kubeconfig's current-context). "" means its own.
	ContextOverride string
	// NamespaceOverride is -n/--namespace: every Kubernetes runner is
	// diagnosed in this namespace instead of [runners.kubernetes] namespace.
	// "" means its own.
	NamespaceOverride string
	// RequestTimeout is --request-timeout: the bound of one API call. Zero
	// means APICallTimeout; APITimeout gives the one in force.
	RequestTimeout time.Duration
	// Log receives what -v/--v=N asks for; nil logs nothing. Levels, as
	// kubectl's: 2 every dial (Dial logs them itself), 5 each fact's and
	// check's times (the engine's), 6 every API request (method, URL,
	// status, latency), 8 also request and response headers.
	// The CLI redacts what it prints; callers still never pass a secret.
	Log func(level int, format string, args ...any)

	// CacheDir is --cache-dir: where doctor keeps, between runs, what lets
	// the next run send its requests earlier (the pods kubelet-reach read,
	// so their reads leave in the first round trip). Never a finding's
	// input: a run with an empty, stale or unreadable cache reports what a
	// run without one does. "" keeps nothing.
	CacheDir string

	// Settings for later checks (API, DNS, HTTP) live here too, each with a
	// production default that the CLI sets and tests override.
	Settings map[string]string

	// Tape records what the run looks at (doctor run --bundle), or on
	// replay (doctor analyze) answers every file operation, probe and API
	// request from the bundle instead of the host; nil for a plain run.
	Tape *Tape
	// Clocks holds the Date headers of the servers doctor talked to, for
	// clock-skew; Run makes one when it is nil.
	Clocks *ServerClocks
}

// Now is the clock every time comparison uses.
func (e *Env) Now() time.Time {
	if !e.Clock.IsZero() {
		return e.Clock
	}
	return time.Now()
}

// Path maps an absolute host path to where it lives under Root, lexically:
// its symlinks are not resolved inside Root. A reader that opens a file by
// name rather than through the Env takes JoinInRoot's path instead.
func (e *Env) Path(p string) string {
	if e.Root == "" || e.Root == "/" {
		return p
	}
	return filepath.Join(e.Root, filepath.FromSlash(p))
}

// FileError names the host path (not the root-prefixed one) and says what
// was wrong, so every finding about a file reads the same.
type FileError struct {
	Path string
	Err  error
}

func (e *FileError) Error() string { return e.Path + ": " + e.Err.Error() }
func (e *FileError) Unwrap() error { return e.Err }

var (
	ErrTooLarge   = fmt.Errorf("larger than %d MiB", MaxFileSize>>20)
	ErrNotRegular = errors.New("not a regular file")
)

// ReadFile reads a regular file under Root, refusing directories, devices
// and anything over MaxFileSize without reading it whole.
func (e *Env) ReadFile(p string) ([]byte, error) {
	return e.readFile(p, MaxFileSize)
}

// ReadProc reads a /proc entry, which stat reports as size 0 and irregular
// sizes; the same bound applies to what is read.
func (e *Env) ReadProc(p string) ([]byte, error) {
	return e.readFile(p, MaxFileSize)
}

func (e *Env) readFile(p string, limit int64) ([]byte, error) {
	if t := e.Tape; t != nil {
		if t.Replay {
			r := t.lookup(p)
			switch {
			case r == nil || (!r.Read && r.ReadErr == nil):
				return nil, &FileError{p, errNotInBundle}
			case r.ReadErr != nil:
				return nil, &FileError{p, r.ReadErr.Err()}
			}
			return append([]byte(nil), r.Content...), nil
		}
		b, err := e.readHostFile(p, limit)
		t.recordOp(p, func(r *FileRecord) {
			r.Read, r.Content, r.ReadErr = err == nil, b, RecordErr(FileCause(err))
		})
		return b, err
	}
	return e.readHostFile(p, limit)
}

func (e *Env) readHostFile(p string, limit int64) ([]byte, error) {
	if e.chrooted() {
		return rootReadFile(e.Root, p, limit)
	}
	// O_NONBLOCK: open(2) of a FIFO with no writer would block until the
	// deadline; with it the open returns, and the stat below refuses it.
	// On a regular file (and a /proc entry) the flag changes nothing.
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, &FileError{p, FileCause(err)}
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, &FileError{p, FileCause(err)}
	}
	if err := readable(st, limit); err != nil {
		return nil, &FileError{p, err}
	}
	return readBounded(p, f, limit)
}

// ReadHostFile reads p, a path of this host whatever Root is (doctor's own
// .doctor.yaml), through the door every input takes: a regular file of at
// most limit bytes, opened without blocking.
func ReadHostFile(p string, limit int64) ([]byte, error) {
	return (&Env{Root: "/"}).readHostFile(p, limit)
}

// FileType names what a non-regular file is ("a FIFO", "a socket", ...),
// for a finding that refuses to read it.
func FileType(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	}
	return m.Type().String()
}

// Stat is stat under Root (symlinks followed, as the runner would).
func (e *Env) Stat(p string) (fs.FileInfo, error) {
	return e.stat(p, false)
}

// Lstat is lstat under Root: a symlink is reported as itself.
func (e *Env) Lstat(p string) (fs.FileInfo, error) {
	return e.stat(p, true)
}

func (e *Env) stat(p string, link bool) (fs.FileInfo, error) {
	t := e.Tape
	if t != nil && t.Replay {
		r := t.lookup(p)
		rec, rerr := (*StatRecord)(nil), (*ErrRecord)(nil)
		if r != nil {
			rec, rerr = r.Stat, r.StatErr
			if link {
				rec, rerr = r.Lstat, r.LstatErr
			}
		}
		switch {
		case rerr != nil:
			return nil, &FileError{p, rerr.Err()}
		case rec == nil:
			return nil, &FileError{p, errNotInBundle}
		}
		return replayInfo{rec}, nil
	}
	st, err := e.hostStat(p, link)
	if t != nil {
		t.recordOp(p, func(r *FileRecord) {
			var sr *StatRecord
			if err == nil {
				sr = statRecord(st)
			}
			if link {
				r.Lstat, r.LstatErr = sr, RecordErr(err)
			} else {
				r.Stat, r.StatErr = sr, RecordErr(err)
			}
		})
	}
	if err != nil {
		return nil, &FileError{p, err}
	}
	return st, nil
}

// hostStat is stat or lstat on the host, or under a root inside it.
func (e *Env) hostStat(p string, link bool) (fs.FileInfo, error) {
	switch {
	case e.chrooted() && link:
		return rootLstat(e.Root, p)
	case e.chrooted():
		return rootStat(e.Root, p)
	}
	statf := os.Stat
	if link {
		statf = os.Lstat
	}
	st, err := statf(p)
	return st, FileCause(err)
}

// Readlink reads a symlink under Root.
func (e *Env) Readlink(p string) (string, error) {
	t := e.Tape
	if t != nil && t.Replay {
		r := t.lookup(p)
		switch {
		case r == nil || (!r.Linked && r.LinkErr == nil):
			return "", &FileError{p, errNotInBundle}
		case r.LinkErr != nil:
			return "", &FileError{p, r.LinkErr.Err()}
		}
		return r.Link, nil
	}
	target, err := e.hostReadlink(p)
	if t != nil {
		t.recordOp(p, func(r *FileRecord) { r.Linked, r.Link, r.LinkErr = err == nil, target, RecordErr(err) })
	}
	if err != nil {
		return "", &FileError{p, err}
	}
	return target, nil
}

// ReadDir lists a directory under Root.
func (e *Env) ReadDir(p string) ([]fs.DirEntry, error) {
	t := e.Tape
	if t != nil && t.Replay {
		r := t.lookup(p)
		switch {
		case r == nil || (!r.Listed && r.DirErr == nil):
			return nil, &FileError{p, errNotInBundle}
		case r.DirErr != nil:
			return nil, &FileError{p, r.DirErr.Err()}
		}
		out := make([]fs.DirEntry, len(r.Entries))
		for i, d := range r.Entries {
			out[i] = replayEntry{d}
		}
		return out, nil
	}
	ents, err := e.hostReadDir(p)
	if t != nil {
		t.recordOp(p, func(r *FileRecord) {
			r.Listed, r.DirErr, r.Entries = err == nil, RecordErr(err), nil
			for _, d := range ents {
				r.Entries = append(r.Entries, DirEntry{Name: d.Name(), Type: d.Type()})
			}
		})
	}
	if err != nil {
		return nil, &FileError{p, err}
	}
	return ents, nil
}

func (e *Env) hostReadlink(p string) (string, error) {
	if e.chrooted() {
		return rootReadlink(e.Root, p)
	}
	target, err := os.Readlink(p)
	return target, FileCause(err)
}

func (e *Env) hostReadDir(p string) ([]fs.DirEntry, error) {
	if e.chrooted() {
		return rootReadDir(e.Root, p)
	}
	ents, err := os.ReadDir(p)
	return ents, FileCause(err)
}

// FileCause is what went wrong with a file, without its path: the error
// under a FileError (which names the host path itself, and which replay
// wraps again) or under an *fs.PathError (whose path is the root-prefixed
// one).
func FileCause(err error) error {
	var fe *FileError
	if errors.As(err, &fe) {
		return fe.Err
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// APICallTimeout bounds one API request inside a node. It is well under
// DefaultTimeout so that a server that does not answer becomes the node's
// own finding ("timed out", naming the address) rather than the engine
// cutting the node off as unknown.
const APICallTimeout = 8 * time.Second

// ErrOffline is returned by network facts under --offline.
var ErrOffline = errors.New("offline")

// DefaultDialTimeout bounds a connection attempt that carries no sooner deadline.
const DefaultDialTimeout = 10 * time.Second

// Setting returns a named setting or its default.
func (e *Env) Setting(name, def string) string {
	if v, ok := e.Settings[name]; ok && v != "" {
		return v
	}
	return def
}

// Logf logs at level through Log, when there is one.
func (e *Env) Logf(level int, format string, args ...any) {
	if e != nil && e.Log != nil {
		e.Log(level, format, args...)
	}
}

// APITimeout is the bound of one API call: --request-timeout when given,
// else APICallTimeout.
func (e *Env) APITimeout() time.Duration {
	if e.RequestTimeout > 0 {
		return e.RequestTimeout
	}
	return APICallTimeout
}

// Dial is the only way a check opens a connection: it refuses under
// --offline and always carries the pass's deadline. Every dial is logged
// at level 2.
func (e *Env) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	if e.Tape != nil && e.Tape.Replay {
		// Analyze answers from the bundle; a dial would be a probe the
		// live run did not record.
		return nil, fmt.Errorf("dial %s %s: not recorded in the bundle", network, addr)
	}
	if e.Offline {
		e.Logf(2, "dial %s %s: refused: --offline", network, addr)
		return nil, ErrOffline
	}
	// A unix socket is a file of this machine: it never leaves it, so the
	// loopback guard has nothing to refuse (the Docker daemon's socket).
	if err := loopbackOnly(addr); err != nil && network != "unix" {
		e.Logf(2, "dial %s %s: %v", network, addr, err)
		return nil, err
	}
	// A dial without a deadline of its own still gets one: an unreachable
	// endpoint must be a finding, never a hang.
	d := net.Dialer{Timeout: DefaultDialTimeout}
	start := time.Now()
	c, err := d.DialContext(ctx, network, addr)
	took := time.Since(start).Round(time.Microsecond)
	if err != nil {
		e.Logf(2, "dial %s %s: %v (after %s)", network, addr, err, took)
		return nil, err
	}
	e.Logf(2, "dial %s %s: connected from %s (%s)", network, addr, c.LocalAddr(), took)
	return c, nil
}

// IsTimeout tells a deadline from other failures, so a timeout is reported
// as a timeout and not as some other error.
func IsTimeout(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout() || strings.Contains(fmt.Sprint(err), "Client.Timeout exceeded")
}

// LoopbackOnlyVar names the environment variable that confines every dial
// to loopback. The test command sets it, so a test whose setup misleads a
// check into a production default (169.254.20.10, a public resolver) fails
// with this error instead of sending a packet off the machine.
const LoopbackOnlyVar = "DOCTOR_LOOPBACK_ONLY"

func loopbackOnly(addr string) error {
	if os.Getenv(LoopbackOnlyVar) != "1" {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("dial %s refused: %s=1 allows loopback only", addr, LoopbackOnlyVar)
}
