// Package realsystemd runs the machine's own systemd (/lib/systemd/systemd,
// Debian's 252 in CI) as PID 1 of a private PID, mount, cgroup, UTS, IPC
// and network namespace, with unit directories the test lays out, so a test
// can ask it with `systemctl show` what it makes of them: systemd's own
// evaluation, which doctor's model of it (internal/source/systemd) must
// agree with.
//
// Nothing of the host changes: /etc is an overlay whose writes land in a
// temporary directory; /proc/sys and /sys are read-only; /run is a tmpfs;
// /dev/console and /dev/kmsg are /dev/null, so the manager's log goes
// nowhere on the host; the cgroup tree systemd builds lives under a
// sub-cgroup of the test's own, removed at the end; the network namespace
// is new and empty, so the manager's loopback set-up touches only its own
// lo; the UTS namespace keeps its hostname its own. No generator runs (their
// directories are empty tmpfs mounts), so the unit directories hold only
// what the test lays out, and a reload takes a few milliseconds. The unit directories
// /etc/systemd/system, /run/systemd/system and /usr/lib/systemd/system (on a
// merged-/usr host also /lib/systemd/system) are bind mounts of the test's
// directories; the default target is a target of the test's that pulls in
// nothing, so the manager starts no service.
//
// It needs root (CAP_SYS_ADMIN for the namespaces and mounts), util-linux's
// unshare and nsenter, the systemd package's systemd and systemctl, a
// cgroup2 hierarchy and overlayfs. Where one is missing the test is
// skipped, naming it, or failed under DOCTOR_REQUIRE_TOOLS=1 or CI=true
// (testkit/tools).
package realsystemd

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/testkit/tools"
)

// Dirs are the unit directories a test lays out, as host paths: each is a
// directory of the test's, bind-mounted there in the manager's namespace.
// /lib/systemd/system is the same directory as /usr/lib/systemd/system on
// a merged-/usr host (Debian 12), which MergedUsr says.
var Dirs = []string{
	"/etc/systemd/system",
	"/etc/systemd/system.control",
	"/run/systemd/system",
	"/run/systemd/system.control",
	"/run/systemd/transient",
	"/usr/lib/systemd/system",
}

// Target is the manager's default target: it pulls in nothing. A test that
// wants a unit kept loaded (systemd unloads an unreferenced unit it only
// loaded to answer a query) writes its own After= into
// /run/systemd/system/doctor-test.target.d/*.conf.
const Target = "doctor-test.target"

const targetUnit = "[Unit]\nDescription=doctor test: pulls in nothing\n"

// Manager is one running systemd.
type Manager struct {
	t       testing.TB
	dir     string // the test's directory: lay/<n> for each of Dirs, up/, work/
	cgroup  string // the sub-cgroup everything runs in
	unshare *exec.Cmd
	pid1    int // the manager's pid, as this process sees it
	// MergedUsr says /lib is a symlink to usr/lib here, so
	// /lib/systemd/system is /usr/lib/systemd/system.
	MergedUsr bool
	// Version is the manager's `systemctl show -p Version`.
	Version string
}

