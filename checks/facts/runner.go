// Package facts holds the providers every check reads: values gathered once
// per run from under the root (/proc, /etc, home directories) and shared.
package facts

import (
	"bytes"
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/socialwebcomputer/doctor/checks"
)

// Process is one gitlab-runner process as /proc shows it.
type Process struct {
	PID     int
	Comm    string
	Cmdline []string
	UID     int // effective; -1 unless UIDKnown
	GID     int
	// UIDKnown is false when /proc/<pid>/status could not be read or
	// parsed: the uid is then unknown, never guessed.
	UIDKnown bool
	Groups   []int  // supplementary
	User     string // from /etc/passwd; "" when the uid has no entry
	// Started is when the process started: field 22 of /proc/<pid>/stat
	// (clock ticks since boot) plus btime of /proc/stat; zero when unknown.
	Started time.Time
}

// Label names the process in evidence: "pid 4242 (uid 999 gitlab-runner)".
func (p *Process) Label() string {
	if !p.UIDKnown {
		return fmt.Sprintf("pid %d (uid unknown)", p.PID)
	}
	if p.User != "" {
		return fmt.Sprintf("pid %d (uid %d %s)", p.PID, p.UID, p.User)
	}
	return fmt.Sprintf("pid %d (uid %d)", p.PID, p.UID)
}

// Runners is every `gitlab-runner … run` process, and the one diagnosed.
type Runners struct {
	All      []*Process
	Selected *Process // nil when none was found, or --runner-pid named another
	// Problem says why Selected is nil when processes exist.
	Problem string
	// ScanErr is set when /proc itself could not be listed: the runner's
	// existence is then unknown, not disproved.
	ScanErr error
}

// Runner finds gitlab-runner run processes through /proc/*/comm and cmdline.
var Runner = &checks.Fact[*Runners]{
	ID:  "runner",
	Doc: "the gitlab-runner run processes under /proc and the one diagnosed",
	Compute: func(p *checks.Pass) (*Runners, error) {
		r := &Runners{}
		ents, err := p.Env.ReadDir("/proc")
		if err != nil {
			r.ScanErr = err
			r.Problem = "cannot list /proc: " + err.Error()
			return r, nil
		}
		passwd := ReadPasswd(p.Env)
		boot := bootTime(p.Env)
		for _, e := range ents {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid <= 0 {
				continue
			}
			proc, ok := readProcess(p.Env, pid, passwd)
			if ok {
				proc.Started = startTime(p.Env, pid, boot)
				r.All = append(r.All, proc)
			}
		}
		sort.Slice(r.All, func(i, j int) bool { return r.All[i].PID < r.All[j].PID })
		switch want := p.Env.RunnerPID; {
		case want != 0:
			for _, proc := range r.All {
				if proc.PID == want {
					r.Selected = proc
				}
			}
			if r.Selected == nil {
				r.Problem = fmt.Sprintf("--runner-pid %d is not a running `gitlab-runner run` process", want)
			}
		case len(r.All) > 0:
			r.Selected = r.All[0]
		}
		return r, nil
	},
}

// readProcess reads one /proc entry; processes that vanish mid-scan or are
// not `gitlab-runner … run` are not runners.
func readProcess(env *checks.Env, pid int, passwd map[int]PasswdEntry) (*Process, bool) {
	dir := "/proc/" + strconv.Itoa(pid)
	comm, _ := env.ReadProc(dir + "/comm")
	raw, err := env.ReadProc(dir + "/cmdline")
	if err != nil {
		return nil, false
	}
	args := splitNUL(raw)
	if !IsRunnerRun(strings.TrimSpace(string(comm)), args) {
		return nil, false
	}
	proc := &Process{PID: pid, Comm: strings.TrimSpace(string(comm)), Cmdline: args, UID: -1, GID: -1}
	if st, err := env.ReadProc(dir + "/status"); err == nil {
		for _, line := range strings.Split(string(st), "\n") {
			k, v, _ := strings.Cut(line, ":")
			f := strings.Fields(v)
			switch {
			case k == "Uid" && len(f) >= 2:
				if uid, err := strconv.Atoi(f[1]); err == nil && uid >= 0 {
					proc.UID, proc.UIDKnown = uid, true
				}
			case k == "Gid" && len(f) >= 2:
				proc.GID, _ = strconv.Atoi(f[1])
			case k == "Groups":
				for _, g := range f {
					if n, err := strconv.Atoi(g); err == nil {
						proc.Groups = append(proc.Groups, n)
					}
				}
			}
		}
	}
	if u, ok := passwd[proc.UID]; ok && proc.UIDKnown {
		proc.User = u.Name
	}
	return proc, true
}

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's starttime: 100 on
// every Linux architecture (the kernel exports times to user space in
// USER_HZ, include/asm-generic/param.h).
const clockTicks = 100

