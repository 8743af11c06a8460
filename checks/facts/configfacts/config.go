package configfacts

import (
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/client/kube/keep"
	"github.com/socialwebcomputer/doctor/checks/facts/hostfacts"
	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/internal/redact"
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
	// Unknown says Unlocated is for want of a fact (the runner's uid, its
	// command line), not for want of a runner: config-decode is then
	// unknown, not skipped.
	Unknown bool
	// ReadFrom is where doctor read it when that is not Path: through
	// /proc/<pid>/root, the runner's container seen from beside it.
	ReadFrom  string
	Data      []byte
	ReadErr   error
	Config    *runnerconfig.Config
	Meta      toml.MetaData
	DecodeErr error
	// DecodeLine is the line DecodeErr names (0 when it names none), and
	// DecodeLineText that line as evidence shows it (LineText): a bundle
	// keeps these, not the text of a file that does not decode.
	DecodeLine     int
	DecodeLineText string
	// Duplicates are the settings spelt twice in different case, found
	// once here for the decode and for config-unknown-keys.
	Duplicates []runnerconfig.Duplicate
	// Files reads config.toml and the files it names (certificates, keys,
	// a plugin's kubeconfig) as the runner reads them; as doctor when the
	// operator named config.toml (--config).
	Files hostfacts.RunnerReader
}

// ReadPath is where doctor reads the file: ReadFrom, else Path.
func (c *ConfigFile) ReadPath() string { return orPath(c.ReadFrom, c.Path) }

// Decoded reports whether the runner would start with this file.
func (c *ConfigFile) Decoded() bool { return c.Config != nil && c.ReadErr == nil && c.DecodeErr == nil }

// ConfigFact locates config.toml in the runner's own order and decodes it with
// the runner's TOML library into types that mirror its own.
var ConfigFact = &checks.Fact[*ConfigFile]{
	ID:       "config",
	Doc:      "config.toml, located as the runner (or its unit) would and decoded as it does",
	Requires: []checks.Node{hostfacts.RunAsFact, hostfacts.EnvironFact},
	Compute: func(p *checks.Pass) (*ConfigFile, error) {
		c := locateConfig(p.Env, hostfacts.RunAsFact.Get(p), hostfacts.EnvironFact.Get(p))
		c.Files = hostfacts.RunnerReader{Env: p.Env, RA: hostfacts.RunAsFact.Get(p)}
		if p.Env.ConfigPath != "" {
			c.Files.RA = nil // the operator's file, read as doctor
		}
		if c.Path == "" {
			return c, nil
		}
		ra := hostfacts.RunAsFact.Get(p)
		if at := RunnerPath(p.Env, ra.Process, c.Path); at != c.Path {
			c.ReadFrom = at
			c.How += "; read through " + at + podMount(p.Env, ra.Process, c.Path)
		}
		c.Data, c.ReadErr = c.Files.Read(c.ReadPath(), hostio.KindConfigTOML)
		if c.ReadErr != nil {
			return c, nil
		}
		if f := hostio.Decode(p.Env, c.ReadPath(), c.decode); f != nil {
			c.DecodeErr, c.DecodeLine, c.DecodeLineText = f.Err, f.Line, f.Text
		}
		if c.Decoded() {
			// The nodes' labels a runner's node_selector names are read by
			// value (node-arch, helper-image): the cut keeps those values.
			for _, r := range c.Config.Runners {
				if r != nil && r.Kubernetes != nil {
					for k := range r.Kubernetes.NodeSelector {
						keep.ReadLabelKeys(k)
					}
				}
			}
		}
		return c, nil
	},
}

// decode decodes Data as the runner does; a failure says where, as
// evidence shows that line.
func (c *ConfigFile) decode() *hostio.DecodeFailure {
	c.Duplicates = runnerconfig.CaseDuplicates(c.Data)
	cfg, md, err := decode(c.Data, c.Duplicates)
	if err == nil {
		c.Config, c.Meta = cfg, md
		return nil
	}
	// The message can quote the value it choked on: a token, pasted under
	// the wrong key.
	err = redact.QuotesDescribed(err)
	line := decodeErrLine(err)
	return &hostio.DecodeFailure{Err: err, Line: line, Text: c.LineText(line)}
}

