package fleetingplugin

import (
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/socialwebcomputer/doctor/checks/facts/hostfacts"
	"github.com/socialwebcomputer/doctor/internal/hostio"
)

// The runner resolves [runners.autoscaler] plugin with fleeting-artifact's
// installer.LookPath(name, "") (executors/internal/autoscaler/provider.go,
// gitlab-runner v19.3.0; gitlab.com/gitlab-org/fleeting/fleeting-artifact
// v0.0.0-20241018172108-3f6e6586dc5c, pkg/installer/installer.go, the
// version its go.mod requires). In its order:
//
//  1. the value as a path: os.Stat(addr), relative to the working directory;
//  2. a plain name (no "/" or ":") prefixed "fleeting-plugin-": exec.LookPath
//     over the process's $PATH (Go's os/exec: an entry the process cannot
//     execute is passed over, a relative result is refused with ErrDot);
//  3. otherwise an OCI reference, installed by `gitlab-runner fleeting
//     install`: <InstallDir>/<registry>/<repository>/<name>/<version>/plugin,
//     the highest installed version the constraint matches. InstallDir is
//     $FLEETING_PLUGIN_PATH, else os.UserHomeDir()/.config/fleeting/plugins.
//     installer.LookPath returns that path without looking at the file.

// Defaults of a short reference (pkg/internal/defname/name.go,
// fleeting-artifact v0.0.0-20241018172108-3f6e6586dc5c).
const (
	defaultRegistry  = "registry.gitlab.com"
	defaultNamespace = "gitlab-org/fleeting/plugins"
	pathPrefix       = "fleeting-plugin-"
)

// probe is one place the runner looks, and what is there.
type probe struct {
	path string
	what string // "no such file", "not executable by …", "found"
}

// resolution is where the runner would find the plugin, or why not.
type resolution struct {
	found    string // the path the runner runs; "" when none
	how      string // which rule found it
	probes   []probe
	runnerEr string // the error the runner logs, when it finds none
	// blocked is set when the runner finds the file but may not execute it;
	// passedOver is the $PATH candidate exec.LookPath skipped for that.
	blocked    []hostfacts.Blocker
	passedOver string
	// pathDirs are the $PATH entries searched; pluginDir the install
	// directory of an OCI reference.
	pathDirs  []string
	pluginDir string
	// installDir is where `gitlab-runner fleeting install` puts plugins for
	// this runner; installed says the name is an OCI reference.
	installDir string
	installed  bool
}

