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

// ErrInvalidName is returned by Load for a name systemd would not accept
// as a unit name.
var ErrInvalidName = errors.New("not a valid unit name")

// followMax bounds alias hops (FOLLOW_MAX in src/basic/unit-file.c).
const followMax = 8

// Load finds name (e.g. "gitlab-runner.service") on SearchPath under env's
// root and reads it as systemd does.
//
// The returned Unit is never nil when err is nil; err is only for an
// invalid name or a nil env. Everything found on disk is reported in the
// Unit: a unit with no fragment anywhere has Path "" (Found() is false)
// and no settings, only Problems that may say why (a directory in its
// place, a dangling alias); a masked unit has Masked set and is not
// parsed further; every unreadable or malformed file is a Problem. A unit
// with a Fatal Problem is still parsed as far as possible, so callers can
// show what it says, but systemd would not run it.
//
// Fragment: the first file named name in SearchPath order wins
// (unit_file_build_name_map() in src/basic/unit-file.c: "search_path is
// ordered by priority (highest first)"). Regular files and symlinks count,
// directories and other file types are skipped. A symlink whose target is
// inside the search path is an alias and the unit is loaded under the
// target's name; a symlink to itself is ignored (so a lower-precedence
// file of that name is used); a symlink elsewhere links the target in,
// and Path stays the link's path. An instance name (foo@bar.service) with
// no file of its own uses its template (systemd.unit(5)).
//
// Masking: a fragment that is empty or a link to /dev/null is masked
// (systemd.unit(5): "If a unit file is empty (i.e. has the file size 0) or
// is symlinked to /dev/null, its configuration will not be loaded";
// null_or_empty() in src/basic/stat-util.c: a regular file of size 0 or
// any character device).
//
// Drop-ins: see dropIns.
func Load(env *hostio.Env, name string) (*Unit, error) {
	if env == nil {
		return nil, errors.New("systemd: nil env")
	}
	if !unitNameValid(name) {
		return nil, fmt.Errorf("%w: %q", ErrInvalidName, name)
	}
	u := &Unit{Name: name}
	lp := newLookup(env, name, u)
	frag, err := lp.get(name)
	if err != nil && isInstance(name) {
		frag, err = lp.get(unitTemplate(name))
	}
	switch {
	case errors.Is(err, errLoop):
		u.warn(lp.source(name), "alias symlinks for "+name+" loop; systemd cannot load it")
		return u, nil
	case errors.Is(err, errDangling):
		u.warn(lp.source(name), "an alias symlink for "+name+" points to a unit that has no file; systemd reports it not found")
		return u, nil
	case err != nil:
		return u, nil
	}
	u.Path = frag
	names := lp.names(name, path.Base(frag))
	for _, n := range names {
		if n != name {
			u.Aliases = append(u.Aliases, n)
		}
	}

	data, masked, ok := u.readFragment(env, frag)
	if masked || !ok {
		return u, nil
	}
	loaded := u.parse(frag, data, true)
	for _, f := range dropIns(env, name, u.Aliases) {
		u.DropIns = append(u.DropIns, f)
		if data, ok := u.readFile(env, f, Source{Path: f}, false, "drop-in"); ok {
			u.parse(f, data, false)
		}
	}
	if unitType(name) == "service" {
		u.verify(loaded)
	}
	u.loadEnvironmentFiles(env)
	u.finishExecStart()
	return u, nil
}

// parse applies one unit file or drop-in. Errors in a drop-in stop that
// drop-in only: unit_load_dropin() (src/core/load-dropin.c) ignores
// config_parse()'s result, so they are never Fatal.
func (u *Unit) parse(file string, data []byte, fragment bool) bool {
	sections := []string{"Unit", "Install"}
	if s := privateSection[unitType(u.Name)]; s != "" {
		sections = append(sections, s)
	}
	return parseConfig(file, data, sections, func(sec, key, value string, src Source) bool {
		return u.setting(sec, key, value, src, fragment)
	}, func(p Problem) {
		p.Fatal = p.Fatal && fragment
		u.Problems = append(u.Problems, p)
	})
}

