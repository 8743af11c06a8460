package runnerkubeconfigenv

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/socialwebcomputer/doctor/internal/fixcode"
	"github.com/socialwebcomputer/doctor/internal/source/systemd"
)

// defaultDropIn is the drop-in doctor writes where nothing of the unit's
// stands in its way.
const defaultDropIn = "kubeconfig.conf"

// plan is how the KUBECONFIG drop-in takes effect. systemd applies a
// unit's drop-ins in file-name order, whatever their directory
// (systemd.unit(5): "Multiple drop-in files with different names are
// applied in lexicographic order, regardless of which of the directories
// they reside in"; conf_files_list_strv() sorts them by base name,
// src/basic/conf-files.c, systemd 252), an empty Environment= empties the
// list as far as it was built (config_parse_environ(), src/core/load-fragment.c),
// and UnsetEnvironment= is applied last, whatever order its lines came in
// (exec_child(), src/core/execute.c). So the drop-in must sort after every
// drop-in that resets Environment= or sets KUBECONFIG, and, where an
// UnsetEnvironment= removes KUBECONFIG, empty that list and give back its
// other entries. TestModelAgreesWithSystemd (internal/source/systemd)
// holds the model to systemd 252 on these rules.
type plan struct {
	name string
	// resetUnset: the drop-in empties UnsetEnvironment= and gives back
	// keep, the entries that do not remove KUBECONFIG.
	resetUnset bool
	keep       []systemd.Unset
	// after are the lines the name must sort after, in drop-ins.
	after []systemd.Source
	// stuck is a drop-in no name doctor writes sorts after: it must go.
	stuck *systemd.Source
}

// planDropIn decides the drop-in's name and what it holds for unit u (nil:
// no unit file, the default name).
func planDropIn(u *systemd.Unit, kubeconfig string) plan {
	pl := plan{name: defaultDropIn}
	if u == nil || !u.Found() {
		return pl
	}
	dropIn := map[string]bool{}
	taken := map[string]bool{}
	for _, d := range u.DropIns {
		dropIn[d] = true
		taken[path.Base(d)] = true
	}
	add := func(s systemd.Source) {
		if dropIn[s.Path] {
			pl.after = append(pl.after, s)
		}
	}
	for _, s := range u.EnvironmentResets {
		add(s)
	}
	for _, a := range u.Assignments("KUBECONFIG") {
		add(a.Source)
	}
	for _, x := range u.UnsetEnvironment {
		if x.Removes("KUBECONFIG", kubeconfig) {
			pl.resetUnset = true
		} else {
			pl.keep = append(pl.keep, x)
		}
	}
	// Every line that would remove it, a repeat the list kept once
	// included: one after the drop-in would remove it again.
	for _, x := range u.Unsets() {
		if x.Removes("KUBECONFIG", kubeconfig) {
			add(x.Source)
		}
	}
	// In the order systemd applies them: by file name, then line.
	sort.SliceStable(pl.after, func(i, j int) bool {
		bi, bj := path.Base(pl.after[i].Path), path.Base(pl.after[j].Path)
		return bi < bj || bi == bj && pl.after[i].Line < pl.after[j].Line
	})
	// "kubeconfig.conf", then "zz-kubeconfig.conf", "zzz-…": bytes compare,
	// and 'z' is the greatest byte a name doctor writes starts with.
	for n := 0; n < 8; n++ {
		name := defaultDropIn
		if n > 0 {
			name = strings.Repeat("z", n+1) + "-" + defaultDropIn
		}
		if taken[name] {
			continue // another file of that name: doctor writes its own
		}
		if pl.sortsAfter(name) {
			pl.name = name
			return pl
		}
	}
	last := pl.after[0]
	for _, s := range pl.after {
		if path.Base(s.Path) > path.Base(last.Path) {
			last = s
		}
	}
	pl.stuck = &last
	pl.name = strings.Repeat("z", 8) + "-" + defaultDropIn
	return pl
}

// sortsAfter says whether name comes after every drop-in in pl.after.
func (pl plan) sortsAfter(name string) bool {
	for _, s := range pl.after {
		if path.Base(s.Path) >= name {
			return false
		}
	}
	return true
}

// entries are the drop-in's lines.
func (pl plan) entries(kubeconfig string) []fixcode.Entry {
	out := []fixcode.Entry{fixcode.Environment("KUBECONFIG", kubeconfig)}
	if pl.resetUnset {
		out = append(out, fixcode.UnsetEnvironmentReset())
		for _, x := range pl.keep {
			out = append(out, fixcode.UnsetEnvironmentOf(x.Name, x.Value, x.HasValue))
		}
	}
	return out
}

// why says, for a unit whose environment lacks KUBECONFIG, what of the
// unit's own undoes the KUBECONFIG a file sets: a later empty
// Environment=, or an UnsetEnvironment= (applied last); "" when no file
// sets it.
func why(u *systemd.Unit) (string, []systemd.Source) {
	if u == nil || !u.Found() {
		return "", nil
	}
	sets := u.Assignments("KUBECONFIG")
	if len(sets) == 0 {
		return "", nil
	}
	last := sets[len(sets)-1]
	for _, x := range u.UnsetEnvironment {
		if x.Removes("KUBECONFIG", last.Value) {
			return fmt.Sprintf(" %s sets KUBECONFIG (%s), but UnsetEnvironment=%s (%s) removes it: systemd applies UnsetEnvironment= last, "+
				"after every Environment= of every file.", u.Name, last.Source, x.Entry(), x.Source), []systemd.Source{last.Source, x.Source}
		}
	}
	order := append([]string{u.Path}, u.DropIns...)
	pos := func(s systemd.Source) (int, int) {
		for i, p := range order {
			if p == s.Path {
				return i, s.Line
			}
		}
		return -1, s.Line
	}
	fi, fl := pos(last.Source)
	for _, r := range u.EnvironmentResets {
		ri, rl := pos(r)
		if ri > fi || ri == fi && rl > fl {
			return fmt.Sprintf(" %s sets KUBECONFIG (%s), but the empty Environment= at %s, applied after it, resets the list: systemd "+
				"applies a unit's drop-ins in file-name order, whatever their directory, so %s comes after %s.",
				u.Name, last.Source, r, path.Base(r.Path), path.Base(last.Source.Path)), []systemd.Source{last.Source, r}
		}
	}
	return "", nil
}
