package facts

import (
	"fmt"
	"os"
	"path"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/runnerconfig"
)

// ConfigFile is config.toml as the runner finds and decodes it. It records
// every failure instead of returning it: a missing or undecodable file is the
// diagnosis of config-decode, not a reason to skip it.
type ConfigFile struct {
	Path string // the host path; "" when it could not be located
	How  string // how it was located, for evidence
	// Unlocated says why no path could be found (no runner and no --config).
	Unlocated string
	Data      []byte
	ReadErr   error
	Config    *runnerconfig.Config
	Meta      toml.MetaData
	DecodeErr error
}

// Decoded reports whether the runner would start with this file.
func (c *ConfigFile) Decoded() bool { return c.Config != nil && c.ReadErr == nil && c.DecodeErr == nil }

// Config locates config.toml in the runner's own order and decodes it with
// the runner's TOML library into types that mirror its own.
var Config = &checks.Fact[*ConfigFile]{
	ID:       "config",
	Doc:      "config.toml, located as the runner does and decoded as it does",
	Requires: []checks.Node{Runner, RunnerEnviron},
	Compute: func(p *checks.Pass) (*ConfigFile, error) {
		c := locateConfig(p.Env, Runner.Get(p), RunnerEnviron.Get(p))
		if c.Path == "" {
			return c, nil
		}
		c.Data, c.ReadErr = p.Env.ReadFile(c.Path)
		if c.ReadErr != nil {
			return c, nil
		}
		c.Config, c.Meta, c.DecodeErr = runnerconfig.Decode(c.Data)
		return c, nil
	},
}

// locateConfig follows the runner: the run command's --config/-c flag, then
// CONFIG_FILE (the flag's environment variable), then the default for the
// process user: /etc/gitlab-runner/config.toml for root, else
// ~/.gitlab-runner/config.toml.
func locateConfig(env *checks.Env, r *Runners, e *Environ) *ConfigFile {
	if env.ConfigPath != "" {
		return &ConfigFile{Path: env.ConfigPath, How: "--config given to doctor"}
	}
	proc := r.Selected
	if proc == nil {
		return &ConfigFile{Unlocated: errNoRunner(r).Error() + ", and no --config was given"}
	}
	if v, ok := FlagValue(proc.Cmdline, "--config", "-c"); ok {
		return &ConfigFile{Path: absFrom(env, proc, v), How: "--config in the runner's command line"}
	}
	if v, ok := e.Lookup("CONFIG_FILE"); ok && v != "" {
		return &ConfigFile{Path: absFrom(env, proc, v), How: "CONFIG_FILE in " + e.Source}
	}
	if proc.UID == 0 {
		return &ConfigFile{Path: "/etc/gitlab-runner/config.toml", How: "the default for a runner running as root"}
	}
	if proc.Home == "" {
		return &ConfigFile{Unlocated: "the runner runs as uid " + strconv.Itoa(proc.UID) +
			", which has no /etc/passwd entry, so its ~/.gitlab-runner/config.toml cannot be found; give --config"}
	}
	return &ConfigFile{Path: path.Join(proc.Home, ".gitlab-runner/config.toml"),
		How: "the default for a runner running as " + proc.User}
}

// FlagValue finds a flag's value in a command line, in the forms urfave/cli
// accepts: --flag v, --flag=v, -c v, -c=v.
func FlagValue(args []string, names ...string) (string, bool) {
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		for _, n := range names {
			if a == n && i+1 < len(args) {
				return args[i+1], true
			}
			if strings.HasPrefix(a, n+"=") {
				return strings.TrimPrefix(a, n+"="), true
			}
		}
	}
	return "", false
}

// absFrom resolves a path the runner was given relative to its working
// directory, read from /proc/<pid>/cwd.
func absFrom(env *checks.Env, proc *Process, p string) string {
	if path.IsAbs(p) {
		return p
	}
	cwd, err := os.Readlink(env.Path("/proc/" + strconv.Itoa(proc.PID) + "/cwd"))
	if err != nil || !path.IsAbs(cwd) {
		return p
	}
	return path.Join(cwd, p)
}

// LocateConfigFor locates the config.toml of any runner process (not only
// the diagnosed one), for comparing several; "" when it cannot be located.
func LocateConfigFor(env *checks.Env, proc *Process) string {
	e := &Environ{Vars: map[string]string{}, Source: "/proc/" + strconv.Itoa(proc.PID) + "/environ"}
	if b, err := env.ReadProc(e.Source); err == nil {
		e.Vars = ParseEnviron(b)
	}
	return locateConfig(env, &Runners{All: []*Process{proc}, Selected: proc}, e).Path
}

// At names a key's line for evidence: ("/etc/gitlab-runner/config.toml:9",
// the line's text). The text is the file's own; Report redacts a token.
func (c *ConfigFile) At(key toml.Key) (source, text string) {
	n := runnerconfig.Locate(c.Data, key)
	if n == 0 {
		return c.Path, ""
	}
	return fmt.Sprintf("%s:%d", c.Path, n), c.LineText(n)
}

// LineText is line n (1-based) of the file, trimmed; "" when out of range.
func (c *ConfigFile) LineText(n int) string {
	lines := strings.Split(string(c.Data), "\n")
	if n < 1 || n > len(lines) {
		return ""
	}
	t := strings.TrimSpace(lines[n-1])
	if len(t) > 200 {
		t = t[:200] + "…"
	}
	return t
}

// RunnerKey is the dotted key of a setting of a [[runners]] element. Locate
// finds a key's first definition, which is the element's own in the usual
// one-runner file.
func RunnerKey(parts ...string) toml.Key {
	return append(toml.Key{"runners"}, parts...)
}

// RunnerLabel names a [[runners]] element in findings.
func RunnerLabel(i int, r *runnerconfig.Runner) string {
	if r.Name != "" {
		return fmt.Sprintf("[[runners]] %q", r.Name)
	}
	return fmt.Sprintf("[[runners]] #%d", i+1)
}