// parseUnitBytes parses data as the fragment of unit name, without any
// file access: no drop-ins, and environment files are not read. Tests and
// the fuzz targets use it.
func parseUnitBytes(name, file string, data []byte) *Unit {
	u := &Unit{Name: name, Path: file}
	loaded := u.parse(file, data, true)
	if unitType(name) == "service" {
		u.verify(loaded)
	}
	u.finishExecStart()
	return u
}

// privateSection is each unit type's own section (the .sections of each
// unit vtable in src/core/*.c).
var privateSection = map[string]string{
	"service": "Service", "socket": "Socket", "mount": "Mount", "automount": "Automount",
	"swap": "Swap", "timer": "Timer", "path": "Path", "slice": "Slice", "scope": "Scope",
}

// readFragment opens the fragment as unit_load_fragment()
// (src/core/load-fragment.c) does: follow the link, check for a mask,
// read it.
func (u *Unit) readFragment(env *hostio.Env, frag string) (data []byte, masked, ok bool) {
	src := Source{Path: frag}
	res, err := resolve(env, frag, true)
	if res == "/dev/null" {
		u.Masked = true
		return nil, true, false
	}
	if err != nil {
		u.Problems = append(u.Problems, Problem{Source: src, Message: fmt.Sprintf("cannot open the unit file (%v); systemd cannot load the unit", err), Fatal: true})
		return nil, false, false
	}
	st, err := env.Stat(res)
	if err != nil {
		u.Problems = append(u.Problems, Problem{Source: src, Message: fmt.Sprintf("cannot open the unit file (%v); systemd cannot load the unit", err), Fatal: true})
		return nil, false, false
	}
	if st.Mode()&fs.ModeCharDevice != 0 || (st.Mode().IsRegular() && st.Size() == 0) {
		u.Masked = true
		return nil, true, false
	}
	data, ok = u.readFile(env, frag, src, true, "unit file")
	return data, false, ok
}

// readFile reads a unit file or drop-in through env, following symlinks
// under the root, and records it in Files.
func (u *Unit) readFile(env *hostio.Env, p string, src Source, fatal bool, what string) ([]byte, bool) {
	res, err := resolve(env, p, true)
	if res == "/dev/null" {
		// A drop-in linked to /dev/null reads as empty: the documented way
		// to mask a drop-in of the same name (systemd.unit(5), Examples).
		return nil, true
	}
	var data []byte
	if err == nil {
		if st, serr := env.Stat(res); serr == nil && st.Mode()&fs.ModeCharDevice != 0 {
			return nil, true
		}
		data, err = env.ReadFileAs(res, hostio.KindSystemdUnit)
	}
	if err != nil {
		msg := fmt.Sprintf("cannot read the %s (%v)", what, err)
		if fatal {
			msg += "; systemd cannot load the unit"
		} else {
			msg += "; systemd ignores it"
		}
		u.Problems = append(u.Problems, Problem{Source: src, Message: msg, Fatal: fatal})
		return nil, false
	}
	if st, err := env.Stat(res); err == nil {
		u.Files = append(u.Files, File{Path: p, ModTime: st.ModTime()})
	}
	return data, true
}

