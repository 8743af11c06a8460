// Package systemd reads a system service unit the way systemd (v256) does,
// from files under a root directory: which fragment file wins, which
// drop-ins apply and in what order, the effective ExecStart=, User=,
// WorkingDirectory= and the environment the main process would get from
// Environment= and EnvironmentFile=. doctor uses it when no gitlab-runner
// process runs, to learn what the service would run.
//
// Every read goes through *hostio.Env; symlinks are followed under the
// root, never on the machine running doctor. Nothing in a file is fatal to
// doctor: what systemd would complain about becomes a Problem naming the
// file and line.
//
// The rules are ported from systemd's code, cited beside each one; where
// the man pages and the code differ the code wins.
package systemd

import (
	"strconv"
	"strings"
	"time"
)

// SearchPath is systemd's unit search path for system units, in precedence
// order, as Debian 12's systemd 252 has it (`systemd-analyze unit-paths`;
// lookup_paths_init() in src/basic/path-lookup.c, RUNTIME_SCOPE_SYSTEM,
// built split-usr, so SYSTEM_DATA_UNIT_DIR is /lib/systemd/system and comes
// before /usr/lib/systemd/system). The generator directories are filled by
// the generators when the manager starts, so under a root they hold what
// the host's generators last wrote. On a merged-/usr host /lib is a link to
// usr/lib and the two directories are one: a unit there is found, and
// named, as /lib/systemd/system/NAME (systemctl show's FragmentPath=).
var SearchPath = []string{
	"/etc/systemd/system.control",
	"/run/systemd/system.control",
	"/run/systemd/transient",
	"/run/systemd/generator.early",
	"/etc/systemd/system",
	"/etc/systemd/system.attached",
	"/run/systemd/system",
	"/run/systemd/system.attached",
	"/run/systemd/generator",
	"/usr/local/lib/systemd/system",
	"/lib/systemd/system",
	"/usr/lib/systemd/system",
	"/run/systemd/generator.late",
}

// MainSearchPath is the part of SearchPath an administrator writes units
// and drop-ins to, for messages.
var MainSearchPath = []string{"/etc/systemd/system", "/run/systemd/system", "/lib/systemd/system", "/usr/lib/systemd/system"}

// Source is where a setting came from: a host path and a 1-based line. For
// a setting continued over several lines with a trailing backslash, Line
// is its first line (systemd's own messages name the last).
type Source struct {
	Path string
	Line int
}

// String is "path:line", or just the path when there is no line.
func (s Source) String() string {
	if s.Line <= 0 {
		return s.Path
	}
	return s.Path + ":" + strconv.Itoa(s.Line)
}

// Problem is something systemd would warn about or refuse.
type Problem struct {
	Source  Source
	Message string
	// Fatal is set when systemd would refuse to load the unit (an error in
	// the fragment file, a service without a valid ExecStart=) or the
	// service would fail to start (a missing EnvironmentFile= without
	// "-"). Errors in drop-ins are never fatal: systemd ignores them, but
	// stops reading that drop-in where they occur.
	Fatal bool
	// AtStart says the problem shows when the service starts, not when
	// the unit loads (an EnvironmentFile= is read at start): systemd
	// loads the unit (LoadState=loaded) and fails its start.
	AtStart bool
}

func (p Problem) String() string { return p.Source.String() + ": " + p.Message }

// Assignment is one NAME=value.
type Assignment struct {
	Name, Value string
	Source      Source
}

// EnvFile is one EnvironmentFile= setting.
type EnvFile struct {
	// Path is the path systemd uses: as written without the "-" prefix,
	// with specifiers resolved and the path simplified. It may be a glob
	// pattern (systemd expands it with glob(3)).
	Path     string
	Optional bool         // "-" prefix: a missing or unreadable file is skipped
	Source   Source       // the EnvironmentFile= line
	Matches  []string     // the files read, in order (one, or a glob's matches)
	Vars     []Assignment // valid assignments of all matched files, in order
	// Err is nil, or why the file could not be used. A missing optional
	// file is not an error; any other failure of an optional file is
	// reported here although systemd silently skips that file too.
	Err error
}

// Unset is one UnsetEnvironment= entry: a name, which removes the variable
// whatever its value, or NAME=VALUE, which removes it only with that value
// (strv_env_delete() and env_match() in src/basic/env-util.c, systemd 252).
type Unset struct {
	Name, Value string
	HasValue    bool
	Source      Source
}