// lookPath mirrors installer.LookPath for the runner's environment.
func lookPath(env *hostio.Env, ra *hostfacts.RunAs, e *hostfacts.Environ, addr string) *resolution {
	res := &resolution{}
	abs := func(p string) string {
		if path.IsAbs(p) {
			return path.Clean(p)
		}
		return path.Join(ra.Cwd, p)
	}
	// 1. The value as a path, from the working directory.
	local := abs(addr)
	if st, err := env.Stat(local); err == nil {
		res.found, res.how = local, "the plugin value names this file (relative to the working directory "+ra.Cwd+")"
		res.probes = append(res.probes, probe{local, "found"})
		res.blocked = denied(env, local, st, ra)
		return res
	}
	res.probes = append(res.probes, probe{local, "no such file (the plugin value as a path, from the working directory " + ra.Cwd + ")"})

	// 2. A fleeting-plugin-<name> binary on $PATH.
	if !strings.ContainsAny(addr, "/:") && strings.HasPrefix(addr, pathPrefix) {
		pathVar, ok := e.Lookup("PATH")
		if !ok {
			res.probes = append(res.probes, probe{"$PATH", "not set in " + e.Source + ": exec.LookPath searches nothing"})
		}
		for _, dir := range splitList(pathVar) {
			rel := dir == "" || !path.IsAbs(dir)
			if dir == "" {
				dir = "."
			}
			cand := path.Join(dir, addr)
			res.pathDirs = append(res.pathDirs, dir)
			st, err := env.Stat(abs(cand))
			switch {
			case err != nil:
				res.probes = append(res.probes, probe{cand, "no such file ($PATH entry " + dir + ")"})
			case st.IsDir():
				res.probes = append(res.probes, probe{cand, "a directory"})
			case len(denied(env, abs(cand), st, ra)) > 0:
				res.probes = append(res.probes, probe{cand, fmt.Sprintf("mode %04o: the runner's user may not execute it, so exec.LookPath passes over it", st.Mode().Perm())})
				if res.blocked == nil {
					res.blocked, res.passedOver = denied(env, abs(cand), st, ra), cand
				}
			case rel:
				res.probes = append(res.probes, probe{cand, "found through the relative $PATH entry " + dir + ", which Go's exec.LookPath refuses (ErrDot)"})
			default:
				res.found, res.how = cand, "on $PATH ("+e.Where("PATH")+")"
				res.probes = append(res.probes, probe{cand, "found"})
				res.blocked, res.passedOver = nil, ""
				return res
			}
		}
	}

	// 3. An installed OCI artifact.
	res.installed = true
	res.installDir = installDir(e, ra)
	ref, constraint, err := parseReference(addr)
	if err != nil {
		res.runnerEr = "loading fleeting plugin: " + err.Error()
		return res
	}
	pluginDir := path.Join(res.installDir, ref)
	res.pluginDir = pluginDir
	versions, err := installedVersions(env, abs(pluginDir))
	if err != nil {
		res.probes = append(res.probes, probe{pluginDir, "no such directory (where `gitlab-runner fleeting install` puts " + ref + ")"})
		res.runnerEr = fmt.Sprintf("loading fleeting plugin: plugin not found: lstat %s: no such file or directory", pluginDir)
		return res
	}
	v, ok := constraint.pick(versions)
	if !ok {
		res.probes = append(res.probes, probe{pluginDir, fmt.Sprintf("installed versions %s; none matches %q", listOr(versions), constraint.text)})
		res.runnerEr = "loading fleeting plugin: plugin not found: " + pluginDir
		return res
	}
	file := path.Join(pluginDir, v.String(), "plugin")
	st, err := env.Stat(abs(file))
	if err != nil {
		res.probes = append(res.probes, probe{file, "no such file: the version directory " + v.String() + " has no plugin binary"})
		res.runnerEr = "running autoscaler plugin: the plugin " + file + " does not exist"
		return res
	}
	res.found, res.how = file, fmt.Sprintf("installed by `gitlab-runner fleeting install` (version %s, constraint %q)", v, constraint.text)
	res.probes = append(res.probes, probe{file, "found"})
	res.blocked = denied(env, abs(file), st, ra)
	return res
}

// denied is what stops the runner from executing a file: not a regular
// file, or its mode, or a directory on the way.
func denied(env *hostio.Env, file string, st fs.FileInfo, ra *hostfacts.RunAs) []hostfacts.Blocker {
	if !ra.UIDKnown {
		return nil
	}
	return hostfacts.Denied(env, file, st, ra, hostfacts.Execute)
}

// installDir is installer.InstallDir() in the runner's environment:
// $FLEETING_PLUGIN_PATH, else $HOME/.config/fleeting/plugins. With HOME
// unset os.UserHomeDir fails and the installer joins "" — a path relative
// to the working directory.
func installDir(e *hostfacts.Environ, ra *hostfacts.RunAs) string {
	if d, ok := e.Lookup("FLEETING_PLUGIN_PATH"); ok && d != "" {
		return d
	}
	home, _ := e.Lookup("HOME")
	return path.Join(home, ".config", "fleeting", "plugins")
}

// parseReference is defname.ParseReference plus the tag: a bare name is
// in registry.gitlab.com/gitlab-org/fleeting/plugins, a path whose first
// part has no dot is on registry.gitlab.com; the tag is the version
// constraint, "latest" when none is given.
func parseReference(addr string) (name string, c constraint, err error) {
	repo, tag := addr, "latest"
	if i := strings.LastIndex(addr, ":"); i > strings.LastIndex(addr, "/") {
		repo, tag = addr[:i], addr[i+1:]
	}
	if strings.Contains(addr, "@") {
		return "", c, fmt.Errorf("parsing constraint: %q is a digest, not a version constraint", addr)
	}
	if repo == "" || repo != strings.ToLower(repo) {
		return "", c, fmt.Errorf("parsing reference: %q: repository must be lowercase", addr)
	}
	parts := strings.Split(repo, "/")
	switch {
	case len(parts) == 1:
		repo = path.Join(defaultRegistry, defaultNamespace, repo)
	case !strings.ContainsRune(parts[0], '.'):
		repo = path.Join(defaultRegistry, repo)
	}
	c, err = parseConstraint(tag)
	if err != nil {
		return "", c, fmt.Errorf("parsing constraint: %w", err)
	}
	return repo, c, nil
}