// verify is the part of service_verify() and service_add_extras()
// (src/core/service.c) that decides what runs: the default Type=, and
// the refusal of a service without, or with several, ExecStart=.
func (u *Unit) verify(loaded bool) {
	u.Type = u.typeSet
	if u.Type == "" {
		switch {
		case u.busName != "":
			u.Type = "dbus"
		case len(u.Commands) > 0:
			u.Type = "simple"
		default:
			u.Type = "oneshot"
		}
	}
	if !loaded {
		return // already refused
	}
	src := Source{Path: u.Path}
	switch {
	case len(u.Commands) == 0 && !u.hasExecStop && !u.successAction:
		u.Problems = append(u.Problems, Problem{Source: src, Message: "service has no ExecStart=, ExecStop=, or SuccessAction=; systemd refuses to load it", Fatal: true})
	case len(u.Commands) == 0 && u.Type != "oneshot":
		u.Problems = append(u.Problems, Problem{Source: src, Message: "service has no ExecStart=, which is only allowed for Type=oneshot; systemd refuses to load it", Fatal: true})
	case len(u.Commands) == 0 && !u.remainAfterExit && !u.successAction:
		u.Problems = append(u.Problems, Problem{Source: src, Message: "service has no ExecStart= and no SuccessAction= and not RemainAfterExit=yes; systemd refuses to load it", Fatal: true})
	case len(u.Commands) > 1 && u.Type != "oneshot":
		u.Problems = append(u.Problems, Problem{Source: u.Commands[1].Source, Message: fmt.Sprintf("service has more than one ExecStart= (%d), which is only allowed for Type=oneshot; systemd refuses to load it", len(u.Commands)), Fatal: true})
	}
}

// finishExecStart expands the first command's argv with the unit's
// environment, as exec-invoke.c does unless the ":" prefix is given.
func (u *Unit) finishExecStart() {
	if len(u.Commands) == 0 {
		return
	}
	c := u.Commands[0]
	argv := append([]string(nil), c.Argv...)
	if !c.NoEnvExpand() {
		vars, _ := u.Environ()
		var unset, bad []string
		argv, unset, bad = expandArgv(c.Argv, vars)
		for _, n := range uniqSorted(unset) {
			u.warn(c.Source, "ExecStart= references $"+n+", which the unit does not set; it expands to nothing unless systemd's own environment has it")
		}
		for _, n := range uniqSorted(bad) {
			u.warn(c.Source, "ExecStart= references an invalid variable name "+quoteForMessage(n)+"; it expands to nothing")
		}
	}
	if len(argv) == 0 {
		argv = []string{} // still "there is a command"; nil means none
		u.warn(c.Source, "ExecStart= expands to an empty argument list")
	}
	u.ExecStart, u.ExecStartPath, u.ExecStartSource = argv, c.Path, c.Source
}

func uniqSorted(s []string) []string {
	sort.Strings(s)
	out := s[:0]
	for i, x := range s {
		if i == 0 || x != s[i-1] {
			out = append(out, x)
		}
	}
	return out
}

// lookup is the name map of unit_file_build_name_map(): for every unit
// file name on the search path, the fragment path or the alias it points to.
type lookup struct {
	env      *hostio.Env
	expanded []string // search path dirs and their resolved forms, for alias detection
	ids      map[string]idEntry
}

type idEntry struct {
	path  string // a fragment (regular file or linked unit)
	alias string // or the unit name an alias symlink points to
	link  string // for an alias, the symlink's host path
}

// source names the symlink behind an alias problem.
func (lp *lookup) source(name string) Source {
	if e, ok := lp.ids[name]; ok {
		return Source{Path: e.link}
	}
	return Source{Path: lp.ids[unitTemplate(name)].link}
}

func newLookup(env *hostio.Env, want string, u *Unit) *lookup {
	lp := &lookup{env: env, ids: map[string]idEntry{}}
	resolved := make([]string, len(SearchPath))
	for i, d := range SearchPath {
		lp.expanded = appendUniq(lp.expanded, d)
		if r, err := resolve(env, d, true); err == nil {
			resolved[i] = r
			lp.expanded = appendUniq(lp.expanded, r)
		}
	}
	for i, d := range SearchPath {
		if resolved[i] == "" {
			continue
		}
		ents, err := env.ReadDir(resolved[i])
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				u.warn(Source{Path: d}, fmt.Sprintf("cannot list the unit directory (%v); systemd skips it", err))
			}
			continue
		}
		for _, e := range ents {
			n := e.Name()
			if !unitNameValid(n) {
				continue
			}
			if _, seen := lp.ids[n]; seen {
				continue // a higher-precedence directory already had it
			}
			switch t := e.Type(); {
			case t.IsRegular():
				lp.ids[n] = idEntry{path: d + "/" + n}
			case t&fs.ModeSymlink != 0:
				if ent, ok := lp.symlink(d, resolved[i], n, n == want, u); ok {
					lp.ids[n] = ent
				}
			case n == want && t.IsDir():
				u.warn(Source{Path: d + "/" + n}, "is a directory; systemd ignores it when looking for the unit file")
			case n == want:
				u.warn(Source{Path: d + "/" + n}, "is neither a regular file nor a symlink; systemd ignores it")
			}
		}
	}
	return lp
}