// Entry is the entry as written: NAME or NAME=VALUE.
func (x Unset) Entry() string {
	if x.HasValue {
		return x.Name + "=" + x.Value
	}
	return x.Name
}

// Removes says whether the entry removes the variable name=value.
func (x Unset) Removes(name, value string) bool {
	return x.Name == name && (!x.HasValue || x.Value == value)
}

// File is a file the unit's configuration came from.
type File struct {
	Path    string
	ModTime time.Time
}

// Command is one parsed ExecStart= command line.
type Command struct {
	Path   string   // the executable (specifiers resolved, simplified)
	Argv   []string // argv before $VAR expansion; with "@", Argv[0] is the second word
	Prefix string   // the prefix characters before the path: any of - @ : + ! !!
	Source Source
}

// IgnoreFailure is the "-" prefix; NoEnvExpand the ":" prefix.
func (c Command) IgnoreFailure() bool { return strings.Contains(c.Prefix, "-") }
func (c Command) NoEnvExpand() bool   { return strings.Contains(c.Prefix, ":") }

// Unit is a loaded unit.
type Unit struct {
	Name string // "gitlab-runner.service"
	// Path is the fragment's host path as found on SearchPath (a symlink
	// stays as the link's path, as systemd's FragmentPath=); "" when no
	// fragment was found. A fragment that was found but could not be read
	// keeps its Path and has a Fatal Problem.
	Path    string
	Masked  bool     // the fragment is empty or a link to /dev/null
	Aliases []string // other names of the unit (alias symlinks), sorted
	DropIns []string // host paths, in the order systemd applies them
	// Files holds the fragment, then drop-ins, then environment files that
	// exist, each with its modification time (for "newer than the process").
	Files []File

	// Type is the effective Type=: as set, or systemd's default (dbus with
	// BusName=, simple with an ExecStart=, oneshot otherwise).
	Type string

	// ExecStart is the argv of the effective ExecStart= (quotes and
	// escapes removed, specifiers and $VAR resolved, prefixes stripped),
	// nil if none. ExecStartPath is the executable, which differs from
	// ExecStart[0] with the "@" prefix.
	ExecStart       []string
	ExecStartPath   string
	ExecStartSource Source
	// Commands are all ExecStart= commands after resets; more than one is
	// valid only for Type=oneshot, and ExecStart is taken from the first.
	Commands []Command

	User       string
	UserSource Source
	Group      string

	// WorkingDirectory is the setting as written ("-~", "/srv/x", ...);
	// the parsed form is in the three fields below it.
	WorkingDirectory          string
	WorkingDirectoryPath      string // "" for "~" or when unset
	WorkingDirectoryHome      bool   // "~": the user's home
	WorkingDirectoryMissingOK bool   // "-": a missing directory is not an error
	RootDirectory             string // RootDirectory=: paths the process sees are under it

	Environment      []Assignment // Environment= assignments in order, after resets
	EnvironmentFiles []EnvFile    // after resets, in order
	// UnsetEnvironment are the UnsetEnvironment= entries after resets, each
	// once: applied last, to everything else the process would get.
	UnsetEnvironment []Unset
	// EnvironmentResets and UnsetResets are the empty Environment= and
	// UnsetEnvironment= assignments read, in order: each emptied its list
	// as the files applied before it had built it.
	EnvironmentResets, UnsetResets []Source

	WantedBy []string // [Install] WantedBy=, for messages about enabling

	Description string // Description=, as systemd names the unit in its status lines
	Restart     string // Restart= as written, "" when unset (systemd's "no")
	// Conditions are the ConditionFileIsExecutable= settings, after
	// resets: a condition that does not hold skips the start
	// (UnmetCondition).
	Conditions []Condition

	Problems []Problem

	// Systemd is the running manager's answer for the unit (Ask), nil where
	// none was asked; UseSystemd made it the unit's, and Overridden names
	// the properties in which it differed from the files.
	Systemd    *Show
	Overridden []string

	// everSet is every Environment= assignment read, resets or not: where
	// systemd's answer has a variable the files reset since, the line
	// that set it.
	everSet []Assignment
	// everUnset is every UnsetEnvironment= entry read, repeated or reset
	// since or not.
	everUnset []Unset

	typeSet         string // Type= as set
	busName         string // BusName=
	hasExecStop     bool
	remainAfterExit bool
	successAction   bool
}

// Found reports whether a fragment exists (masked or not).
func (u *Unit) Found() bool { return u.Path != "" }

