package hostfacts

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"strconv"
	"strings"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/internal/hostio"
)

// Environ is the runner's own environment: what client-go sees when it
// loads KUBECONFIG, as opposed to what config.toml gives job containers. It
// is the running process's /proc/<pid>/environ, or, when none runs, what
// its systemd unit would give it.
type Environ struct {
	Source string            // "/proc/4242/environ", or the unit's path
	Vars   map[string]string // first value wins, as getenv does
	// FromUnit says the values are the unit's, not a live process's;
	// Origin then names the line that set each variable.
	FromUnit bool
	Origin   map[string]string
	// Err is set when the environment is unknown: another user's process,
	// or no process and no unit. It is then unknown, not empty.
	Err error
	// Hint says what to do about Err, "" when nothing doctor can change
	// would help; it starts with ": " to follow Err.
	Hint string
}

// AccessHint is what to do about Err (see Hint).
func (e *Environ) AccessHint() string { return e.Hint }

// Lookup returns a variable and whether it is set.
func (e *Environ) Lookup(k string) (string, bool) {
	v, ok := e.Vars[k]
	return v, ok
}

// Where names the evidence source of one variable: the process's environ,
// or the unit line that sets it.
func (e *Environ) Where(k string) string {
	if o, ok := e.Origin[k]; ok {
		return o
	}
	return e.Source
}

// EnvironFact reads /proc/<pid>/environ of the selected runner, or builds
// the environment its unit gives it.
var EnvironFact = &checks.Fact[*Environ]{
	ID:       "environ",
	Doc:      "the environment of the diagnosed runner process, or of the process its systemd unit would start",
	Requires: []checks.Node{RunnerFact, ServiceFact},
	Compute: func(p *checks.Pass) (*Environ, error) {
		r, svc := RunnerFact.Get(p), ServiceFact.Get(p)
		if r.Selected == nil {
			if svc.Found() {
				return unitEnviron(svc, ReadPasswd(p.Env)), nil
			}
			return &Environ{Err: &noRunnerError{errNoRunner(r).Error() + " and no " + svc.Name + " exists"}}, nil
		}
		src := "/proc/" + strconv.Itoa(r.Selected.PID) + "/environ"
		e := &Environ{Source: src, Vars: map[string]string{}}
		vars, err, derr := ReadEnviron(p.Env, src)
		if err != nil {
			e.Err = err
			// Who doctor runs as is this host's: a bundle keeps the hint, so
			// doctor analyze elsewhere says what the live run said.
			e.Hint, _ = hostio.Probe(p.Env, "environ-access", src, func() (string, error) {
				return environHint(p.Env, err, r.Selected, src), nil
			})
			return e, nil
		}
		if derr != nil {
			e.Err = &hostio.FileError{Path: src, Err: derr}
			return e, nil
		}
		e.Vars = vars
		return e, nil
	},
}

// ReadEnviron reads a /proc/<pid>/environ and decodes it (CheckEnviron,
// ParseEnviron) through hostio.Decode: one that does not decode is
// described in a bundle, never copied. readErr is the read's error,
// decodeErr why the block is no environment.
func ReadEnviron(env *hostio.Env, src string) (vars map[string]string, readErr, decodeErr error) {
	b, err := env.ReadProcAs(src, hostio.KindEnviron)
	if err != nil {
		return nil, err, nil
	}
	if f := hostio.Decode(env, src, func() *hostio.DecodeFailure {
		if err := CheckEnviron(b); err != nil {
			return &hostio.DecodeFailure{Err: err}
		}
		vars = ParseEnviron(b)
		return nil
	}); f != nil {
		return nil, nil, f.Err
	}
	return vars, nil, nil
}

