package kubefacts

import (
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts/configfacts"
	"github.com/socialwebcomputer/doctor/checks/facts/hostfacts"
	"github.com/socialwebcomputer/doctor/internal/fixcode"
	"github.com/socialwebcomputer/doctor/internal/hostio"
)

// FixScope is what a run's fixes may act on. A fix that changes a file's
// owner or mode, creates a directory or writes a file runs as root in the
// operator's shell; the path it names came from the host, and the host may
// be lying: any local user can start a process named gitlab-runner that
// names root's files as its config and kubeconfig. So a fix acts only on
// paths that are the runner's own by construction, and only for a runner
// someone installed:
//
//   - the runner's config directory (/etc/gitlab-runner, and the directory
//     of the config.toml it runs, for a user's own runner the config.toml
//     it owns), its user's home directory, its unit's
//     drop-in directory: never a system directory itself (/, /etc, /usr,
//     /var, /tmp, /home, /root of another user...), nothing under /proc,
//     /sys, /dev, /boot or /usr;
//   - never a path relative to the operator's directory (facts resolve a
//     runner's relative paths against its working directory first);
//   - nothing at all for a process that runs as neither root nor the user
//     its systemd unit names, and is not the main process of its container
//     (Refused says which).
type FixScope struct {
	// Refused says why no fix acts for this runner's process: it is not a
	// runner anyone installed. "" when fixes may.
	Refused string
	// Roots are the directories whose paths a fix may change.
	Roots []string
	// Binary is the runner's executable a unit names (ExecStart=): a fix
	// may make it executable.
	Binary string

	env *hostio.Env // to see a symbolic link on the way
	uid int         // the runner's uid, -1 when unknown
}

// FixScopeFact is the scope of this run's fixes.
var FixScopeFact = &checks.Fact[*FixScope]{
	ID:       "fix-scope",
	Doc:      "what a fix may act on: the runner's own paths, and whether its process is a runner anyone installed",
	Requires: []checks.Node{hostfacts.RunAsFact, configfacts.ConfigFact, KubeconfigFact, InClusterFact},
	Compute: func(p *checks.Pass) (*FixScope, error) {
		s := fixScope(p.Env, hostfacts.RunAsFact.Get(p), configfacts.ConfigFact.Get(p), KubeconfigFact.Get(p), InClusterFact.Get(p))
		s.env = p.Env
		return s, nil
	},
}

// DefaultConfigDir is where the runner's own files live when it runs as a
// system service (gitlab-runner v19.3.0, commands/config.go: the config
// file of a root runner is /etc/gitlab-runner/config.toml).
const DefaultConfigDir = "/etc/gitlab-runner"

// fixScope gathers the roots from what root or the operator decided: the
// default directory; the files the operator gave doctor (--config,
// --kubeconfig); a root runner's config and kubeconfig directories (root
// started it, with the flags and environment root chose); the unit's
// drop-in directory and its executable; and the home /etc/passwd gives the
// runner's user. A non-root process's own flags and environment are its
// user's to write, so they add no root: its files count only where one of
// the others holds them.
func fixScope(env *hostio.Env, ra *hostfacts.RunAs, cfg *configfacts.ConfigFile, k *Kubeconfig, inc *InCluster) *FixScope {
	refused, personal := refusal(env, ra, cfg, inc)
	s := &FixScope{Refused: refused, uid: -1}
	if s.Refused != "" {
		return s
	}
	if ra != nil && ra.UIDKnown {
		s.uid = ra.UID
	}
	add := func(dir string) {
		dir = path.Clean(dir)
		if path.IsAbs(dir) && !hostio.SystemDir(dir) {
			s.Roots = append(s.Roots, dir)
		}
	}
	if personal {
		// A user's own runner: that user's home, and the directory of the
		// config.toml it owns (where such a runner keeps its files).
		if u, ok := hostfacts.ReadPasswd(env)[ra.UID]; ok && u.Home != "" {
			add(u.Home)
		}
		add(path.Dir(cfg.Path))
		return s
	}
	add(DefaultConfigDir)
	rootRunner := ra != nil && ra.UIDKnown && ra.UID == 0
	if cfg != nil && path.IsAbs(cfg.Path) && (env.ConfigPath != "" || rootRunner) {
		add(path.Dir(cfg.Path))
	}
	if k != nil && (env.KubeconfigPath != "" || rootRunner) {
		for _, f := range k.Files {
			add(path.Dir(f.Path))
		}
	}
	if ra == nil || !ra.UIDKnown {
		return s
	}
	if ra.UID == 0 {
		add("/root/.kube") // root's home is every administrator's; its kubeconfig directory is the runner's
	} else if u, ok := hostfacts.ReadPasswd(env)[ra.UID]; ok && u.Home != "" {
		add(u.Home)
	}
	if ra.Unit != nil && (ra.Unit.Found() || ra.UID == 0) && fixcode.UnitName(ra.Unit.Name) == nil {
		// The unit's drop-in directory: the unit's own, or for a root
		// process the one of the unit it was started as (--service; a
		// drop-in written there is how its environment is given).
		add("/etc/systemd/system/" + ra.Unit.Name + ".d")
	}
	if ra.Unit != nil && ra.Unit.Found() {
		if u := ra.Unit.Unit; u != nil && path.Base(u.ExecStartPath) == "gitlab-runner" && path.IsAbs(u.ExecStartPath) {
			s.Binary = path.Clean(u.ExecStartPath)
		}
	}
	return s
}