// maxVersionEntries bounds the walk of a plugin's install directory.
const maxVersionEntries = 10000

// installedVersions walks the plugin's directory as the installer does:
// every directory below it whose name is a semantic version counts.
func installedVersions(env *hostio.Env, dir string) ([]version, error) {
	if _, err := env.Stat(dir); err != nil {
		return nil, err
	}
	var out []version
	queue, seen := []string{dir}, 0
	for len(queue) > 0 && seen < maxVersionEntries {
		d := queue[0]
		queue = queue[1:]
		ents, err := env.ReadDir(d)
		if err != nil {
			continue
		}
		for _, ent := range ents {
			seen++
			if !ent.IsDir() {
				continue
			}
			if v, err := parseVersion(ent.Name()); err == nil {
				out = append(out, v)
			}
			queue = append(queue, path.Join(d, ent.Name()))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].compare(out[j]) < 0 })
	return out, nil
}

func listOr(vs []version) string {
	if len(vs) == 0 {
		return "none"
	}
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = v.String()
	}
	return strings.Join(s, ", ")
}

// splitList is filepath.SplitList: "" is no entry at all.
func splitList(p string) []string {
	if p == "" {
		return nil
	}
	return strings.Split(p, ":")
}

// version is fleeting-artifact's pkg/version: MAJOR.MINOR.PATCH with an
// optional -prerelease; a constraint leaves parts out (any) or is latest.
type version struct {
	major, minor, patch int64
	pre                 []string
}

const (
	anyPart    = -1
	latestPart = -2
)

func (v version) String() string {
	s := fmt.Sprintf("%d.%d.%d", v.major, v.minor, v.patch)
	if len(v.pre) > 0 {
		s += "-" + strings.Join(v.pre, ".")
	}
	return s
}

type constraint struct {
	version
	text string
}

func parseVersion(s string) (version, error) {
	v, err := parse(s, false)
	return v, err
}

func parseConstraint(s string) (constraint, error) {
	v, err := parse(s, true)
	return constraint{v, s}, err
}

func parse(input string, isConstraint bool) (version, error) {
	parts := strings.SplitN(input, ".", 3)
	if !isConstraint && len(parts) != 3 {
		return version{}, fmt.Errorf("invalid semantic version")
	}
	d := []int64{0, anyPart, anyPart}
	if isConstraint {
		if input == "" {
			return version{anyPart, anyPart, anyPart, nil}, nil
		}
		if input == "latest" {
			return version{latestPart, anyPart, anyPart, nil}, nil
		}
	}
	var pre []string
	if len(parts) == 3 {
		p, rest, ok := strings.Cut(parts[2], "-")
		parts[2] = p
		if ok {
			pre = strings.Split(rest, ".")
		}
	}
	for i, s := range parts {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 {
			return version{}, fmt.Errorf("invalid semantic version: part %q invalid", s)
		}
		d[i] = n
	}
	if !isConstraint && (d[1] < 0 || d[2] < 0) {
		return version{}, fmt.Errorf("invalid semantic version")
	}
	return version{d[0], d[1], d[2], pre}, nil
}

// compare is pkg/version's Compare: a constraint's any part matches every
// value; a prerelease sorts before its release.
func (a version) compare(b version) int {
	switch {
	case a.major == anyPart || a.major == latestPart:
	case a.major != b.major:
		return cmpInt(a.major, b.major)
	case a.minor == anyPart:
	case a.minor != b.minor:
		return cmpInt(a.minor, b.minor)
	case a.patch == anyPart:
	case a.patch != b.patch:
		return cmpInt(a.patch, b.patch)
	}
	switch {
	case a.pre != nil && b.pre == nil:
		return -1
	case a.pre == nil && b.pre != nil:
		return 1
	}
	return strings.Compare(strings.Join(a.pre, "."), strings.Join(b.pre, "."))
}

func cmpInt(a, b int64) int {
	if a < b {
		return -1
	}
	return 1
}

// pick is Constraint.Match, then the last: the highest matching version.
func (c constraint) pick(sorted []version) (version, bool) {
	var match []version
	for _, v := range sorted {
		if c.version.compare(v) == 0 {
			match = append(match, v)
		}
	}
	if len(match) == 0 {
		return version{}, false
	}
	return match[len(match)-1], true
}
