// Package facts holds the providers every check reads: values gathered once
// per run from under the root (/proc, /etc, home directories) and shared.
package hostfacts

import (
	"bytes"
	"errors"
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/internal/redact"
	"github.com/socialwebcomputer/doctor/internal/text/lazyre"
)

// Process is one gitlab-runner process as /proc shows it.
type Process struct {
	PID     int
	Comm    string
	Cmdline []string
	UID     int // effective; -1 unless UIDKnown
	GID     int
	// UIDKnown is false when /proc/<pid>/status could not be read or
	// parsed: the uid is then unknown, never guessed. StatusErr says why.
	UIDKnown  bool
	StatusErr error
	// CmdlineErr is set when /proc/<pid>/cmdline could not be read or is
	// not an argv: the process is a runner by its comm alone, and its
	// subcommand and flags (--config, --working-directory) are unknown.
	CmdlineErr error
	Groups     []int  // supplementary
	User       string // from /etc/passwd; "" when the uid has no entry
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

// UIDProblem says why the uid is unknown, for a check that needs it:
// "its uid is unknown (/proc/4242/status: no complete Uid line)".
func (p *Process) UIDProblem() string {
	if p.StatusErr != nil {
		return "its uid is unknown (" + p.StatusErr.Error() + ")"
	}
	return "its uid is unknown"
}

// Runner is every `gitlab-runner … run` process, and the one diagnosed.
type Runner struct {
	All      []*Process
	Selected *Process // nil when none was found, or --runner-pid named another
	// Problem says why Selected is nil when processes exist.
	Problem string
	// ScanErr is set when /proc itself could not be listed: the runner's
	// existence is then unknown, not disproved.
	ScanErr error
	// NotRun are gitlab-runner processes that are not `run`: another
	// subcommand (register, the helper), or one that has exited.
	NotRun []checks.Evidence
}

// maxNotRun bounds NotRun: a host of helpers is not evidence worth a page.
const maxNotRun = 5

// notRunEvidence describes a gitlab-runner process that is not `run`,
// naming its subcommand only: a register's flags carry a token. Its source
// is /proc, as the finding's own, so that a passing `gitlab-runner verify`
// does not change the finding's fingerprint (report.Fingerprint).
func notRunEvidence(proc *Process) checks.Evidence {
	src, cmdline := "/proc", "/proc/"+strconv.Itoa(proc.PID)+"/cmdline"
	if proc.CmdlineErr != nil {
		return checks.Evidence{Source: src, Detail: fmt.Sprintf("%s: comm %s, %v", cmdline, proc.Comm, hostio.FileCause(proc.CmdlineErr))}
	}
	sub := subcommand(proc.Cmdline)
	if !validSubcommand().MatchString(sub) {
		sub = "no subcommand"
	}
	return checks.Evidence{Source: src, Detail: fmt.Sprintf("%s: %s %s, not the run subcommand", cmdline, truncateForEvidence(path.Base(proc.Cmdline[0])), sub)}
}

var validSubcommand = lazyre.MustCompile(`^[a-z][a-z-]{0,30}$`)

// RunnerFact finds gitlab-runner run processes through /proc/*/comm and cmdline.
var RunnerFact = &checks.Fact[*Runner]{
	ID:  "runner",
	Doc: "the gitlab-runner run processes under /proc and the one diagnosed",
	Compute: func(p *checks.Pass) (*Runner, error) {
		r := &Runner{}
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
			if !ok && proc != nil && len(r.NotRun) < maxNotRun {
				r.NotRun = append(r.NotRun, notRunEvidence(proc))
			}
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
			// A process known by its command line to be `run` before one
			// that is a runner by its comm alone.
			r.Selected = r.All[0]
			for _, proc := range r.All {
				if proc.CmdlineErr == nil {
					r.Selected = proc
					break
				}
			}
		}
		return r, nil
	},
}