// decodeErrLine is the line a decode error names: a toml.ParseError's
// position, else the "toml: line N" prefix of the few errors that are not
// ParseErrors; 0 when it names none.
func decodeErrLine(err error) int {
	var pe toml.ParseError
	if errors.As(err, &pe) && pe.Position.Line > 0 {
		return pe.Position.Line
	}
	var n int
	if _, e := fmt.Sscanf(err.Error(), "toml: line %d", &n); e == nil && n > 0 {
		return n
	}
	return 0
}

// DefaultRootConfig is where a runner running as root looks
// (commands/config_unix.go, gitlab-runner v19.3.0: ROOTCONFIGDIR).
const DefaultRootConfig = "/etc/gitlab-runner/config.toml"

// locateConfig follows the runner: `run`'s --config/-c flag, then
// CONFIG_FILE (the flag's environment variable), then
// getDefaultConfigDirectory (commands/config_unix.go, v19.3.0): uid 0 gives
// /etc/gitlab-runner; any other uid $HOME/.gitlab-runner, else the passwd
// home (os.UserHomeDir, then user.Current), else the working directory.
// The flags are the live process's, or its unit's ExecStart.
func locateConfig(env *hostio.Env, ra *hostfacts.RunAs, e *hostfacts.Environ) *ConfigFile {
	if env.ConfigPath != "" {
		return &ConfigFile{Path: env.ConfigPath, How: "--config given to doctor"}
	}
	var flag func(names ...string) (string, bool)
	where := ""
	switch {
	case ra.Process != nil && ra.Process.CmdlineErr != nil:
		// --config outranks CONFIG_FILE and the default: with the command
		// line unknown, any of them would be a guess.
		return &ConfigFile{Unknown: true, Unlocated: fmt.Sprintf("pid %d is gitlab-runner by its comm, but its command line "+
			"cannot be read (%v), so its --config is unknown; give --config", ra.Process.PID, ra.Process.CmdlineErr)}
	case ra.Process != nil:
		flag = func(names ...string) (string, bool) { return hostfacts.FlagValue(ra.Process.Cmdline, names...) }
		where = "the runner's command line"
	case ra.Unit != nil && ra.Unit.Found():
		flag = ra.Unit.Unit.Flag
		where = "ExecStart of " + ra.Unit.Unit.ExecStartSource.String()
	default:
		// Neither a process nor a unit says: the runner's default as root
		// is all there is to go on.
		if _, err := env.Stat(DefaultRootConfig); err == nil {
			return &ConfigFile{Path: DefaultRootConfig, How: "the runner's default as root (no runner process runs and no unit exists)"}
		}
		return &ConfigFile{Unlocated: "no `gitlab-runner run` process runs, no gitlab-runner.service exists and " +
			DefaultRootConfig + " does not exist; give --config"}
	}
	if v, ok := flag("--config", "-c"); ok {
		return &ConfigFile{Path: hostfacts.AbsIn(ra.Cwd, v), How: "--config in " + where}
	}
	if e.Err == nil {
		if v, ok := e.Lookup("CONFIG_FILE"); ok && v != "" {
			return &ConfigFile{Path: hostfacts.AbsIn(ra.Cwd, v), How: "CONFIG_FILE in " + e.Where("CONFIG_FILE")}
		}
	}
	if !ra.UIDKnown {
		return &ConfigFile{Unknown: true, Unlocated: ra.Label() + ": " + ra.UIDProblem() + ", so its default config.toml cannot be told; give --config"}
	}
	if ra.UID == 0 {
		return &ConfigFile{Path: DefaultRootConfig, How: "the default for a runner running as root"}
	}
	if ra.HomeSet && ra.Home != "" {
		return &ConfigFile{Path: path.Join(ra.Home, ".gitlab-runner/config.toml"), How: "the default for uid " + strconv.Itoa(ra.UID) + ": $HOME/.gitlab-runner"}
	}
	if ra.User != "" {
		if home := hostfacts.ReadPasswd(env)[ra.UID].Home; home != "" {
			return &ConfigFile{Path: path.Join(home, ".gitlab-runner/config.toml"),
				How: "the default for " + ra.User + " with HOME unset: its /etc/passwd home/.gitlab-runner"}
		}
	}
	return &ConfigFile{Path: path.Join(ra.Cwd, "config.toml"), How: "the default with no home directory: the working directory"}
}