// symlink classifies a unit file symlink as unit_file_resolve_symlink()
// does: a target inside the search path is an alias (validated by
// unit_validate_alias_symlink_or_warn()), anything else links a unit file
// (or masks it, with /dev/null) under the link's own path.
func (lp *lookup) symlink(dir, rdir, name string, report bool, u *Unit) (idEntry, bool) {
	linkPath := dir + "/" + name
	target, err := lp.env.Readlink(rdir + "/" + name)
	if err != nil {
		if report {
			u.warn(Source{Path: linkPath}, fmt.Sprintf("cannot read the symlink (%v); systemd skips it", hostio.FileCause(err)))
		}
		return idEntry{}, false
	}
	simplified, _ := resolve(lp.env, lexicalJoin(dir, target), false)
	inSearchPath := false
	for _, d := range lp.expanded {
		if underDir(simplified, d) && simplified != d {
			inSearchPath = true
			break
		}
	}
	if !inSearchPath {
		return idEntry{path: linkPath}, true
	}
	dst := path.Base(simplified)
	if why := aliasInvalid(name, dst); why != "" {
		if report {
			u.warn(Source{Path: linkPath}, fmt.Sprintf("alias symlink to %s %s; systemd ignores it", quoteForMessage(target), why))
		}
		return idEntry{}, false
	}
	return idEntry{alias: dst, link: linkPath}, true
}

// aliasInvalid checks an alias src → dst as
// unit_validate_alias_symlink_or_warn() does; "" means valid.
func aliasInvalid(src, dst string) string {
	switch {
	case src == dst:
		return "points to itself"
	case !unitNameValid(dst):
		return "does not name a valid unit"
	case unitType(src) != unitType(dst):
		return "has an incompatible suffix"
	case isTemplate(src) != isTemplate(dst) && !(isInstance(src) && isTemplate(dst)):
		return "does not match the source's name type"
	case isInstance(src) && isInstance(dst) && unitInstance(src) != unitInstance(dst):
		return "has a different instance name"
	case isInstance(src) != isInstance(dst) && !(isInstance(src) && isTemplate(dst)):
		return "does not match the source's name type"
	}
	return ""
}

var (
	errNoUnit   = errors.New("no such unit")
	errDangling = errors.New("alias target not found")
)

// get is unit_ids_map_get(): follow aliases to a fragment path.
func (lp *lookup) get(name string) (string, error) {
	id := name
	for n := 0; n < followMax; n++ {
		e, ok := lp.ids[id]
		if !ok {
			if n == 0 {
				return "", errNoUnit
			}
			// An alias to an instance may be served by its template.
			t := unitTemplate(id)
			if t == "" {
				return "", errDangling
			}
			if e, ok = lp.ids[t]; !ok {
				return "", errDangling
			}
		}
		if e.path != "" {
			return e.path, nil
		}
		id = e.alias
	}
	return "", errLoop
}

