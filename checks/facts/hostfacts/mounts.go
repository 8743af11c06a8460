package hostfacts

import (
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/socialwebcomputer/doctor/checks"
)

// Mount is one line of /proc/<pid>/mountinfo (proc(5)): what is mounted
// where in the runner's own mount namespace.
type Mount struct {
	Point  string // mount point, as the runner sees it
	Root   string // the path within the source filesystem that is mounted there
	FSType string // "ext4", "tmpfs", "overlay", ...
	Source string // "/dev/rbd0", "tmpfs", "overlay"
	Line   int    // 1-based, for evidence
}

// Mounts is the mount table of the diagnosed runner process.
type Mounts struct {
	Source string // "/proc/4242/mountinfo"
	List   []Mount
	// Err is set when the table is unknown: no process runs (a unit's
	// mounts exist only once it starts), or the entry cannot be read.
	Err error
}

// At is the mount that holds p: the one with the longest mount point that
// is p or a parent of it; a later mount over the same point wins, as it
// hides the earlier one. nil when the table is unknown or empty.
func (m *Mounts) At(p string) *Mount {
	p = path.Clean(p)
	var best *Mount
	for i := range m.List {
		mt := &m.List[i]
		if !under(p, mt.Point) {
			continue
		}
		if best == nil || len(mt.Point) >= len(best.Point) {
			best = mt
		}
	}
	return best
}

// under reports whether p is dir or inside it.
func under(p, dir string) bool {
	return dir == "/" || p == dir || strings.HasPrefix(p, dir+"/")
}

// MountsFact reads /proc/<pid>/mountinfo of the selected runner.
var MountsFact = &checks.Fact[*Mounts]{
	ID:       "runner-mounts",
	Doc:      "the mount table of the diagnosed runner process (/proc/<pid>/mountinfo): which filesystem holds a path it writes",
	Requires: []checks.Node{RunnerFact},
	Compute: func(p *checks.Pass) (*Mounts, error) {
		r := RunnerFact.Get(p)
		if r.Selected == nil {
			return &Mounts{Err: errNoRunner(r)}, nil
		}
		src := "/proc/" + strconv.Itoa(r.Selected.PID) + "/mountinfo"
		m := &Mounts{Source: src}
		b, err := p.Env.ReadProc(src)
		if err != nil {
			m.Err = err
			return m, nil
		}
		m.List, m.Err = ParseMountinfo(string(b))
		return m, nil
	},
}

// ParseMountinfo reads mountinfo's lines: ID, parent, major:minor, root,
// mount point, options, optional fields up to "-", then filesystem type,
// source and super options (proc(5)). Paths carry octal escapes for space,
// tab, newline and backslash.
func ParseMountinfo(s string) ([]Mount, error) {
	var out []Mount
	for i, line := range strings.Split(s, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		f := strings.Fields(line)
		sep := -1
		for j := 6; j < len(f); j++ {
			if f[j] == "-" {
				sep = j
				break
			}
		}
		if sep < 0 || sep+1 >= len(f) {
			return out, fmt.Errorf("mountinfo line %d does not parse: %q", i+1, line)
		}
		m := Mount{Root: unescapeMount(f[3]), Point: unescapeMount(f[4]), FSType: f[sep+1], Line: i + 1}
		if sep+2 < len(f) {
			m.Source = unescapeMount(f[sep+2])
		}
		out = append(out, m)
	}
	return out, nil
}

// unescapeMount undoes the kernel's \ooo escapes (show_mountinfo's
// mangle of " \t\n\\").
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// Ephemeral says why what is written under the mount does not outlive the
// runner's container or host, or "" when it does: tmpfs and ramfs are
// memory; overlay is a container's writable layer, lost when the container
// is recreated; a Kubernetes emptyDir (the kubelet keeps it under
// pods/<uid>/volumes/kubernetes.io~empty-dir/) is deleted with its pod, and
// secret, configMap, projected and downwardAPI volumes are rewritten by the
// kubelet. Anything else (a block device, NFS, a CSI volume) persists.
func (m *Mount) Ephemeral() string {
	switch m.FSType {
	case "tmpfs", "ramfs":
		return m.FSType + " (memory): gone when the container or host restarts"
	case "overlay":
		return "overlay, the container's writable layer: gone when the container is recreated"
	}
	for _, kind := range []string{"empty-dir", "secret", "configmap", "projected", "downward-api"} {
		if strings.Contains(m.Root, "/kubernetes.io~"+kind+"/") {
			if kind == "empty-dir" {
				return "a Kubernetes emptyDir volume (" + m.Root + "): deleted with the pod"
			}
			return "a Kubernetes " + kind + " volume, which the kubelet rewrites"
		}
	}
	return ""
}

// Describe is the mount as evidence reads it.
func (m *Mount) Describe() string {
	return fmt.Sprintf("%s on %s type %s (root %s)", m.Source, m.Point, m.FSType, m.Root)
}
