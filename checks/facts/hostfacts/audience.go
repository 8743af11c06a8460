package hostfacts

import (
	"fmt"
	"io/fs"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/internal/hostio"
)

// ServiceAccountDir is where a pod's service-account credentials are mounted.
const ServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// Audience is who, besides the runner's own user and root, may open the
// runner's files: on a host, its users (/etc/passwd and /etc/group); in a
// container, the other processes of that container, since a file inside it
// is reached only from inside it (and by the node's root, who reads
// anything). File-permission findings ask it who a mode lets in, instead
// of reading "any local user" off the mode bits.
type Audience struct {
	// Container is set when the runner runs in a container: a pod's (its
	// environ has KUBERNETES_SERVICE_HOST, its mounts the service-account
	// directory, its cgroup kubepods) or another runtime's.
	Container *Container
	passwd    map[int]PasswdEntry
	groups    map[int]GroupEntry
}

// Container is the runner's container as /proc shows it.
type Container struct {
	Kind     string            // "pod", or "container" (Docker, containerd, Podman)
	Evidence []checks.Evidence // what shows it
	// Others are the container's other processes: those in the runner's
	// mount namespace (/proc/<pid>/ns/mnt), or, where doctor cannot read
	// the namespace links (inside the pod, as a fixture or bundle shows
	// it), every process /proc shows but the runner.
	Others []*Process
}

// GroupEntry is one line of /etc/group.
type GroupEntry struct {
	Name    string
	GID     int
	Members []string
}

// ReadGroup maps gids to groups under the root; a missing file maps nothing.
func ReadGroup(env *hostio.Env) map[int]GroupEntry {
	out := map[int]GroupEntry{}
	b, err := env.ReadFile("/etc/group")
	if err != nil {
		return out
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Split(line, ":")
		if len(f) < 4 {
			continue
		}
		gid, err := strconv.Atoi(f[2])
		if err != nil {
			continue
		}
		if _, dup := out[gid]; dup {
			continue
		}
		g := GroupEntry{Name: f[0], GID: gid}
		for _, m := range strings.Split(f[3], ",") {
			if m = strings.TrimSpace(m); m != "" {
				g.Members = append(g.Members, m)
			}
		}
		out[gid] = g
	}
	return out
}

// AudienceFact finds the runner's container, and reads the host's users
// and groups.
var AudienceFact = &checks.Fact[*Audience]{
	ID:       "audience",
	Doc:      "who besides the runner may open its files: the other processes of its container, or the host's users and groups",
	Requires: []checks.Node{RunnerFact, EnvironFact, MountsFact},
	Compute: func(p *checks.Pass) (*Audience, error) {
		a := &Audience{passwd: ReadPasswd(p.Env), groups: ReadGroup(p.Env)}
		if proc := RunnerFact.Get(p).Selected; proc != nil {
			a.Container = findContainer(p.Env, proc, EnvironFact.Get(p), MountsFact.Get(p), a.passwd)
		}
		return a, nil
	},
}

// findContainer says whether proc runs in a container, and who else does.
func findContainer(env *hostio.Env, proc *Process, e *Environ, m *Mounts, passwd map[int]PasswdEntry) *Container {
	c := &Container{}
	pid := strconv.Itoa(proc.PID)
	// rest.InClusterConfig's variables, which the kubelet sets in every
	// container of a pod (pkg/kubelet/kubelet_pods.go, makeEnvironmentVariables).
	if e.Err == nil {
		if h, ok := e.Lookup("KUBERNETES_SERVICE_HOST"); ok && h != "" {
			c.Kind = "pod"
			c.Evidence = append(c.Evidence, checks.Evidence{Source: e.Source, Detail: "KUBERNETES_SERVICE_HOST=" + h})
		}
	}
	if m.Err == nil {
		for _, mt := range m.List {
			if mt.Point == ServiceAccountDir || mt.Point == strings.TrimPrefix(ServiceAccountDir, "/var") {
				c.Kind = "pod"
				c.Evidence = append(c.Evidence, checks.Evidence{Source: fmt.Sprintf("%s:%d", m.Source, mt.Line), Detail: "the service account is mounted at " + mt.Point})
			}
		}
	}
	if b, err := env.ReadProc("/proc/" + pid + "/cgroup"); err == nil {
		s := string(b)
		switch {
		case strings.Contains(s, "kubepods"):
			c.Kind = "pod"
			c.Evidence = append(c.Evidence, checks.Evidence{Source: "/proc/" + pid + "/cgroup", Detail: "a kubepods cgroup"})
		case c.Kind == "" && (strings.Contains(s, "docker") || strings.Contains(s, "containerd") || strings.Contains(s, "libpod")):
			c.Kind = "container"
			c.Evidence = append(c.Evidence, checks.Evidence{Source: "/proc/" + pid + "/cgroup", Detail: "a container runtime's cgroup"})
		}
	}
	if c.Kind == "" {
		return nil
	}
	c.Others = containerProcesses(env, proc, passwd)
	return c
}

