package systemd

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Show is what the running manager says of a unit (`systemctl show UNIT
// -p ...`): the unit as systemd loaded it, which the file model in this
// package reproduces where no manager can be asked (under --root, from a
// bundle made without it).
type Show struct {
	// LoadState is "loaded", "not-found", "masked", "bad-setting", "error".
	LoadState        string
	FragmentPath     string
	DropInPaths      []string
	Environment      []string // Environment= after resets, "NAME=value", a name once (its last value, at its first place)
	UnsetEnvironment []string // UnsetEnvironment= after resets, "NAME" or "NAME=value", each once
	EnvironmentFiles []ShowEnvFile
	ExecStart        []ShowExec
	User             string
	// WorkingDirectory is as the D-Bus property gives it: "~" for the
	// user's home, a "!" before it for "-" (missing is no error), "" unset.
	WorkingDirectory string

	ActiveState, SubState, Result string
	ExecMainStatus                int
	MainPID                       int
	UnitFileState                 string // "enabled", "disabled", "static", "masked", "" ...
	// NeedDaemonReload says a file of the unit changed on disk after the
	// manager loaded it: what it shows is not what the files say.
	NeedDaemonReload bool
}

// ShowEnvFile is one EnvironmentFiles= line: "PATH (ignore_errors=yes)".
type ShowEnvFile struct {
	Path     string
	Optional bool
}

// ShowExec is one command of ExecStart=: its path and its argv as systemctl
// prints it, the words joined by single spaces without quoting (so a word
// holding a space cannot be told from two; bus_print_property() in
// src/shared/bus-print-properties.c and print_property() in
// src/systemctl/systemctl-show.c, systemd 252, strv_join(argv, " ")).
type ShowExec struct {
	Path          string
	Argv          string
	IgnoreFailure bool
}

// ShowProperties are the properties doctor asks for, in one call.
var ShowProperties = []string{
	"LoadState", "FragmentPath", "DropInPaths", "Environment", "UnsetEnvironment", "EnvironmentFiles",
	"ExecStart", "User", "WorkingDirectory", "ActiveState", "SubState", "Result", "ExecMainStatus",
	"MainPID", "UnitFileState", "NeedDaemonReload",
}

// ParseShow reads `systemctl show -p ...` output: one NAME=value a line,
// EnvironmentFiles= and ExecStart= once for each item. A property it does
// not know is ignored; one that does not parse is an error.
func ParseShow(out string) (*Show, error) {
	s := &Show{}
	seen := map[string]bool{}
	for _, line := range strings.Split(out, "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		seen[k] = true
		var err error
		switch k {
		case "LoadState":
			s.LoadState = v
		case "FragmentPath":
			s.FragmentPath = v
		case "DropInPaths":
			s.DropInPaths, err = SplitShowList(v)
		case "Environment":
			s.Environment, err = SplitShowList(v)
		case "UnsetEnvironment":
			s.UnsetEnvironment, err = SplitShowList(v)
		case "EnvironmentFiles":
			if v == "" {
				break
			}
			var f ShowEnvFile
			f, err = parseShowEnvFile(v)
			s.EnvironmentFiles = append(s.EnvironmentFiles, f)
		case "ExecStart":
			if v == "" {
				break
			}
			var c ShowExec
			c, err = parseShowExec(v)
			s.ExecStart = append(s.ExecStart, c)
		case "User":
			s.User = v
		case "WorkingDirectory":
			s.WorkingDirectory = v
		case "ActiveState":
			s.ActiveState = v
		case "SubState":
			s.SubState = v
		case "Result":
			s.Result = v
		case "ExecMainStatus":
			s.ExecMainStatus, err = strconv.Atoi(v)
		case "MainPID":
			s.MainPID, err = strconv.Atoi(v)
		case "UnitFileState":
			s.UnitFileState = v
		case "NeedDaemonReload":
			s.NeedDaemonReload = v == "yes"
		}
		if err != nil {
			return nil, fmt.Errorf("systemctl show: %s=: %v", k, err)
		}
	}
	if !seen["LoadState"] {
		return nil, errors.New("systemctl show: no LoadState= in its answer")
	}
	return s, nil
}

// SplitShowList splits a list property as systemctl prints it: words
// separated by one space, each written by shell_maybe_quote(s, 0)
// (src/basic/escape.c, systemd 252): bare when it holds no control
// character, space, byte ≥ 127 nor any of "\`$*?['()<>|&;!, else in
// double quotes with \n and \t for newline and tab and a backslash before
// each of "\`$ (strcpy_backslash_escaped).
func SplitShowList(v string) ([]string, error) {
	var out []string
	for i := 0; i < len(v); {
		if v[i] == ' ' {
			i++
			continue
		}
		if v[i] != '"' {
			j := strings.IndexByte(v[i:], ' ')
			if j < 0 {
				j = len(v) - i
			}
			out = append(out, v[i:i+j])
			i += j
			continue
		}
		var b strings.Builder
		i++
		closed := false
		for i < len(v) && !closed {
			c := v[i]
			switch {
			case c == '"':
				closed = true
				i++
			case c == '\\' && i+1 < len(v):
				switch n := v[i+1]; n {
				case 'n':
					b.WriteByte('\n')
				case 't':
					b.WriteByte('\t')
				case '"', '\\', '`', '$':
					b.WriteByte(n)
				default:
					return nil, fmt.Errorf("unexpected escape \\%c", n)
				}
				i += 2
			default:
				b.WriteByte(c)
				i++
			}
		}
		if !closed {
			return nil, errors.New("unterminated quote")
		}
		if i < len(v) && v[i] != ' ' {
			return nil, errors.New("a quoted word runs into the next")
		}
		out = append(out, b.String())
	}
	return out, nil
}