// Environ is the environment systemd gives the main process from the unit:
// Environment= in order (later wins), then the EnvironmentFile= files in
// order, which override Environment= (systemd.exec(5): "Settings from
// these files override settings made with Environment="; exec_child() in
// src/core/execute.c, systemd 252, merges context->environment before the
// files' variables), then UnsetEnvironment= removes what it names
// ("applied last", systemd.exec(5); strv_env_delete(accum_env, 1,
// context->unset_environment) in exec_child()). origin says where each
// variable came from. Variables systemd adds itself (PATH, INVOCATION_ID,
// HOME and USER when User= is set, ...) and PassEnvironment= are not
// included: Unset says whether UnsetEnvironment= removes one of those.
func (u *Unit) Environ() (vars map[string]string, origin map[string]Source) {
	vars, origin = map[string]string{}, map[string]Source{}
	for _, a := range u.Environment {
		vars[a.Name], origin[a.Name] = a.Value, a.Source
	}
	for _, f := range u.EnvironmentFiles {
		for _, a := range f.Vars {
			vars[a.Name], origin[a.Name] = a.Value, a.Source
		}
	}
	for k, v := range vars {
		if _, ok := u.Unset(k, v); ok {
			delete(vars, k)
			delete(origin, k)
		}
	}
	return vars, origin
}

// Assignments are every Environment= assignment of name the files make,
// in the order systemd applies them, whether a later reset undid it or not.
func (u *Unit) Assignments(name string) []Assignment {
	var out []Assignment
	for _, a := range u.everSet {
		if a.Name == name {
			out = append(out, a)
		}
	}
	return out
}

// Unsets are every UnsetEnvironment= entry the files make, in the order
// systemd applies them, repeated or reset since or not: a repeat is not
// added to the list again, but it is still a line that, after a reset,
// would.
func (u *Unit) Unsets() []Unset { return u.everUnset }

// Unset says whether UnsetEnvironment= removes the variable name=value
// from the process's environment, and the entry that does.
func (u *Unit) Unset(name, value string) (Source, bool) {
	for _, x := range u.UnsetEnvironment {
		if x.Removes(name, value) {
			return x.Source, true
		}
	}
	return Source{}, false
}

// EnvironmentList is the Environment= list as the manager keeps it (its
// Environment property): one entry a name, a later assignment replacing
// an earlier one where it stands (strv_env_replace_consume() in
// src/basic/env-util.c, systemd 252).
func (u *Unit) EnvironmentList() []string {
	var out []string
	at := map[string]int{}
	for _, a := range u.Environment {
		if i, ok := at[a.Name]; ok {
			out[i] = a.Name + "=" + a.Value
			continue
		}
		at[a.Name] = len(out)
		out = append(out, a.Name+"="+a.Value)
	}
	return out
}

// Flag reads a flag of ExecStart in the forms urfave/cli (through Go's
// flag package) accepts: --flag v, --flag=v, -flag v, -c v, -c=v. names
// are the flag's names with or without dashes ("config", "c"). The last
// occurrence wins, as repeated string flags do; "--" ends the flags.
func (u *Unit) Flag(names ...string) (string, bool) {
	want := map[string]bool{}
	for _, n := range names {
		want[strings.TrimLeft(n, "-")] = true
	}
	var val string
	found := false
	if len(u.ExecStart) < 2 {
		return "", false
	}
	args := u.ExecStart[1:]
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		if len(a) < 2 || a[0] != '-' {
			continue
		}
		n := a[1:]
		if n[0] == '-' {
			n = n[1:]
		}
		name, v, hasValue := strings.Cut(n, "=")
		if !want[name] {
			continue
		}
		if hasValue {
			val, found = v, true
		} else if i+1 < len(args) {
			val, found = args[i+1], true
			i++
		}
	}
	return val, found
}

// ResolvedWorkingDirectory is the directory the process starts in, given
// the home directory of the unit's user: the home for "~", the path when
// set, and "/" otherwise (exec-invoke.c; systemd.exec(5): "Defaults to the
// root directory when systemd is running as a system instance").
func (u *Unit) ResolvedWorkingDirectory(home string) string {
	switch {
	case u.WorkingDirectoryHome && home != "":
		return home
	case u.WorkingDirectoryHome:
		return "/"
	case u.WorkingDirectoryPath != "":
		return u.WorkingDirectoryPath
	}
	return "/"
}

func (u *Unit) warn(src Source, msg string) {
	u.Problems = append(u.Problems, Problem{Source: src, Message: msg})
}