// refusal says why fixes may not act for the runner's process (""
// when they may), and whether it is a user's own runner: a process of a
// user other than root and its unit's, started with a config.toml that
// user owns, whose fixes stay in that user's home.
func refusal(env *hostio.Env, ra *hostfacts.RunAs, cfg *configfacts.ConfigFile, inc *InCluster) (string, bool) {
	if ra == nil || ra.Process == nil {
		return "", false // the unit's (a file root wrote), or the operator's --config
	}
	proc := ra.Process
	switch {
	case !proc.UIDKnown:
		return fmt.Sprintf("%s: its uid is unknown, so whose files it names is unknown", proc.Label()), false
	case proc.UID == 0:
		return "", false
	case proc.PID == 1 || (inc != nil && inc.Vars()):
		return "", false // the main process of its own container, or a runner pod's
	}
	unitUser := ""
	if ra.Unit != nil && ra.Unit.Found() && ra.Unit.Unit != nil {
		unitUser = ra.Unit.Unit.User
		if unitUser != "" && (unitUser == proc.User || unitUser == strconv.Itoa(proc.UID)) {
			return "", false
		}
		if unitUser == "" {
			unitUser = "root"
		}
	}
	if cfg != nil && path.IsAbs(cfg.Path) && !hostio.SystemDir(path.Dir(cfg.Path)) {
		if st, err := env.Lstat(cfg.ReadPath()); err == nil && st.Mode().IsRegular() {
			if uid, _ := hostfacts.Ownership(st); uid == proc.UID && unitUser == "" {
				return "", true
			}
		}
	}
	if unitUser != "" {
		return fmt.Sprintf("%s runs gitlab-runner, but %s runs it as %s: a runner nobody installed as a service", proc.Label(), ra.Unit.Name, unitUser), false
	}
	return fmt.Sprintf("%s runs gitlab-runner as neither root nor a systemd unit's user, with a config.toml it does not own (%s): a runner nobody installed",
		proc.Label(), configName(cfg)), false
}

func configName(cfg *configfacts.ConfigFile) string {
	if cfg == nil || cfg.Path == "" {
		return "none found"
	}
	return cfg.Path
}

// Path is nil when a fix may change p (its owner, its mode, create it or
// write it), else why not, in words a fix's sentence can carry.
func (s *FixScope) Path(p string) error {
	if s == nil {
		return fmt.Errorf("doctor does not know whose %s is", p)
	}
	if s.Refused != "" {
		return fmt.Errorf("doctor acts for no runner it cannot vouch for (%s)", s.Refused)
	}
	if !path.IsAbs(p) {
		return fmt.Errorf("%s is relative, and a fix runs in the operator's directory, not the runner's", p)
	}
	clean := path.Clean(p)
	if hostio.SystemDir(clean) || underAny(clean, []string{"/proc", "/sys", "/dev", "/boot", "/usr", "/bin", "/sbin", "/lib", "/lib64"}) && clean != s.Binary {
		return fmt.Errorf("%s is a system path, not one of the runner's own", clean)
	}
	if clean != s.Binary && !underAny(clean, s.Roots) {
		return fmt.Errorf("%s is not in a directory of the runner's own (%s)", clean, strings.Join(s.Roots, ", "))
	}
	// chown and chmod follow a symbolic link: a link the runner's user
	// made in its own directory would hand its target to the fix.
	for q := clean; q != "/"; q = path.Dir(q) {
		if s.env == nil {
			break
		}
		if st, err := s.env.Lstat(q); err == nil && st.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("%s is a symbolic link, which chown and chmod follow to whatever it names", q)
		}
	}
	return nil
}

