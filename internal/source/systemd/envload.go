package systemd

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/socialwebcomputer/doctor/internal/hostio"
)

// maxGlobMatches bounds what one EnvironmentFile= glob may expand to, so a
// hostile pattern over a big directory stays cheap.
const maxGlobMatches = 256

// loadEnvironmentFiles reads the EnvironmentFile= files as
// exec_context_load_environment() (src/core/execute.c) does when the
// service starts: each path is a glob(3) pattern, every match is read in
// order, and with the "-" prefix any failure skips the file; without it,
// a missing or unreadable file makes the start fail (systemd.exec(5):
// "The files listed with this directive will be read shortly before the
// process is executed").
func (u *Unit) loadEnvironmentFiles(env *hostio.Env) {
	for i := range u.EnvironmentFiles {
		f := &u.EnvironmentFiles[i]
		fail := func(err error) {
			if f.Err == nil {
				f.Err = err
			}
			msg := fmt.Sprintf("EnvironmentFile=%s: %v", f.Path, err)
			if f.Optional {
				msg += "; optional, systemd skips it"
			} else {
				msg += "; the service fails to start"
			}
			u.Problems = append(u.Problems, Problem{Source: f.Source, Message: msg, Fatal: !f.Optional, AtStart: true})
		}
		matches, err := globUnderRoot(env, f.Path)
		if err != nil {
			if !(f.Optional && errors.Is(err, fs.ErrNotExist)) {
				fail(err)
			}
			continue
		}
		for _, m := range matches {
			res, err := resolve(env, m, true)
			var data []byte
			if err == nil {
				data, err = env.ReadFileAs(res, hostio.KindEnvironmentFile)
			}
			if err != nil {
				if !(f.Optional && errors.Is(err, fs.ErrNotExist)) {
					fail(err)
				}
				continue
			}
			f.Matches = append(f.Matches, m)
			if st, err := env.Stat(res); err == nil {
				u.Files = append(u.Files, File{Path: m, ModTime: st.ModTime()})
			}
			vars, probs, err := ParseEnvFile(m, data)
			for _, p := range probs {
				p.Fatal = false
				u.Problems = append(u.Problems, p)
			}
			if err != nil {
				fail(&hostio.FileError{Path: m, Err: err})
				continue
			}
			f.Vars = append(f.Vars, vars...)
		}
	}
}

// globUnderRoot expands a glob(3) pattern over host paths under env's
// root, sorted as glob sorts; a pattern without wildcards names one file,
// which must exist. Wildcards never match a leading "." unless the pattern
// has one (glob without GLOB_PERIOD).
func globUnderRoot(env *hostio.Env, pattern string) ([]string, error) {
	notFound := &hostio.FileError{Path: pattern, Err: fs.ErrNotExist}
	if !hasGlobMeta(pattern) {
		if _, err := resolve(env, pattern, true); err != nil {
			return nil, err
		}
		return []string{pattern}, nil
	}
	cur := []string{"/"}
	comps := splitPath(pattern)
	for i, c := range comps {
		var next []string
		last := i == len(comps)-1
		for _, base := range cur {
			if !hasGlobMeta(c) {
				p := path.Join(base, c)
				if !last {
					next = append(next, p)
				} else if _, err := resolve(env, p, true); err == nil {
					next = append(next, p)
				}
				continue
			}
			dir, err := resolve(env, base, true)
			if err != nil {
				continue
			}
			ents, err := env.ReadDir(dir)
			if err != nil {
				continue
			}
			pat := fnmatchToGo(c)
			for _, e := range ents {
				n := e.Name()
				if strings.HasPrefix(n, ".") && !strings.HasPrefix(c, ".") {
					continue
				}
				if ok, _ := path.Match(pat, n); ok {
					next = append(next, path.Join(base, n))
				}
			}
		}
		if len(next) > maxGlobMatches {
			next = next[:maxGlobMatches]
		}
		cur = next
		if len(cur) == 0 {
			return nil, notFound
		}
	}
	sort.Strings(cur)
	return cur, nil
}

func hasGlobMeta(s string) bool { return strings.ContainsAny(s, "*?[") }

// fnmatchToGo rewrites fnmatch's "[!...]" negation as path.Match's "[^...]".
func fnmatchToGo(p string) string {
	return strings.ReplaceAll(p, "[!", "[^")
}