// LocateConfigFor locates the config.toml of any runner process (not only
// the diagnosed one), for comparing several; "" when it cannot be located.
func LocateConfigFor(env *hostio.Env, proc *hostfacts.Process) string {
	e := &hostfacts.Environ{Vars: map[string]string{}, Source: "/proc/" + strconv.Itoa(proc.PID) + "/environ"}
	vars, err, derr := hostfacts.ReadEnviron(env, e.Source)
	if err == nil {
		err = derr
	}
	if err == nil {
		e.Vars = vars
	} else {
		e.Err = err
	}
	ra := hostfacts.ProcessRunAs(env, proc, e)
	return locateConfig(env, ra, e).Path
}

// At names a key's line for evidence: ("/etc/gitlab-runner/config.toml:9",
// the line as LineText describes it).
func (c *ConfigFile) At(key toml.Key) (source, text string) {
	n := runnerconfig.Locate(c.Data, key)
	if n == 0 {
		return c.Path, ""
	}
	return fmt.Sprintf("%s:%d", c.Path, n), c.LineText(n)
}

// LineText is line n (1-based) of the file as evidence shows it: its key
// and a description of its value, never the text as written (see
// describeLine); "" when out of range.
func (c *ConfigFile) LineText(n int) string {
	lines := strings.Split(string(c.Data), "\n")
	if n < 1 || n > len(lines) {
		return ""
	}
	t := describeLine(lines, n)
	if r := []rune(t); len(r) > 200 {
		t = string(r[:200]) + "…"
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
	return RefOf(i, r).String()
}

// decode decodes as the runner does, but with one spelling of a setting
// spelt twice in different case (Executor beside executor): the runner
// keeps whichever its decoder visits last in Go's randomised map order, so
// its choice differs between starts, and doctor must not differ between
// runs. It diagnoses the runner's own spelling; config-unknown-keys reports
// both lines. When blanking changes what decodes, the text as written is
// decoded instead.
func decode(data []byte, dups []runnerconfig.Duplicate) (*runnerconfig.Config, toml.MetaData, error) {
	if one := oneSpelling(data, dups); one != nil {
		if cfg, md, err := runnerconfig.Decode(one); err == nil {
			return cfg, md, nil
		}
	}
	return runnerconfig.Decode(data)
}

// oneSpelling blanks the lines of the other spellings of each case
// duplicate whose runner's spelling is present, keeping line numbers; nil
// when there is nothing to blank.
func oneSpelling(data []byte, dups []runnerconfig.Duplicate) []byte {
	if len(dups) == 0 {
		return nil
	}
	lines := strings.Split(string(data), "\n")
	keyOf := func(n int) (string, bool) {
		if n < 1 || n > len(lines) {
			return "", false
		}
		t := strings.TrimSpace(lines[n-1])
		k, _, ok := strings.Cut(t, "=")
		if !ok || strings.HasPrefix(t, "[") {
			return "", false // a table header: leave it
		}
		k = strings.TrimSpace(k)
		if i := strings.LastIndexByte(k, '.'); i >= 0 {
			k = strings.TrimSpace(k[i+1:])
		}
		return strings.Trim(k, `"'`), true
	}
	changed := false
	for _, d := range dups {
		want := d.Key[len(d.Key)-1]
		exact := false
		for _, n := range d.Lines {
			if k, ok := keyOf(n); ok && k == want {
				exact = true
			}
		}
		if !exact {
			continue
		}
		for _, n := range d.Lines {
			if k, ok := keyOf(n); ok && k != want {
				lines[n-1], changed = "", true
			}
		}
	}
	if !changed {
		return nil
	}
	return []byte(strings.Join(lines, "\n"))
}