func parseShowEnvFile(v string) (ShowEnvFile, error) {
	// src/systemctl/systemctl-show.c, systemd 252: printf("%s=%s (ignore_errors=%s)\n", name, path, yes_no(ignore)).
	for _, suffix := range []struct {
		s        string
		optional bool
	}{{" (ignore_errors=yes)", true}, {" (ignore_errors=no)", false}} {
		if p, ok := strings.CutSuffix(v, suffix.s); ok {
			return ShowEnvFile{Path: p, Optional: suffix.optional}, nil
		}
	}
	return ShowEnvFile{}, fmt.Errorf("not PATH (ignore_errors=yes|no): %q", v)
}

func parseShowExec(v string) (ShowExec, error) {
	// src/systemctl/systemctl-show.c, systemd 252, print_property() for "a(sasbttttuii)":
	// "%s={ path=%s ; argv[]=%s ; ignore_errors=%s ; start_time=[%s] ; stop_time=[%s] ; pid="PID_FMT" ; code=%s ; status=%i%s%s }".
	inner, ok := strings.CutPrefix(v, "{ path=")
	if !ok {
		return ShowExec{}, fmt.Errorf("not { path=... }: %q", v)
	}
	p, rest, ok := strings.Cut(inner, " ; argv[]=")
	if !ok {
		return ShowExec{}, fmt.Errorf("no argv[]= in %q", v)
	}
	i := strings.LastIndex(rest, " ; ignore_errors=")
	if i < 0 {
		return ShowExec{}, fmt.Errorf("no ignore_errors= in %q", v)
	}
	return ShowExec{Path: p, Argv: rest[:i], IgnoreFailure: strings.HasPrefix(rest[i:], " ; ignore_errors=yes")}, nil
}

// AsShow is the model's answer in Show's terms, for the properties the
// file model knows: what `systemctl show` would print for this unit.
func (u *Unit) AsShow() *Show {
	s := &Show{LoadState: "loaded", FragmentPath: u.Path, User: u.User}
	switch {
	case !u.Found():
		return &Show{LoadState: "not-found"}
	case u.Masked:
		s.LoadState = "masked"
		return s
	}
	for _, p := range u.Problems {
		if p.Fatal && !p.AtStart {
			s.LoadState = "bad-setting"
		}
	}
	s.DropInPaths = u.DropIns
	s.Environment = u.EnvironmentList()
	for _, x := range u.UnsetEnvironment {
		s.UnsetEnvironment = append(s.UnsetEnvironment, x.Entry())
	}
	for _, f := range u.EnvironmentFiles {
		s.EnvironmentFiles = append(s.EnvironmentFiles, ShowEnvFile{Path: f.Path, Optional: f.Optional})
	}
	for _, c := range u.Commands {
		s.ExecStart = append(s.ExecStart, ShowExec{Path: c.Path, Argv: strings.Join(c.Argv, " "), IgnoreFailure: c.IgnoreFailure()})
	}
	// property_get_working_directory() (src/core/dbus-execute.c, systemd 252):
	// "~" for the home, "!" before a path whose absence is no error.
	switch {
	case u.WorkingDirectoryHome:
		s.WorkingDirectory = "~"
	default:
		s.WorkingDirectory = u.WorkingDirectoryPath
	}
	if u.WorkingDirectoryMissingOK && s.WorkingDirectory != "" {
		s.WorkingDirectory = "!" + s.WorkingDirectory
	}
	return s
}

// Redacted is the answer as a bundle keeps it: each Environment= and
// UnsetEnvironment= value only where keep says a check reads its variable,
// else standIn(value) (the same stand-in a unit file's copy gets, so the
// two still compare); ExecStart='s words through text, the pattern net a
// unit file's ExecStart= line gets.
func (s *Show) Redacted(keep func(name string) bool, standIn, text func(string) string) *Show {
	c := *s
	value := func(kv string) string {
		name, v, ok := strings.Cut(kv, "=")
		if !ok {
			return kv
		}
		if keep(name) {
			return name + "=" + text(v)
		}
		return name + "=" + standIn(v)
	}
	c.Environment, c.UnsetEnvironment, c.ExecStart = nil, nil, nil
	for _, kv := range s.Environment {
		c.Environment = append(c.Environment, value(kv))
	}
	for _, kv := range s.UnsetEnvironment {
		c.UnsetEnvironment = append(c.UnsetEnvironment, value(kv))
	}
	for _, e := range s.ExecStart {
		e.Argv = text(e.Argv)
		c.ExecStart = append(c.ExecStart, e)
	}
	return &c
}