// readProcess reads one /proc entry; processes that vanish mid-scan or are
// not `gitlab-runner … run` are not runners. A process whose comm is
// gitlab-runner but whose cmdline cannot be read is one, identified by comm
// alone (CmdlineErr says so); one whose cmdline is empty has exited.
func readProcess(env *hostio.Env, pid int, passwd map[int]PasswdEntry) (*Process, bool) {
	dir := "/proc/" + strconv.Itoa(pid)
	raw, commErr := env.ReadProc(dir + "/comm")
	// The kernel writes comm with one newline (fs/proc/base.c comm_show).
	comm := strings.TrimSuffix(string(raw), "\n")
	proc := &Process{PID: pid, Comm: comm, UID: -1, GID: -1}
	raw, err := env.ReadProc(dir + "/cmdline")
	if err == nil {
		proc.Cmdline, err = parseCmdline(raw)
		// The values of flags that are no process option of the runner's
		// (a run-single's --token, a setting's secret) become stand-ins
		// where the command line is read: every check, the report and the
		// bundle see the same words (redact.Argv).
		proc.Cmdline = redact.Argv(proc.Cmdline, redact.StandIn)
		if err != nil {
			err = &hostio.FileError{Path: dir + "/cmdline", Err: err}
		}
	}
	switch {
	case err == nil:
		if !IsRunnerRun(comm, proc.Cmdline) {
			return notRun(proc, isRunnerBinary(comm, proc.Cmdline), nil)
		}
	case commErr != nil || comm != "gitlab-runner":
		return nil, false
	case errors.Is(err, ErrCmdlineEmpty):
		return notRun(proc, true, err)
	default:
		proc.CmdlineErr = err
	}
	if raw, err := env.ReadProc(dir + "/status"); err != nil {
		proc.StatusErr = err
	} else if st, err := parseStatus(raw); err != nil {
		proc.StatusErr = &hostio.FileError{Path: dir + "/status", Err: err}
	} else {
		proc.UID, proc.GID, proc.Groups, proc.UIDKnown = st.UID, st.GID, st.Groups, true
	}
	if u, ok := passwd[proc.UID]; ok && proc.UIDKnown {
		proc.User = u.Name
	}
	return proc, true
}

// notRun is a gitlab-runner process that is not `gitlab-runner run`,
// returned (with false) so the finding that no runner runs can name it.
func notRun(proc *Process, runnerBinary bool, err error) (*Process, bool) {
	if !runnerBinary {
		return nil, false
	}
	proc.CmdlineErr = err
	return proc, false
}

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's starttime: 100 on
// every Linux architecture (the kernel exports times to user space in
// USER_HZ, include/asm-generic/param.h).
const clockTicks = 100

// maxUptime bounds a start time's seconds since boot (100 years).
const maxUptime = 100 * 365 * 24 * 3600

// bootTime is btime of /proc/stat, zero when unknown.
func bootTime(env *hostio.Env) time.Time {
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
func startTime(env *hostio.Env, pid int, boot time.Time) time.Time {
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
	return isRunnerBinary(comm, args) && subcommand(args) == "run"
}

func isRunnerBinary(comm string, args []string) bool {
	if len(args) == 0 {
		return false
	}
	bin := path.Base(args[0])
	return comm == "gitlab-runner" || strings.HasPrefix(bin, "gitlab-runner")
}

// subcommand is the first non-flag argument; "" when there is none.
func subcommand(args []string) string {
	for i := 1; i < len(args); i++ {
		a := args[i]
		if strings.HasPrefix(a, "-") {
			if globalValueFlags[strings.TrimLeft(a, "-")] {
				i++ // `--log-level debug run`: debug is the flag's value, not the subcommand
			}
			continue
		}
		return a
	}
	return ""
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
func ReadPasswd(env *hostio.Env) map[int]PasswdEntry {
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

// FlagValue finds a flag's value in a command line, in the forms urfave/cli
// accepts: --flag v, --flag=v, -c v, -c=v.
func FlagValue(args []string, names ...string) (string, bool) {
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		for _, n := range names {
			if a == n && i+1 < len(args) {
				return args[i+1], true
			}
			if strings.HasPrefix(a, n+"=") {
				return strings.TrimPrefix(a, n+"="), true
			}
		}
	}
	return "", false
}