// names is the unit's name set as unit_file_find_fragment() builds it:
// the name, the fragment's name, and every alias that resolves to a
// fragment of one of those names (the reverse map of
// unit_file_build_name_map(), which skips masked targets).
//
// For an instance served by a template, template names are taken with the
// instance filled in, as merge_by_names() does.
func (lp *lookup) names(name, fragBase string) []string {
	inst := unitInstance(name)
	if inst != "" && isTemplate(fragBase) {
		fragBase = withInstance(fragBase, inst)
	}
	bases := map[string]bool{name: true, fragBase: true}
	set := map[string]bool{fragBase: true}
	if !isTemplate(name) {
		set[name] = true
	}
	for k := range lp.ids {
		p, err := lp.get(k)
		if err != nil {
			continue
		}
		b, kk := path.Base(p), k
		switch {
		case isTemplate(b) && isInstance(k):
			b = withInstance(b, unitInstance(k))
		case isTemplate(b) && isTemplate(k) && inst != "":
			b, kk = withInstance(b, inst), withInstance(k, inst)
		}
		if !bases[b] || lp.nullOrEmpty(p) {
			continue
		}
		set[kk] = true
	}
	out := make([]string, 0, len(set))
	for n := range set {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// nullOrEmpty is null_or_empty_path(): errors count as masked, as the
// caller in unit-file.c skips both.
func (lp *lookup) nullOrEmpty(p string) bool {
	res, err := resolve(lp.env, p, true)
	if res == "/dev/null" || err != nil {
		return true
	}
	st, err := lp.env.Stat(res)
	if err != nil {
		return true
	}
	return st.Mode()&fs.ModeCharDevice != 0 || (st.Mode().IsRegular() && st.Size() == 0)
}

// EnabledInstances are the instances of template ("gitlab-runner@.service")
// that some target's .wants/, .requires/ or .upholds/ directory links, as
// Enabled finds them: `systemctl enable gitlab-runner@main` links
// gitlab-runner@main.service to the template. Sorted, each once.
func EnabledInstances(env *hostio.Env, template string) []string {
	if !isTemplate(template) {
		return nil
	}
	prefix := strings.TrimSuffix(template, "."+unitType(template))
	seen := map[string]bool{}
	var out []string
	for _, dep := range dependencyDirs(env) {
		links, err := env.ReadDir(dep.resolved)
		if err != nil {
			continue
		}
		for _, l := range links {
			name := l.Name()
			if seen[name] || !strings.HasPrefix(name, prefix) || !isInstance(name) || unitTemplate(name) != template || !unitNameValid(name) {
				continue
			}
			if ok, _ := Enabled(env, name); ok {
				seen[name] = true
				out = append(out, name)
			}
		}
	}
	sort.Strings(out)
	return out
}

// linkMasked is null_or_empty_path() of a .wants/ link: its target, followed
// under the root, is /dev/null, a character device or an empty regular file.
// A link that leads nowhere is no mask: the manager then looks the unit up
// by name.
func linkMasked(env *hostio.Env, p string) bool {
	res, err := resolve(env, p, true)
	if res == "/dev/null" {
		return true
	}
	if err != nil {
		return false
	}
	st, err := env.Stat(res)
	return err == nil && (st.Mode()&fs.ModeCharDevice != 0 || (st.Mode().IsRegular() && st.Size() == 0))
}

func appendUniq(list []string, s string) []string {
	if contains(list, s) {
		return list
	}
	return append(list, s)
}

// dropIns lists the drop-in files that apply to name, in the order systemd
// applies them (unit_file_find_dropin_paths() in src/shared/dropin.c and
// conf_files_list_strv() in src/basic/conf-files.c):
//
//   - directories, in this order: "<name>.d" (then for an instance the
//     template's, then the dash-truncated prefixes "foo-.service.d") in
//     every SearchPath directory; the same for each alias; last the
//     top-level "<type>.d" ("service.d", systemd >= 246) in every
//     SearchPath directory, "the most generic" (dropin.c).
//   - every "*.conf" in them, except hidden and backup files
//     (hidden_or_backup_file()); a file name seen in an earlier directory
//     hides the same name in later ones.
//   - the survivors sorted by file name, regardless of directory
//     (systemd.unit(5): "Multiple drop-in files with different names are
//     applied in lexicographic order, regardless of which of the
//     directories they reside in"; "Files in type.d/ have lower precedence
//     compared to files in name-specific override directories").
//
// Directories are canonicalized under the root (chase()), so the paths are
// those systemd shows as DropInPaths=.
func dropIns(env *hostio.Env, name string, aliases []string) []string {
	var dirs []string
	add := func(n string) {
		for _, sp := range SearchPath {
			for _, dn := range dropInDirNames(n) {
				if r, err := resolve(env, sp+"/"+dn, true); err == nil {
					dirs = append(dirs, r)
				}
			}
		}
	}
	add(name)
	for _, a := range aliases {
		add(a)
	}
	add(unitType(name))

	seen := map[string]bool{}
	var files []string
	for _, d := range dirs {
		ents, err := env.ReadDir(d)
		if err != nil {
			continue
		}
		for _, e := range ents {
			n := e.Name()
			if !strings.HasSuffix(n, ".conf") || hiddenOrBackup(n) || seen[n] {
				continue
			}
			seen[n] = true
			files = append(files, d+"/"+n)
		}
	}
	sort.SliceStable(files, func(i, j int) bool { return path.Base(files[i]) < path.Base(files[j]) })
	return files
}

// hiddenOrBackup is hidden_or_backup_file() (src/basic/path-util.c).
func hiddenOrBackup(n string) bool {
	if strings.HasPrefix(n, ".") || n == "lost+found" || n == "aquota.user" || n == "aquota.group" || strings.HasSuffix(n, "~") {
		return true
	}
	i := strings.LastIndexByte(n, '.')
	if i < 0 {
		return false
	}
	switch n[i+1:] {
	case "rpmnew", "rpmsave", "rpmorig", "dpkg-old", "dpkg-new", "dpkg-tmp", "dpkg-dist", "dpkg-bak",
		"dpkg-backup", "dpkg-remove", "ucf-new", "ucf-old", "ucf-dist", "swp", "bak", "old", "new":
		return true
	}
	return false
}

// Enabled reports whether the unit is enabled: a symlink named name in
// some "<target>.wants/", "<target>.requires/" or "<target>.upholds/"
// directory of a SearchPath directory. The manager pulls the unit in from
// any of them (process_deps() in src/core/load-dropin.c); note that
// `systemctl is-enabled` says "enabled" only for links under
// /etc/systemd/system and "enabled-runtime" for /run/systemd/system
// (find_symlinks_in_scope() in src/shared/install.c), so a link only under
// /usr/lib is a vendor preset, not the administrator's choice. links are
// host paths, in SearchPath order.
func Enabled(env *hostio.Env, name string) (bool, []string) {
	var links []string
	for _, dep := range dependencyDirs(env) {
		st, err := env.Lstat(dep.resolved + "/" + name)
		if err != nil || st.Mode()&fs.ModeSymlink == 0 {
			continue
		}
		if linkMasked(env, dep.resolved+"/"+name) {
			// process_deps() (src/core/load-dropin.c, systemd 252): a
			// dependency whose link leads to /dev/null or an empty file
			// is masked and ignored ("%s dependency on %s is masked by
			// %s, ignoring.").
			continue
		}
		links = append(links, dep.host+"/"+name)
	}
	return len(links) > 0, links
}

// dependencyDir is a "<unit>.wants/", ".requires/" or ".upholds/"
// directory of a SearchPath directory: host is its path as the host names
// it, resolved where it is read.
type dependencyDir struct{ host, resolved string }

// dependencyDirs lists the dependency directories of every SearchPath
// directory, in SearchPath order; a directory that is the same as an
// earlier one (merged /usr) is read once.
func dependencyDirs(env *hostio.Env) []dependencyDir {
	var out []dependencyDir
	seen := map[string]bool{}
	for _, d := range SearchPath {
		rd, err := resolve(env, d, true)
		if err != nil || seen[rd] {
			continue // missing, or the same directory as an earlier one
		}
		seen[rd] = true
		ents, err := env.ReadDir(rd)
		if err != nil {
			continue
		}
		for _, e := range ents {
			n := e.Name()
			if !strings.HasSuffix(n, ".wants") && !strings.HasSuffix(n, ".requires") && !strings.HasSuffix(n, ".upholds") {
				continue
			}
			if sub, err := resolve(env, rd+"/"+n, true); err == nil {
				out = append(out, dependencyDir{host: d + "/" + n, resolved: sub})
			}
		}
	}
	return out
}