// unitEnviron is what systemd gives the unit's main process: Environment=
// and EnvironmentFile= (the unit's Environ), and, for a unit with User=,
// $USER, $LOGNAME, $HOME and $SHELL from passwd ("The variables are set for
// the units that have User= set", systemd.exec(5)); PATH is systemd's fixed
// value. A unit without User= runs as root with no HOME at all.
func unitEnviron(svc *Service, passwd map[int]PasswdEntry) *Environ {
	u := svc.Unit
	e := &Environ{Source: u.Path, FromUnit: true, Vars: map[string]string{}, Origin: map[string]string{}}
	e.Vars["PATH"] = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin"
	if u.User != "" {
		for _, ent := range passwd {
			if ent.Name == u.User || strconv.Itoa(ent.UID) == u.User {
				e.Vars["HOME"], e.Vars["USER"], e.Vars["LOGNAME"], e.Vars["SHELL"] = ent.Home, ent.Name, ent.Name, ent.Shell
				for _, k := range []string{"HOME", "USER", "LOGNAME", "SHELL"} {
					e.Origin[k] = u.UserSource.String() + " (User=" + u.User + ", from /etc/passwd)"
				}
			}
		}
	}
	vars, origin := u.Environ()
	for k, v := range vars {
		e.Vars[k], e.Origin[k] = v, origin[k].String()
	}
	return e
}

// ParseEnviron splits a NUL-separated environ block. Entries without '=' are
// kept out; the first definition of a name wins, as libc's getenv finds it.
func ParseEnviron(b []byte) map[string]string {
	vars := map[string]string{}
	for _, kv := range splitNUL(b) {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			continue
		}
		if _, dup := vars[k]; !dup {
			vars[k] = v
		}
	}
	return vars
}

type noRunnerError struct{ msg string }

func (e *noRunnerError) Error() string { return e.msg }

func errNoRunner(r *Runner) error {
	if r.Problem != "" {
		return &noRunnerError{r.Problem}
	}
	return &noRunnerError{"no `gitlab-runner run` process found"}
}

// InCluster reports whether client-go's InClusterConfig would succeed for
// this environment as far as the environment decides it: it needs both
// KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT (and the service
// account token, which lives in the process's own mount namespace).
func (e *Environ) InCluster() (hostPort string, ok bool) {
	h, hok := e.Lookup("KUBERNETES_SERVICE_HOST")
	p, pok := e.Lookup("KUBERNETES_SERVICE_PORT")
	if !hok || !pok || h == "" || p == "" {
		return "", false
	}
	return net.JoinHostPort(h, p), true
}

// environHint is what to do about an unreadable environ: only a permission
// error is cured by running as another user. The kernel lets the process's
// own uid and root (CAP_SYS_PTRACE) read it (proc(5), /proc/pid/environ:
// "ptrace access mode PTRACE_MODE_READ_FSCREDS"), so on a live host the
// hint names doctor's uid, the runner's, and the command to run instead.
func environHint(env *hostio.Env, err error, proc *Process, src string) string {
	if !errors.Is(err, fs.ErrPermission) {
		return ""
	}
	if env.Root != "" && env.Root != "/" {
		return ": run as root or as the runner's user"
	}
	self := os.Geteuid()
	if self == 0 {
		return fmt.Sprintf(": doctor runs as root and the kernel still refuses %s (a container without CAP_SYS_PTRACE, or a process of another PID namespace): run doctor on the runner's host, beside it", src)
	}
	runner := "the runner's uid"
	as := "sudo -u <the runner's user> doctor run"
	if proc != nil && proc.UIDKnown {
		runner = "the runner's uid " + strconv.Itoa(proc.UID)
		as = fmt.Sprintf("sudo -u '#%d' doctor run", proc.UID)
	}
	return fmt.Sprintf(": doctor runs as uid %d, and only root or %s may read %s; run `sudo doctor run` with the same flags instead (or as the runner's user: `%s`)", self, runner, src, as)
}

// PermissionHint is what to do about a /proc file doctor may not read.
func PermissionHint(err error) string {
	if errors.Is(err, fs.ErrPermission) {
		return ": run as root or as the runner's user"
	}
	return ""
}
