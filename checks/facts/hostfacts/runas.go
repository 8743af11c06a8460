package hostfacts

import (
	"errors"
	"fmt"
	"path"
	"strconv"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/internal/source/runnerversion"
)

// RunAs is who the runner is, running or not: the live process, or the
// process its systemd unit would start. Files are judged against its uid
// and groups, and paths found through $HOME against its environment.
type RunAs struct {
	Process *Process // nil when no runner process runs
	Unit    *Service // the unit, when one exists
	// UIDKnown is false when neither /proc/<pid>/status nor the unit says
	// the uid: checks that need it are unknown, never a guess.
	UIDKnown bool
	UID, GID int
	Groups   []int
	User     string // from /etc/passwd; "" when the uid has no entry
	// Home is $HOME of the runner's environment, which is what client-go
	// and the runner use; HomeSet is false when the variable is unset (a
	// unit without User= gives none).
	Home    string
	HomeSet bool
	// Cwd is where the runner resolves relative paths: /proc/<pid>/cwd, or
	// for a unit the --working-directory it chdirs to (commands/multi.go,
	// v19.3.0), else WorkingDirectory=, else "/".
	Cwd string
	// Binary is the gitlab-runner executable, for its version.
	Binary string
}

// Running reports whether a live process is being diagnosed.
func (r *RunAs) Running() bool { return r.Process != nil }

// Label names the runner in evidence: "pid 4242 (uid 999 gitlab-runner)",
// or "gitlab-runner.service (not running, runs as root)".
func (r *RunAs) Label() string {
	if r.Process != nil {
		return r.Process.Label()
	}
	if r.Unit != nil && r.Unit.Found() {
		who := "root"
		if r.User != "" && r.UID != 0 {
			who = fmt.Sprintf("uid %d %s", r.UID, r.User)
		}
		return fmt.Sprintf("%s (not running; would run as %s)", r.Unit.Name, who)
	}
	return "the runner (no process and no unit)"
}

// UIDProblem says why the uid is unknown, for a check that needs it.
func (r *RunAs) UIDProblem() string {
	if r.Process != nil {
		return r.Process.UIDProblem()
	}
	return "its uid is unknown"
}

// KubeHome is client-go's RecommendedHomeFile for this runner: $HOME/.kube/config,
// or with HOME unset the relative .kube/config, which the runner opens from
// its working directory (client-go tools/clientcmd/loader.go and
// util/homedir, v0.36.3: HomeDir is os.Getenv("HOME")).
func (r *RunAs) KubeHome() (file, how string) {
	if r.HomeSet && r.Home != "" {
		return path.Join(r.Home, ".kube/config"), "$HOME/.kube/config (HOME=" + r.Home + ")"
	}
	return path.Join(r.Cwd, ".kube/config"), "HOME is unset, so client-go's .kube/config is relative to the runner's working directory " + r.Cwd
}

// RunAsFact puts the process, its unit and its environment together.
var RunAsFact = &checks.Fact[*RunAs]{
	ID:       "run-as",
	Doc:      "who the runner is: its uid, groups, $HOME and working directory, from the live process or from its unit",
	Requires: []checks.Node{RunnerFact, ServiceFact, EnvironFact},
	Compute: func(p *checks.Pass) (*RunAs, error) {
		r, svc, e := RunnerFact.Get(p), ServiceFact.Get(p), EnvironFact.Get(p)
		ra := &RunAs{Unit: svc, UID: -1, GID: -1}
		if e.Err == nil {
			ra.Home, ra.HomeSet = e.Lookup("HOME")
		}
		passwd := ReadPasswd(p.Env)
		switch proc := r.Selected; {
		case proc != nil:
			ra = ProcessRunAs(p.Env, proc, e)
			ra.Unit = svc
		case svc.Found():
			u := svc.Unit
			ra.UIDKnown, ra.UID, ra.GID = true, 0, 0
			if u.User != "" {
				ra.UIDKnown = false
				for uid, ent := range passwd {
					if ent.Name == u.User || strconv.Itoa(uid) == u.User {
						ra.UIDKnown, ra.UID, ra.GID = true, uid, ent.GID
					}
				}
			}
			ra.User = passwd[ra.UID].Name
			ra.Cwd = u.ResolvedWorkingDirectory(ra.Home)
			if wd, ok := u.Flag("working-directory", "d"); ok && wd != "" {
				// os.Chdir(wd) from where systemd started it: a relative
				// --working-directory is under WorkingDirectory= (or /).
				ra.Cwd = AbsIn(ra.Cwd, wd)
			}
			ra.Binary = u.ExecStartPath
		}
		return ra, nil
	},
}

// ProcessRunAs is a live process's identity.
func ProcessRunAs(env *hostio.Env, proc *Process, e *Environ) *RunAs {
	ra := &RunAs{Process: proc, UIDKnown: proc.UIDKnown, UID: proc.UID, GID: proc.GID, Groups: proc.Groups, User: proc.User, Cwd: "/"}
	if e.Err == nil {
		ra.Home, ra.HomeSet = e.Lookup("HOME")
	}
	if cwd, err := env.Readlink("/proc/" + strconv.Itoa(proc.PID) + "/cwd"); err == nil && path.IsAbs(cwd) {
		ra.Cwd = cwd
	} else if wd, ok := FlagValue(proc.Cmdline, "--working-directory", "-d"); ok && path.IsAbs(wd) {
		// The link is the kernel's answer, readable only by the process's
		// uid and root; without it, the directory the runner changed to
		// at start (commands/multi.go, v19.3.0).
		ra.Cwd = wd
	}
	ra.Binary = "/proc/" + strconv.Itoa(proc.PID) + "/exe"
	if len(proc.Cmdline) > 0 && path.IsAbs(proc.Cmdline[0]) {
		ra.Binary = proc.Cmdline[0]
	}
	return ra
}

// Owner is the runner's user as chown takes it: its name, else its uid.
func (r *RunAs) Owner() string {
	if r.User != "" {
		return r.User
	}
	return strconv.Itoa(r.UID)
}

// AbsIn resolves a path the runner was given relative to its working
// directory.
func AbsIn(cwd, p string) string {
	if path.IsAbs(p) || cwd == "" {
		return p
	}
	return path.Join(cwd, p)
}

// Version is the runner's version, read without running it: the binary's
// embedded stamp (internal/source/runnerversion).
type Version struct {
	runnerversion.Version
	Err error // why it is unknown
}

// ErrNoRunnerBinary is the version's error where this host has neither a
// runner process nor its unit: doctor runs apart from the runner.
var ErrNoRunnerBinary = errors.New("no runner binary to read (no process and no unit)")

// VersionFact reads the diagnosed runner's binary.
var VersionFact = &checks.Fact[*Version]{
	ID:       "runner-version",
	Doc:      "the gitlab-runner version, read from its binary's embedded stamp without executing it",
	Requires: []checks.Node{RunAsFact},
	Compute: func(p *checks.Pass) (*Version, error) {
		ra := RunAsFact.Get(p)
		if ra.Binary == "" {
			return &Version{Err: ErrNoRunnerBinary}, nil
		}
		// A bundle keeps the version read, not the binary.
		v, err := hostio.Probe(p.Env, "runner-version", ra.Binary, func() (runnerversion.Version, error) {
			return runnerversion.FromBinary(p.Env.Root, ra.Binary)
		})
		return &Version{Version: v, Err: err}, nil
	},
}
