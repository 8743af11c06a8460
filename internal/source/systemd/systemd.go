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
// order. systemd's full list (src/basic/path-lookup.c, lookup_paths_init(),
// RUNTIME_SCOPE_SYSTEM) also has the control, transient, generator and
// attached directories and /usr/local/lib/systemd/system; those rarely hold
// a gitlab-runner unit and are left out. /lib/systemd/system is systemd's
// split-usr entry and, on merged-usr hosts, resolves to /usr/lib.
var SearchPath = []string{"/etc/systemd/system", "/run/systemd/system", "/usr/lib/systemd/system", "/lib/systemd/system"}

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

	WantedBy []string // [Install] WantedBy=, for messages about enabling

	Description string // Description=, as systemd names the unit in its status lines
	Restart     string // Restart= as written, "" when unset (systemd's "no")
	// Conditions are the ConditionFileIsExecutable= settings, after
	// resets: a condition that does not hold skips the start
	// (UnmetCondition).
	Conditions []Condition

	Problems []Problem

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
// these files override settings made with Environment="; exec-invoke.c
// merges context->environment before the files' variables). origin says
// where each variable came from. Variables systemd adds itself (PATH,
// INVOCATION_ID, HOME and USER when User= is set, ...) and
// PassEnvironment= are not included.
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
	return vars, origin
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
