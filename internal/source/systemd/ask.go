package systemd

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/socialwebcomputer/doctor/internal/hostio"
)

// AskTimeout bounds one `systemctl show`: the manager answers from memory.
const AskTimeout = 5 * time.Second

// showLimit bounds its answer: a unit's properties are a few KiB.
const showLimit = 256 << 10

// systemctl is the program Ask runs, as argv before its own arguments; a
// test runs it in another manager's namespaces.
var systemctl = []string{"systemctl"}

// ProbeKind names Ask's record in a bundle: "systemctl-show UNIT".
const ProbeKind = "systemctl-show"

// Ask asks the running manager what it made of unit: `systemctl show UNIT
// -p ShowProperties` on a live host (hostio.RunTool), recorded in the
// bundle so that doctor analyze answers as the live run did. It returns
// nil, nil where there is no manager to ask: under another --root, and on
// replay of a bundle made without the answer. A manager that cannot be
// asked (no systemctl, systemd not PID 1, no answer in time) is an error:
// the caller keeps the file model and may say why.
func Ask(ctx context.Context, env *hostio.Env, unit string) (*Show, error) {
	if !unitNameValid(unit) {
		return nil, fmt.Errorf("%w: %q", ErrInvalidName, unit)
	}
	if !hostio.ProbeRecorded(env, ProbeKind, unit) || (env.Tape == nil || !env.Tape.Replay) && !env.Live() {
		return nil, nil
	}
	return hostio.Probe(env, ProbeKind, unit, func() (*Show, error) {
		argv := append(slices.Clone(systemctl), "show", "--no-pager", "-p", strings.Join(ShowProperties, ","), "--", unit)
		out, err := hostio.RunTool(ctx, argv, AskTimeout, showLimit)
		if err != nil {
			return nil, err
		}
		return ParseShow(string(out))
	})
}

// UseSystemd makes the manager's answer the unit's: where the files say
// otherwise (a drop-in written without `systemctl daemon-reload`, or
// anything the model gets wrong), systemd is what runs the service, so its
// fragment, drop-ins, Environment=, UnsetEnvironment=, EnvironmentFile=,
// ExecStart=, User= and WorkingDirectory= replace the files'; each
// property it changed is named in Overridden. A setting systemd gives
// keeps the file and line the model found it at when they agree, and
// otherwise names `systemctl show UNIT` as its source. A unit systemd has
// not loaded (not-found while its file exists) keeps the files' answer:
// the caller says that systemd must reload first.
func (u *Unit) UseSystemd(env *hostio.Env, s *Show) {
	u.Systemd = s
	if s == nil || s.LoadState == "not-found" {
		return
	}
	src := Source{Path: "systemctl show " + u.Name}
	note := func(prop string) { u.Overridden = append(u.Overridden, prop) }
	if s.LoadState == "masked" {
		if !u.Masked {
			note("LoadState")
		}
		u.Masked = true
		return
	}
	if s.FragmentPath != "" && s.FragmentPath != u.Path {
		note("FragmentPath")
		u.Path = s.FragmentPath
	}
	if !slices.Equal(s.DropInPaths, u.DropIns) && !(len(s.DropInPaths) == 0 && len(u.DropIns) == 0) {
		note("DropInPaths")
		u.DropIns = s.DropInPaths
	}
	if !slices.Equal(s.Environment, u.EnvironmentList()) && !(len(s.Environment) == 0 && len(u.Environment) == 0) {
		note("Environment")
		var env []Assignment
		for _, kv := range s.Environment {
			name, value, _ := strings.Cut(kv, "=")
			a := Assignment{Name: name, Value: value, Source: src}
			// The last line the files set it with, reset since or not.
			for _, m := range u.everSet {
				if m.Name == name && m.Value == value {
					a.Source = m.Source
				}
			}
			env = append(env, a)
		}
		u.Environment = env
	}
	var unsets []string
	for _, x := range u.UnsetEnvironment {
		unsets = append(unsets, x.Entry())
	}
	if !slices.Equal(s.UnsetEnvironment, unsets) && !(len(s.UnsetEnvironment) == 0 && len(unsets) == 0) {
		note("UnsetEnvironment")
		var list []Unset
		for _, e := range s.UnsetEnvironment {
			name, value, hasValue := strings.Cut(e, "=")
			x := Unset{Name: name, Value: value, HasValue: hasValue, Source: src}
			for _, m := range u.UnsetEnvironment {
				if m.Entry() == e {
					x.Source = m.Source
				}
			}
			list = append(list, x)
		}
		u.UnsetEnvironment = list
	}
	var files []ShowEnvFile
	for _, f := range u.EnvironmentFiles {
		files = append(files, ShowEnvFile{Path: f.Path, Optional: f.Optional})
	}
	if !slices.Equal(s.EnvironmentFiles, files) {
		note("EnvironmentFiles")
		u.EnvironmentFiles = nil
		for _, f := range s.EnvironmentFiles {
			u.EnvironmentFiles = append(u.EnvironmentFiles, EnvFile{Path: f.Path, Optional: f.Optional, Source: src})
		}
		var kept []Problem
		for _, p := range u.Problems {
			if !strings.HasPrefix(p.Message, "EnvironmentFile=") {
				kept = append(kept, p)
			}
		}
		u.Problems = kept
		u.loadEnvironmentFiles(env)
	}
	if s.User != u.User {
		note("User")
		u.User, u.UserSource = s.User, src
	}
	if s.WorkingDirectory != u.AsShow().WorkingDirectory {
		note("WorkingDirectory")
		wd, missingOK := strings.CutPrefix(s.WorkingDirectory, "!")
		u.WorkingDirectory, u.WorkingDirectoryMissingOK = s.WorkingDirectory, missingOK
		u.WorkingDirectoryHome, u.WorkingDirectoryPath = wd == "~", ""
		if wd != "~" {
			u.WorkingDirectoryPath = wd
		}
	}
	var model []ShowExec
	for _, c := range u.Commands {
		model = append(model, ShowExec{Path: c.Path, Argv: strings.Join(c.Argv, " "), IgnoreFailure: c.IgnoreFailure()})
	}
	if !slices.Equal(s.ExecStart, model) && len(s.ExecStart) > 0 {
		// systemctl joins argv with spaces, unquoted: a word with a space
		// in it comes back as two. The files' words are kept where they
		// join to the same line.
		note("ExecStart")
		u.Commands = nil
		for _, c := range s.ExecStart {
			prefix := ""
			if c.IgnoreFailure {
				prefix = "-"
			}
			u.Commands = append(u.Commands, Command{Path: c.Path, Argv: strings.Fields(c.Argv), Prefix: prefix, Source: src})
		}
		u.ExecStart = nil
		u.finishExecStart()
	}
}
