package facts

import (
	"errors"
	"io/fs"
	"net"
	"strconv"
	"strings"

	"github.com/socialwebcomputer/doctor/checks"
)

// Environ is the runner process's own environment: what client-go sees when
// it loads KUBECONFIG, as opposed to what config.toml gives job containers.
type Environ struct {
	Source string            // "/proc/4242/environ"
	Vars   map[string]string // first value wins, as getenv does
	// Err is set when the file could not be read (another user's process);
	// the environment is then unknown, not empty.
	Err error
}

// Lookup returns a variable and whether it is set.
func (e *Environ) Lookup(k string) (string, bool) {
	v, ok := e.Vars[k]
	return v, ok
}

// RunnerEnviron reads /proc/<pid>/environ of the selected runner.
var RunnerEnviron = &checks.Fact[*Environ]{
	ID:       "environ",
	Doc:      "the environment of the diagnosed runner process",
	Requires: []checks.Node{Runner},
	Compute: func(p *checks.Pass) (*Environ, error) {
		r := Runner.Get(p)
		if r.Selected == nil {
			return &Environ{Err: errNoRunner(r)}, nil
		}
		src := "/proc/" + strconv.Itoa(r.Selected.PID) + "/environ"
		e := &Environ{Source: src, Vars: map[string]string{}}
		b, err := p.Env.ReadProc(src)
		if err != nil {
			e.Err = err
			return e, nil
		}
		e.Vars = ParseEnviron(b)
		return e, nil
	},
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

func errNoRunner(r *Runners) error {
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

// AccessHint is what to do about an unreadable /proc entry: only a
// permission error is cured by running as another user.
func AccessHint(err error) string {
	if errors.Is(err, fs.ErrPermission) {
		return ": run as root or as the runner's user"
	}
	return ""
}