// maxUptime bounds a start time's seconds since boot (100 years).
const maxUptime = 100 * 365 * 24 * 3600

// bootTime is btime of /proc/stat, zero when unknown.
func bootTime(env *checks.Env) time.Time {
	b, err := env.ReadProc("/proc/stat")
	if err != nil {
		return time.Time{}
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "btime "); ok {
			if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil && n > 0 {
				return time.Unix(n, 0)
			}
		}
	}
	return time.Time{}
}

// startTime reads starttime, field 22 of /proc/<pid>/stat. The comm field
// (2) is in parentheses and may hold spaces or parentheses itself, so the
// fields are counted after its last ")".
func startTime(env *checks.Env, pid int, boot time.Time) time.Time {
	if boot.IsZero() {
		return time.Time{}
	}
	b, err := env.ReadProc("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return time.Time{}
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return time.Time{}
	}
	f := strings.Fields(string(b[i+1:]))
	// After comm: state is field 3, so starttime (22) is index 22-3.
	if len(f) < 20 {
		return time.Time{}
	}
	ticks, err := strconv.ParseInt(f[22-3], 10, 64)
	// A start more than a century after boot is no kernel's: garbage, and
	// its ticks in nanoseconds would overflow into a start before boot.
	if err != nil || ticks < 0 || ticks/clockTicks > maxUptime {
		return time.Time{}
	}
	return boot.Add(time.Duration(ticks/clockTicks)*time.Second + time.Duration(ticks%clockTicks)*time.Second/clockTicks)
}

// IsRunnerRun tells a runner's service process from other gitlab-runner
// invocations (register, verify, the helper): the binary is gitlab-runner and
// its subcommand is run.
func IsRunnerRun(comm string, args []string) bool {
	if len(args) == 0 {
		return false
	}
	bin := path.Base(args[0])
	if comm != "gitlab-runner" && bin != "gitlab-runner" && !strings.HasPrefix(bin, "gitlab-runner") {
		return false
	}
	for i := 1; i < len(args); i++ {
		a := args[i]
		if strings.HasPrefix(a, "-") {
			if globalValueFlags[strings.TrimLeft(a, "-")] {
				i++ // `--log-level debug run`: debug is the flag's value, not the subcommand
			}
			continue
		}
		return a == "run" // the first non-flag argument is the subcommand
	}
	return false
}

// globalValueFlags are gitlab-runner's global flags that take a separate
// value (urfave/cli also accepts --flag=value, which needs no skipping).
var globalValueFlags = map[string]bool{"log-level": true, "l": true, "log-format": true, "cpuprofile": true, "cpu-profile": true}

func splitNUL(b []byte) []string {
	b = bytes.TrimRight(b, "\x00")
	if len(b) == 0 {
		return nil
	}
	parts := bytes.Split(b, []byte{0})
	out := make([]string, len(parts))
	for i, p := range parts {
		out[i] = string(p)
	}
	return out
}

// PasswdEntry is one line of /etc/passwd.
type PasswdEntry struct {
	Name, Home, Shell string
	UID, GID          int
}

// ReadPasswd maps uids to users under the root; a missing file maps nothing.
func ReadPasswd(env *checks.Env) map[int]PasswdEntry {
	out := map[int]PasswdEntry{}
	b, err := env.ReadFile("/etc/passwd")
	if err != nil {
		return out
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Split(line, ":")
		if len(f) < 7 {
			continue
		}
		uid, err := strconv.Atoi(f[2])
		if err != nil {
			continue
		}
		gid, _ := strconv.Atoi(f[3])
		if _, dup := out[uid]; !dup {
			out[uid] = PasswdEntry{Name: f[0], Home: f[5], Shell: f[6], UID: uid, GID: gid}
		}
	}
	return out
}