// ActsFor is nil when a fix may act for the runner's process (add its
// user to a group, give it a file), else why not.
func (s *FixScope) ActsFor() error {
	if s == nil || s.Refused == "" {
		return nil
	}
	return fmt.Errorf("doctor acts for no runner it cannot vouch for (%s)", s.Refused)
}

func underAny(p string, dirs []string) bool {
	for _, d := range dirs {
		if p == d || strings.HasPrefix(p, strings.TrimSuffix(d, "/")+"/") {
			return true
		}
	}
	return false
}

// Change is one path a fix gives to the runner's user (Chown) and sets
// the mode of.
type Change struct {
	Path  string
	Mode  string // "0600"; "" leaves the mode
	Chown bool
}

// ChangeFix is the commands that make each change, as root: chown to the
// runner's user, then chmod. A path that is not the runner's own, or a
// runner doctor cannot vouch for, gets no command: the step says why.
func ChangeFix(scope *FixScope, owner string, changes ...Change) checks.Step {
	var cmds []fixcode.Cmd
	for _, c := range changes {
		if path.IsAbs(c.Path) {
			// The command names the path Path judged: a ".." after a
			// symbolic link would otherwise reach past it.
			c.Path = path.Clean(c.Path)
		}
		if err := scope.Path(c.Path); err != nil && (c.Chown || !narrowing[c.Mode] || !scope.ownedByRunner(c.Path)) {
			return checks.Withheld(err)
		}
		if c.Chown {
			if err := scope.ActsFor(); err != nil {
				return checks.Withheld(err)
			}
			cmds = append(cmds, fixcode.Command("chown", owner, c.Path).Sudo())
		}
		if c.Mode != "" {
			cmds = append(cmds, fixcode.Command("chmod", c.Mode, c.Path).Sudo())
		}
	}
	return checks.Commands(cmds...)
}

// ChangeSteps is the commands that make each change (ChangeFix):
// one block for the changes a fix may make, in order, and in place of each
// it may not (a path not the runner's own, a system directory) the
// sentence ChangeFix gives. For a runner doctor cannot vouch for, one
// sentence. (ChangeFix withholds the whole block for one refused
// path; a directory in the way that is a system one must not hide the
// commands for the runner's own file.)
func ChangeSteps(scope *FixScope, owner string, changes ...Change) checks.Steps {
	if err := scope.ActsFor(); err != nil {
		return checks.Steps{checks.Withheld(err)}
	}
	var out checks.Steps
	var run []Change
	flush := func() {
		if len(run) > 0 {
			out = append(out, ChangeFix(scope, owner, run...))
			run = nil
		}
	}
	for _, c := range changes {
		// The command names the path scope.Path judged: a ".." after a
		// symbolic link would otherwise reach past it.
		if path.IsAbs(c.Path) {
			c.Path = path.Clean(c.Path)
		}
		if st := ChangeFix(scope, owner, c); st.Kind == checks.KindText {
			flush()
			out = append(out, st) // why no command changes it
			continue
		}
		run = append(run, c)
	}
	flush()
	return out
}

// narrowing are the modes ChangeFix may set on a file the runner's user
// owns wherever it is: they take access away, never give it.
var narrowing = map[string]bool{"0600": true, "0700": true, "0400": true, "go-w": true, "go-rwx": true}

// ownedByRunner says whether p is a file or directory (not a link) the
// runner's user owns, outside the system's paths: narrowing its mode is
// what its owner could do, and gives nothing away.
func (s *FixScope) ownedByRunner(p string) bool {
	if s == nil || s.Refused != "" || s.env == nil || s.uid < 0 || !path.IsAbs(p) || hostio.SystemDir(p) {
		return false
	}
	st, err := s.env.Lstat(path.Clean(p))
	if err != nil || st.Mode()&fs.ModeSymlink != 0 {
		return false
	}
	uid, _ := hostfacts.Ownership(st)
	return uid == s.uid
}