// containerProcesses are the processes of proc's container but proc: those
// whose mount namespace is proc's. Where the namespace links cannot be read
// (doctor is not root, or reads a fixture or a bundle), every process /proc
// shows: doctor in the runner's pod sees the pod's processes only.
func containerProcesses(env *hostio.Env, proc *Process, passwd map[int]PasswdEntry) []*Process {
	ns, nsErr := env.Readlink("/proc/" + strconv.Itoa(proc.PID) + "/ns/mnt")
	ents, err := env.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []*Process
	for _, ent := range ents {
		pid, err := strconv.Atoi(ent.Name())
		if err != nil || pid <= 0 || pid == proc.PID {
			continue
		}
		dir := "/proc/" + ent.Name()
		if nsErr == nil {
			if other, err := env.Readlink(dir + "/ns/mnt"); err == nil && other != ns {
				continue
			}
		}
		raw, err := env.ReadProc(dir + "/status")
		if err != nil {
			continue // gone, or not a process
		}
		st, err := parseStatus(raw)
		if err != nil {
			continue
		}
		comm, _ := env.ReadProc(dir + "/comm")
		p := &Process{PID: pid, Comm: strings.TrimSuffix(string(comm), "\n"), UID: st.UID, GID: st.GID, Groups: st.Groups, UIDKnown: true}
		p.User = passwd[st.UID].Name
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].PID < out[j].PID })
	return out
}

// Exposure is who a file's mode lets in besides the runner's user and root.
type Exposure struct {
	// Class is "other" or "group": the permission class that lets them in.
	Class string
	// Who says who, as a finding's cause puts it: "any local user", "the
	// members of group 1001 (deploy, alice)", "pid 12 (uid 1002) in the
	// runner's pod".
	Who string
}

// Let says who besides the runner's user (ra), the file's owner and root
// the mode of st lets have access want (Read or Write): nil when nobody.
// On a host, the other class is any local user; the group class is the
// group's members in /etc/group and the users whose primary group it is
// in /etc/passwd, and is nobody when those are only the runner's user and
// the owner. In a container, it is its other processes that the kernel's
// order (owner, group, other) lets in.
func (a *Audience) Let(st fs.FileInfo, ra *RunAs, want fs.FileMode) *Exposure {
	mode := st.Mode()
	owner, group := Ownership(st)
	if c := a.Container; c != nil {
		var who []string
		class := "group"
		for _, p := range c.Others {
			if p.UID == 0 || p.UID == owner || ra != nil && ra.UIDKnown && p.UID == ra.UID {
				continue
			}
			pr := &RunAs{UID: p.UID, GID: p.GID, Groups: p.Groups}
			if !Permits(mode, owner, group, pr, want) {
				continue
			}
			if p.GID != group && !slices.Contains(p.Groups, group) {
				class = "other"
			}
			who = append(who, p.Label())
		}
		if len(who) == 0 {
			return nil
		}
		return &Exposure{Class: class, Who: fmt.Sprintf("%s in the runner's %s", strings.Join(who, ", "), c.Kind)}
	}
	perm := mode.Perm()
	if perm&want != 0 {
		return &Exposure{Class: "other", Who: "any local user"}
	}
	if perm&(want<<3) == 0 {
		return nil
	}
	members := a.members(group, ra, owner)
	if len(members) == 0 {
		return nil
	}
	name := strconv.Itoa(group)
	if g, ok := a.groups[group]; ok && g.Name != "" {
		name = fmt.Sprintf("%d %s", group, g.Name)
	}
	return &Exposure{Class: "group", Who: fmt.Sprintf("the members of group %s (%s)", name, strings.Join(members, ", "))}
}

// members are the users in group gid other than the runner's user, the
// file's owner and root: /etc/group's member list and the /etc/passwd
// entries whose primary group it is (getgrouplist(3) builds a login's
// groups from both). A group /etc/group does not list has only the
// passwd entries.
func (a *Audience) members(gid int, ra *RunAs, owner int) []string {
	self := ""
	if ra != nil && ra.UIDKnown {
		self = a.passwd[ra.UID].Name
		if self == "" {
			self = ra.User
		}
	}
	skip := func(name string, uid int) bool {
		return name == "" || name == "root" || name == self || uid == 0 || uid == owner || ra != nil && ra.UIDKnown && uid == ra.UID
	}
	uidOf := map[string]int{}
	for uid, e := range a.passwd {
		uidOf[e.Name] = uid
	}
	seen := map[string]bool{}
	var out []string
	for _, m := range a.groups[gid].Members {
		uid, known := uidOf[m]
		if !known {
			uid = -1
		}
		if !seen[m] && !skip(m, uid) {
			seen[m] = true
			out = append(out, m)
		}
	}
	for uid, e := range a.passwd {
		if e.GID == gid && !seen[e.Name] && !skip(e.Name, uid) {
			seen[e.Name] = true
			out = append(out, e.Name)
		}
	}
	sort.Strings(out)
	return out
}