// Start runs a manager and waits until it answers; t's cleanup stops it
// and removes its cgroup.
func Start(t testing.TB) *Manager {
	t.Helper()
	if os.Geteuid() != 0 {
		tools.Missing(t, "the real systemd runs as PID 1 of its own namespaces, which needs root (the test runs as uid "+strconv.Itoa(os.Geteuid())+")")
	}
	for _, name := range []string{"unshare", "nsenter"} {
		tools.Need(t, name, "Debian's util-linux package")
	}
	tools.Need(t, "systemctl", "Debian's systemd package")
	systemd := ""
	for _, p := range []string{"/lib/systemd/systemd", "/usr/lib/systemd/systemd"} {
		if st, err := os.Stat(p); err == nil && st.Mode()&0o111 != 0 {
			systemd = p
			break
		}
	}
	if systemd == "" {
		tools.Missing(t, "/lib/systemd/systemd is not installed (Debian's systemd package)")
	}
	if !filesystem("overlay") {
		tools.Missing(t, "the kernel has no overlay filesystem (/proc/filesystems), which keeps the manager's writes to /etc off the host")
	}
	v2, own, err := ownCgroup()
	if err != nil {
		tools.Missing(t, "no cgroup2 hierarchy to run systemd in: "+err.Error())
	}
	m := &Manager{t: t, dir: t.TempDir()}
	if l, err := os.Readlink("/lib"); err == nil && strings.TrimSuffix(l, "/") == "usr/lib" {
		m.MergedUsr = true
	}
	for _, d := range append([]string{"up", "work", "log"}, layNames()...) {
		if err := os.MkdirAll(filepath.Join(m.dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	m.cgroup = filepath.Join(v2, own, fmt.Sprintf("doctor-realsystemd-%d-%d", os.Getpid(), time.Now().UnixNano()))
	if err := os.Mkdir(m.cgroup, 0o755); err != nil {
		tools.Missing(t, "cannot make a cgroup for systemd under "+filepath.Join(v2, own)+": "+err.Error())
	}
	t.Cleanup(m.stop)
	if err := os.WriteFile(filepath.Join(m.dir, "log", "console"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := m.write("/run/systemd/system/"+Target, File{Content: targetUnit}); err != nil {
		t.Fatal(err)
	}
	m.unshare = exec.Command("sh", "-c", outer, "sh", m.cgroup, m.dir, systemd, inner)
	m.unshare.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin"}
	m.unshare.Stdout, m.unshare.Stderr = m.logFile("unshare.log"), m.logFile("unshare.log")
	m.unshare.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := m.unshare.Start(); err != nil {
		t.Fatalf("realsystemd: unshare: %v", err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for m.pid1 == 0 && time.Now().Before(deadline) {
		m.pid1 = child(m.unshare.Process.Pid)
		if m.pid1 == 0 {
			time.Sleep(50 * time.Millisecond)
		}
	}
	for time.Now().Before(deadline) {
		out, _ := m.systemctl("is-system-running")
		if s := strings.TrimSpace(out); s == "running" || s == "degraded" {
			v, err := m.systemctl("show", "-p", "Version", "--value")
			if err != nil {
				t.Fatalf("realsystemd: systemctl show -p Version: %v", err)
			}
			m.Version = strings.TrimSpace(v)
			return m
		}
		if m.exited() {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("realsystemd: %s did not come up as PID 1 of its namespace within 60s; its log:\n%s", systemd, m.logs())
	return nil
}

// outer puts itself in the new cgroup, so that the cgroup namespace unshare
// makes is rooted there, then becomes unshare, whose child, PID 1 of the
// new namespaces, runs inner ($5) until it execs systemd. $1 the cgroup,
// $2 the test's directory, $3 systemd.
const outer = `set -eu
echo $$ > "$1/cgroup.procs"
exec unshare --pid --fork --mount --cgroup --uts --ipc --net --mount-proc --kill-child sh -c "$4" sh "$2" "$3"`

// inner's mounts are private to the namespace (--make-rprivate first).
// /etc is an overlay whose upper layer is the test's; a machine-id is
// written there when the host has none, or the manager would take this
// for a first boot and enable units by preset. The unit directories are
// mounted after /etc and /run, over them.
const inner = `set -eu
L=$1
mount --make-rprivate /
mount -t overlay overlay -o "lowerdir=/etc,upperdir=$L/up,workdir=$L/work" /etc
if [ ! -s /etc/machine-id ] || [ "$(cat /etc/machine-id)" = uninitialized ]; then
  echo 0123456789abcdef0123456789abcdef > /etc/machine-id
fi
mount -t cgroup2 cgroup2 /sys/fs/cgroup
mount --bind /proc/sys /proc/sys
mount -o remount,bind,ro /proc/sys
mount -t tmpfs -o mode=0755 tmpfs /run
for d in /etc/systemd/system /etc/systemd/system.control /run/systemd/system /run/systemd/system.control /run/systemd/transient /usr/lib/systemd/system; do
  mkdir -p "$d"
  mount --bind "$L/lay$(echo "$d" | tr / _)" "$d"
done
if [ ! -L /lib ] && [ -d /lib/systemd/system ]; then
  mount -t tmpfs tmpfs /lib/systemd/system
fi
for d in /usr/local/lib/systemd/system /usr/lib/systemd/system-generators /lib/systemd/system-generators /usr/local/lib/systemd/system-generators /etc/systemd/system-generators; do
  if [ -d "$d" ] && [ ! -L "$d" ]; then mount -t tmpfs tmpfs "$d"; fi
done
mount --bind "$L/log/console" /dev/console
mount --bind /dev/null /dev/kmsg
export container=doctor-test
exec "$2" --system --unit=` + Target + ` --log-target=console --log-level=info --show-status=no`

// lay is the test's directory for the unit directory d (one of Dirs).
func (m *Manager) lay(d string) string {
	return filepath.Join(m.dir, "lay"+strings.ReplaceAll(d, "/", "_"))
}

func layNames() []string {
	var out []string
	for _, d := range Dirs {
		out = append(out, "lay"+strings.ReplaceAll(d, "/", "_"))
	}
	return out
}

// File is one entry of a layout: a regular file with Content, or, with
// Link set, a symlink to Link; a Dir is an empty directory.
type File struct {
	Content string
	Link    string
	Dir     bool
}

// Layout empties every unit directory and writes files into them: the keys
// are host paths under one of Dirs (a path under /lib/systemd/system is
// taken as /usr/lib/systemd/system on a merged-/usr host). Then the
// manager reloads. The default target is written again into
// /run/systemd/system.
func (m *Manager) Layout(files map[string]File) error {
	for _, d := range Dirs {
		ents, err := os.ReadDir(m.lay(d))
		if err != nil {
			return err
		}
		for _, e := range ents {
			if err := os.RemoveAll(filepath.Join(m.lay(d), e.Name())); err != nil {
				return err
			}
		}
	}
	if err := m.write("/run/systemd/system/"+Target, File{Content: targetUnit}); err != nil {
		return err
	}
	for p, f := range files {
		if err := m.write(p, f); err != nil {
			return err
		}
	}
	if out, err := m.systemctl("daemon-reload"); err != nil {
		return fmt.Errorf("systemctl daemon-reload: %v: %s", err, out)
	}
	return nil
}

func (m *Manager) write(p string, f File) error {
	if m.MergedUsr && strings.HasPrefix(p, "/lib/systemd/system/") {
		p = "/usr" + p
	}
	var local string
	for _, d := range Dirs {
		if rest, ok := strings.CutPrefix(p, d+"/"); ok {
			local = filepath.Join(m.lay(d), filepath.FromSlash(rest))
		}
	}
	if local == "" {
		return fmt.Errorf("realsystemd: %s is in none of the unit directories", p)
	}
	if err := os.MkdirAll(filepath.Dir(local), 0o755); err != nil {
		return err
	}
	switch {
	case f.Dir:
		return os.MkdirAll(local, 0o755)
	case f.Link != "":
		return os.Symlink(f.Link, local)
	}
	return os.WriteFile(local, []byte(f.Content), 0o644)
}

// Show is `systemctl show UNIT -p PROPS`: each property's lines (a
// property systemctl prints once per item, EnvironmentFiles=, has several).
func (m *Manager) Show(unit string, props ...string) (map[string][]string, string, error) {
	out, err := m.systemctl("show", unit, "-p", strings.Join(props, ","))
	if err != nil {
		return nil, out, fmt.Errorf("systemctl show %s: %v: %s", unit, err, out)
	}
	got := map[string][]string{}
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if ok {
			got[k] = append(got[k], v)
		}
	}
	return got, out, nil
}

// ProbeDropIn is the drop-in Environ adds: it sorts after every name a
// test lays out that starts with a digit, a lowercase letter or "zz-"
// (bytes compare: "zz-" < "zzzz").
const ProbeDropIn = "zzzz-doctor-probe.conf"

// Environ starts unit once, as a oneshot whose command is `env -0` with
// its output in a file, and returns the environment the manager gave the
// process: the unit's Environment=, EnvironmentFile= and
// UnsetEnvironment= as systemd applies them, with the variables systemd
// adds itself. The probe drop-in (in /run/systemd/system/UNIT.d/) resets
// ExecStart=, User=, Group= and WorkingDirectory=, so the start needs no
// user or directory of the layout's; the layout is otherwise the
// caller's, laid out before.
func (m *Manager) Environ(unit string) (map[string]string, error) {
	probe := "[Unit]\nDefaultDependencies=no\n[Service]\nType=oneshot\nRemainAfterExit=no\nExecStart=\nExecStart=/usr/bin/env -0\nUser=\nGroup=\nWorkingDirectory=\n" +
		"StandardOutput=truncate:/run/doctor-probe.env\nStandardError=null\n"
	if err := m.write("/run/systemd/system/"+unit+".d/"+ProbeDropIn, File{Content: probe}); err != nil {
		return nil, err
	}
	defer os.Remove(filepath.Join(m.lay("/run/systemd/system"), unit+".d", ProbeDropIn))
	if out, err := m.systemctl("daemon-reload"); err != nil {
		return nil, fmt.Errorf("systemctl daemon-reload: %v: %s", err, out)
	}
	if out, err := m.systemctl("start", unit); err != nil {
		status, _ := m.systemctl("status", unit)
		return nil, fmt.Errorf("systemctl start %s: %v: %s\n%s", unit, err, out, status)
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/root/run/doctor-probe.env", m.pid1))
	if err != nil {
		return nil, err
	}
	env := map[string]string{}
	for _, kv := range strings.Split(string(b), "\x00") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	return env, nil
}

// SystemctlArgv is the argv that runs systemctl in the manager's
// namespaces, for code that runs systemctl itself.
func (m *Manager) SystemctlArgv() []string {
	return []string{"nsenter", "-t", strconv.Itoa(m.pid1), "-m", "-p", "--", "systemctl"}
}

// Write puts one file into a unit directory without reloading the
// manager: what an operator who forgets `systemctl daemon-reload` leaves.
func (m *Manager) Write(p string, f File) error { return m.write(p, f) }

// Systemctl runs systemctl in the manager's namespaces.
func (m *Manager) Systemctl(args ...string) (string, error) { return m.systemctl(args...) }

func (m *Manager) systemctl(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// The manager takes requests on /run/systemd/private only from a peer
	// of its own PID namespace (SO_PEERCRED's pid is 0 from outside).
	cmd := exec.CommandContext(ctx, "nsenter", append([]string{"-t", strconv.Itoa(m.pid1), "-m", "-p", "--", "systemctl", "--no-pager"}, args...)...)
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C", "SYSTEMD_PAGER=", "SYSTEMD_COLORS=0"}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil {
		return stdout.String() + stderr.String(), err
	}
	return stdout.String(), nil
}

func (m *Manager) logFile(name string) *os.File {
	f, err := os.OpenFile(filepath.Join(m.dir, "log", name), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		m.t.Fatal(err)
	}
	m.t.Cleanup(func() { f.Close() })
	return f
}

func (m *Manager) logs() string {
	var b strings.Builder
	for _, n := range []string{"unshare.log", "console"} {
		data, _ := os.ReadFile(filepath.Join(m.dir, "log", n))
		if len(data) > 8<<10 {
			data = data[len(data)-8<<10:]
		}
		fmt.Fprintf(&b, "--- %s\n%s\n", n, data)
	}
	return b.String()
}

func (m *Manager) exited() bool {
	return m.unshare.ProcessState != nil || syscall.Kill(m.unshare.Process.Pid, 0) != nil
}

// stop kills unshare, whose --kill-child kills the manager, and with PID
// 1 the whole namespace; then it removes the cgroups the manager made.
func (m *Manager) stop() {
	if m.unshare != nil && m.unshare.Process != nil {
		_ = m.unshare.Process.Kill()
		_ = m.unshare.Wait()
	}
	if m.cgroup == "" {
		return
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := removeTree(m.cgroup)
		if err == nil || errors.Is(err, os.ErrNotExist) {
			return
		}
		if time.Now().After(deadline) {
			m.t.Errorf("realsystemd: cannot remove the cgroup %s: %v", m.cgroup, err)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// removeTree removes a cgroup and the cgroups under it, deepest first (a
// cgroup directory goes with rmdir once it has no process and no child).
func removeTree(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if e.IsDir() {
			if err := removeTree(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	return syscall.Rmdir(dir)
}

// child is the first child of pid, 0 until it has one.
func child(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	n, _ := strconv.Atoi(f[0])
	return n
}

// ownCgroup is where the cgroup2 hierarchy is mounted and this process's
// cgroup in it (the "0::" line of /proc/self/cgroup).
func ownCgroup() (mount, own string, err error) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return "", "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		_, after, ok := strings.Cut(line, " - ")
		f := strings.Fields(line)
		if ok && strings.HasPrefix(after, "cgroup2 ") && len(f) > 4 {
			mount = f[4]
			break
		}
	}
	if mount == "" {
		return "", "", errors.New("/proc/self/mountinfo has no cgroup2 mount")
	}
	b, err = os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "0::"); ok {
			return mount, rest, nil
		}
	}
	return "", "", errors.New("/proc/self/cgroup has no cgroup2 line")
}

// filesystem says whether the kernel has the filesystem type name.
func filesystem(name string) bool {
	b, err := os.ReadFile("/proc/filesystems")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) > 0 && f[len(f)-1] == name {
			return true
		}
	}
	return false
}
