package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/report"
	"github.com/socialwebcomputer/doctor/testkit/cmdtest"
	"github.com/socialwebcomputer/doctor/testkit/testroot"
)

// The bad-input matrix (issue 8): each file doctor reads about the runner,
// spoiled every way a broken host spoils it. The built binary runs as a
// child process, so a panic, a block and the peak memory are its own.

const (
	environPath = "/proc/4242/environ"
	statusPath  = "/proc/4242/status"
	cmdlinePath = "/proc/4242/cmdline"
	// matrixTimeout is far above what a run takes, so a read that blocks
	// (a FIFO opened without O_NONBLOCK) shows as a wall time near it.
	matrixTimeout = 10 * time.Second
	maxWall       = 3 * time.Second
	maxRSS        = 150 << 20
)

// spoilers replace the file at p (a path under the root); the healthy
// fixture is the base of every case.
var spoilers = map[string]func(t *testing.T, p string){
	"absent":    func(t *testing.T, p string) { cmdtest.NoErr(t, os.Remove(p)) },
	"empty":     func(t *testing.T, p string) { writeSpoiled(t, p, nil) },
	"garbage":   func(t *testing.T, p string) { writeSpoiled(t, p, garbage()) },
	"truncated": truncate,
	"100 MiB":   writeHundredMiB,
	"a directory": func(t *testing.T, p string) {
		cmdtest.NoErr(t, os.Remove(p))
		cmdtest.NoErr(t, os.Mkdir(p, 0o700))
	},
	"a symlink loop": func(t *testing.T, p string) {
		cmdtest.NoErr(t, os.Remove(p))
		cmdtest.NoErr(t, os.Symlink(filepath.Base(p), p)) // points at itself
	},
	"a FIFO": func(t *testing.T, p string) {
		cmdtest.NoErr(t, os.Remove(p))
		cmdtest.NoErr(t, syscall.Mkfifo(p, 0o600))
	},
	"a symlink to /dev/zero": func(t *testing.T, p string) {
		cmdtest.NoErr(t, os.Remove(p))
		cmdtest.NoErr(t, os.Symlink("/dev/zero", p))
	},
	// The file is doctor's to read no more; doctor runs as nobody (see
	// runMatrixCase), which owns the rest of the root.
	"no permission": func(t *testing.T, p string) { cmdtest.NoErr(t, os.Chmod(p, 0)) },
	"another executor": func(t *testing.T, p string) {
		b, err := os.ReadFile(p)
		cmdtest.NoErr(t, err)
		writeSpoiled(t, p, bytes.Replace(b, []byte(`executor = "kubernetes"`), []byte(`executor = "shell"`), 1))
	},
	"another subcommand": func(t *testing.T, p string) {
		writeSpoiled(t, p, []byte("/usr/bin/gitlab-runner\x00register\x00--non-interactive\x00"))
	},
}

// writeHundredMiB writes 100 MiB a MiB at a time: a buffer that size would
// raise this process's peak RSS, which the kernel also charges to every
// child it starts (vfork shares the memory until exec).
func writeHundredMiB(t *testing.T, p string) {
	f, err := os.Create(p)
	cmdtest.NoErr(t, err)
	chunk := bytes.Repeat([]byte("# padding\n"), 1<<20/10)
	for written := 0; written < 100<<20; written += len(chunk) {
		_, err = f.Write(chunk)
		cmdtest.NoErr(t, err)
	}
	cmdtest.NoErr(t, f.Close())
}

// truncate cuts a file where a crash or a full disk would: mid-value.
func truncate(t *testing.T, p string) {
	b, err := os.ReadFile(p)
	cmdtest.NoErr(t, err)
	cut := len(b) / 2
	for marker, after := range map[string]int{
		`url = "https://gitl`:     len(`url = "https://gitl`), // config.toml: inside a string on line 6
		"Uid:\t0\t0":              len("Uid:\t0\t0"),          // status: inside the Uid line
		"KUBECONFIG=/etc/gitlab-": len("KUBECONFIG=/etc/gitlab-"),
		"--config\x00/etc/gitlab": len("--config\x00/etc/gitlab"),
	} {
		if i := bytes.Index(b, []byte(marker)); i >= 0 {
			cut = i + after
		}
	}
	writeSpoiled(t, p, b[:cut])
}

// matrixWant is what one case must produce: the check's status and what
// its findings (or its reason, when unknown) say, beyond the file's path.
type matrixWant struct {
	check, status string
	says          []string
	// healthy: the input is valid, only not what the checks named expect;
	// the run may exit 0 and need not name the file.
	healthy bool
}

func fail(check string, says ...string) matrixWant {
	return matrixWant{check: check, status: string(checks.StatusFail), says: says}
}

func unknown(check string, says ...string) matrixWant {
	return matrixWant{check: check, status: string(checks.StatusUnknown), says: says}
}

var badInputMatrix = map[string]map[string]matrixWant{
	configPath: {
		"absent":                 fail("config-decode", "does not exist"),
		"empty":                  fail("config-decode", "has no [[runners]]"),
		"garbage":                fail("config-decode", "does not decode", "line 1"),
		"truncated":              fail("config-decode", "does not decode", "line 6"),
		"100 MiB":                fail("config-decode", "larger than 10 MiB"),
		"a directory":            fail("config-decode", "is a directory"),
		"a symlink loop":         fail("config-decode", "too many levels of symbolic links"),
		"a FIFO":                 fail("config-decode", "not a regular file (a FIFO)"),
		"a symlink to /dev/zero": fail("config-decode", "not a regular file (a character device)"),
		"no permission":          unknown("config-decode", "permission denied", "uid 65534", "sudo doctor run"),
		// A runner of another executor has none of the Kubernetes checks.
		"another executor": {"runner-kubeconfig-env", string(checks.StatusSkipped), []string{"applies to kubernetes runners", "shell"}, true},
	},
	kubePath: {
		"absent":                 fail("kubeconfig-file", "does not exist"),
		"empty":                  fail("kubeconfig-file", "no current-context"),
		"garbage":                fail("kubeconfig-file", "does not parse"),
		"truncated":              fail("kubeconfig-file", "does not parse"),
		"100 MiB":                fail("kubeconfig-file", "larger than 10 MiB"),
		"a directory":            fail("kubeconfig-file", "is a directory"),
		"a symlink loop":         fail("kubeconfig-file", "too many levels of symbolic links"),
		"a FIFO":                 fail("kubeconfig-file", "not a regular file (a FIFO)"),
		"a symlink to /dev/zero": fail("kubeconfig-file", "not a regular file (a character device)"),
		"no permission":          unknown("kubeconfig-file", "permission denied", "uid 65534", "sudo doctor run"),
	},
	environPath: {
		"absent": unknown("runner-kubeconfig-env", "no such file or directory"),
		// A process started with no environment: KUBECONFIG is truly unset.
		"empty":                  fail("runner-kubeconfig-env", "KUBECONFIG is not set"),
		"garbage":                unknown("runner-kubeconfig-env", "not an environment block"),
		"truncated":              unknown("runner-kubeconfig-env", "does not end in NUL", "truncated"),
		"100 MiB":                unknown("runner-kubeconfig-env", "larger than 10 MiB"),
		"a directory":            unknown("runner-kubeconfig-env", "is a directory"),
		"a symlink loop":         unknown("runner-kubeconfig-env", "too many levels of symbolic links"),
		"a FIFO":                 unknown("runner-kubeconfig-env", "not a regular file (a FIFO)"),
		"a symlink to /dev/zero": unknown("runner-kubeconfig-env", "not a regular file (a character device)"),
		"no permission":          unknown("runner-kubeconfig-env", "permission denied", "run as root"),
	},
	// The uid is unknown, so is every judgement made for it.
	statusPath: {
		"absent":                 unknown("kubeconfig-file", "uid unknown", "no such file or directory"),
		"empty":                  unknown("kubeconfig-file", "uid unknown", "no complete Uid line"),
		"garbage":                unknown("kubeconfig-file", "uid unknown", "not text"),
		"truncated":              unknown("kubeconfig-file", "uid unknown", "no complete Uid line"),
		"100 MiB":                unknown("kubeconfig-file", "uid unknown", "larger than 10 MiB"),
		"a directory":            unknown("kubeconfig-file", "uid unknown", "is a directory"),
		"a symlink loop":         unknown("kubeconfig-file", "uid unknown", "too many levels of symbolic links"),
		"a FIFO":                 unknown("kubeconfig-file", "uid unknown", "not a regular file (a FIFO)"),
		"a symlink to /dev/zero": unknown("kubeconfig-file", "uid unknown", "not a regular file (a character device)"),
		"no permission":          unknown("kubeconfig-file", "uid unknown", "permission denied"),
	},
	// The process is a runner by its comm, and says so.
	cmdlinePath: {
		"absent":                 unknown("runner-process", "by its comm alone", "no such file or directory"),
		"empty":                  fail("runner-process", "No `gitlab-runner run` process", "empty: the process has exited"),
		"garbage":                unknown("runner-process", "by its comm alone", "not text"),
		"truncated":              unknown("runner-process", "by its comm alone", "truncated"),
		"100 MiB":                unknown("runner-process", "by its comm alone", "larger than 10 MiB"),
		"a directory":            unknown("runner-process", "by its comm alone", "is a directory"),
		"a symlink loop":         unknown("runner-process", "by its comm alone", "too many levels of symbolic links"),
		"a FIFO":                 unknown("runner-process", "by its comm alone", "not a regular file (a FIFO)"),
		"a symlink to /dev/zero": unknown("runner-process", "by its comm alone", "not a regular file (a character device)"),
		"no permission":          unknown("runner-process", "by its comm alone", "permission denied"),
		"another subcommand":     fail("runner-process", "No `gitlab-runner run` process"),
	},
}

// guessedIDs are the traces of a uid or gid taken from a status that did
// not say it.
var guessedIDs = regexp.MustCompile(`uid -1|gid -1|chown -1|-o -1 |owner -1|:-1 `)

func TestBadInputMatrix(t *testing.T) {
	bin := cmdtest.BuildDoctor(t)
	passable(t, filepath.Dir(bin)) // nobody runs it too
	t.Logf("baseline, the healthy fixture unspoiled: peak RSS %s", exactPeakRSS(bin, healthyRoot(t)))
	for file, cases := range badInputMatrix {
		for mode, want := range cases {
			t.Run(path.Base(file)+"/"+mode, func(t *testing.T) {
				root := healthyRoot(t)
				// Under --root a symlink to /dev/zero resolves inside the
				// root, as a chroot's would: the root has its device.
				testroot.MakeZero(t, root, "/dev/zero")
				spoilers[mode](t, filepath.Join(root, file))
				// The bundle's directory is the user's doctor runs as: it
				// writes in no other user's.
				asNobody := mode == "no permission"
				bundleDir := t.TempDir()
				if asNobody {
					bundleDir = nobodysDir(t)
				}
				bundle := filepath.Join(bundleDir, "bundle.tar.gz")
				res := runMatrixCase(t, bin, root, asNobody, "--bundle", bundle)
				res.assertBounded(t)
				// The bundle is the same input to the same checks; analyze
				// runs as a child too, so this process stays small.
				assertChildAnalyzeEqualsLive(t, bin, res.rep, bundle)
				if res.code == report.ExitOK && !want.healthy {
					t.Errorf("exit 0 on a spoiled %s", file)
				}
				status, text := checkText(res.rep, want.check)
				if status != want.status {
					t.Errorf("%s is %s, want %s:\n%s", want.check, status, want.status, text)
				}
				says := want.says
				if !want.healthy {
					says = append([]string{file}, says...)
				}
				for _, s := range says {
					if !strings.Contains(text, s) {
						t.Errorf("%s does not say %q:\n%s", want.check, s, text)
					}
				}
				if m := guessedIDs.FindString(res.stdout); m != "" {
					t.Errorf("the report guesses an id (%q):\n%s", m, res.stdout)
				}
				if file == statusPath && res.statusOf("runner-process") != string(checks.StatusPass) {
					// The process is there; only its uid is unknown.
					t.Errorf("runner-process is %s with a spoiled status", res.statusOf("runner-process"))
				}
				if file == cmdlinePath && want.status == string(checks.StatusUnknown) {
					// Which config.toml it reads, only its --config says.
					if s, text := checkText(res.rep, "config-decode"); s != string(checks.StatusUnknown) || !strings.Contains(text, "--config is unknown") {
						t.Errorf("config-decode is %s, want unknown saying its --config is unknown:\n%s", s, text)
					}
				}
				if mode == "100 MiB" {
					t.Logf("peak RSS %.1f MiB (at most; %s), wall %s", float64(res.maxRSS)/(1<<20), exactPeakRSS(bin, root),
						res.wall.Round(time.Millisecond))
				}
			})
		}
	}
}

type matrixResult struct {
	code           int
	stdout, stderr string
	rep            *report.Report
	wall           time.Duration
	maxRSS         int64 // bytes
}

// runMatrixCase runs the binary on root; asNobody runs it as uid 65534,
// owner of the whole root, so only the spoiled file's mode stops it.
func runMatrixCase(t *testing.T, bin, root string, asNobody bool, extra ...string) *matrixResult {
	t.Helper()
	args := []string{"run", "--root", root, "--now", "2026-11-29T12:00:00Z", "--offline", "-o", "json", "--timeout", matrixTimeout.String()}
	cmd := exec.Command(bin, append(args, extra...)...)
	cmd.Env = []string{hostio.LoopbackOnlyVar + "=1", "PATH=/usr/bin:/bin", "HOME=/nonexistent"}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if asNobody {
		giveToNobody(t, root)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: cmdtest.Nobody, Gid: cmdtest.Nobody}}
	}
	start := time.Now()
	err := cmd.Run()
	res := &matrixResult{wall: time.Since(start), stdout: out.String(), stderr: errb.String()}
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatalf("run %s: %v", bin, err)
	}
	res.code = cmd.ProcessState.ExitCode()
	res.maxRSS = cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10 // KiB on Linux
	var rep report.Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("exit %d, not a JSON report (%v); stderr:\n%s\nstdout:\n%s", res.code, err, res.stderr, res.stdout)
	}
	res.rep = &rep
	return res
}

// exactPeakRSS measures the run again under GNU time, whose small process
// forks doctor: the child's rusage of a Go test (vfork) also holds the
// test's own peak, so that figure is an upper bound. For RESULTS.md only.
func exactPeakRSS(bin, root string) string {
	cmd := exec.Command("/usr/bin/time", "-f", "%M", bin, "run", "--root", root, "--now", "2026-11-29T12:00:00Z",
		"--offline", "-o", "json", "--timeout", matrixTimeout.String())
	cmd.Env = []string{hostio.LoopbackOnlyVar + "=1", "PATH=/usr/bin:/bin", "HOME=/nonexistent"}
	var errb bytes.Buffer
	cmd.Stderr = &errb
	_ = cmd.Run() // doctor exits non-zero on a spoiled input
	lines := strings.Fields(errb.String())
	if len(lines) == 0 {
		return "/usr/bin/time gave nothing"
	}
	kib, err := strconv.Atoi(lines[len(lines)-1])
	if err != nil {
		return "/usr/bin/time: " + lines[len(lines)-1]
	}
	return fmt.Sprintf("%.1f MiB under /usr/bin/time", float64(kib)/1024)
}

// assertBounded: no panic, no block, no file read whole.
func (r *matrixResult) assertBounded(t *testing.T) {
	t.Helper()
	if strings.Contains(r.stderr, "panic:") || strings.Contains(r.stderr, "goroutine ") {
		t.Errorf("panicked:\n%s", r.stderr)
	}
	if r.wall > maxWall {
		t.Errorf("took %s (the deadline is %s): something blocked", r.wall, matrixTimeout)
	}
	if r.maxRSS > maxRSS {
		t.Errorf("peak RSS %d MiB, over %d MiB", r.maxRSS>>20, maxRSS>>20)
	}
	for _, c := range r.rep.Checks {
		if c.Status == checks.StatusUnknown && strings.Contains(c.Reason, "panic") {
			t.Errorf("%s panicked: %s", c.ID, c.Reason)
		}
	}
}

func (r *matrixResult) statusOf(check string) string {
	s, _ := checkText(r.rep, check)
	return s
}

// checkText is a check's status and everything it said: its reason, and
// its findings' causes, evidence and fixes.
func checkText(rep *report.Report, check string) (string, string) {
	status := "absent"
	var b strings.Builder
	for _, c := range rep.Checks {
		if c.ID == check {
			status = string(c.Status)
			fmt.Fprintf(&b, "status %s: %s\n", c.Status, c.Reason)
		}
	}
	b.WriteString(findingsText(rep, check))
	for _, f := range rep.Findings {
		if f.Check == check {
			b.WriteString("fix: " + f.Fix + "\n")
		}
	}
	return status, b.String()
}

// giveToNobody makes the root nobody's, and the directories above it
// passable, so what nobody cannot read is only what the case spoiled.
func giveToNobody(t *testing.T, root string) {
	t.Helper()
	cmdtest.NoErr(t, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, cmdtest.Nobody, cmdtest.Nobody)
	}))
	passable(t, filepath.Dir(root))
}

func assertChildAnalyzeEqualsLive(t *testing.T, bin string, live *report.Report, bundle string) {
	t.Helper()
	cmd := exec.Command(bin, "analyze", bundle, "-o", "json")
	cmd.Env = []string{hostio.LoopbackOnlyVar + "=1", "PATH=/usr/bin:/bin", "HOME=/nonexistent"}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	_ = cmd.Run()
	var got report.Report
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("analyze: exit %d, %s: %v", cmd.ProcessState.ExitCode(), errb.String(), err)
	}
	if code := cmd.ProcessState.ExitCode(); code != live.Summary.ExitCode {
		t.Errorf("analyze exit %d, the live run's %d", code, live.Summary.ExitCode)
	}
	if want, have := comparable(live), comparable(&got); !reflect.DeepEqual(want, have) {
		wj, _ := json.MarshalIndent(want, "", " ")
		hj, _ := json.MarshalIndent(have, "", " ")
		t.Errorf("analyze differs from the live run:\n%s", cmdtest.FirstDifference(string(wj), string(hj)))
	}
}

// nobodysDir is a directory nobody may write, for the bundle.
func nobodysDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	passable(t, dir)
	cmdtest.NoErr(t, os.Chown(dir, cmdtest.Nobody, cmdtest.Nobody))
	return dir
}

// passable lets every user through dir and the directories above it.
func passable(t *testing.T, dir string) {
	t.Helper()
	for ; dir != "/" && dir != "."; dir = filepath.Dir(dir) {
		st, err := os.Stat(dir)
		cmdtest.NoErr(t, err)
		if st.Mode().Perm()&0o001 == 0 { // the test's own temporary directories; /tmp keeps its sticky bit
			cmdtest.NoErr(t, os.Chmod(dir, st.Mode().Perm()|0o011))
		}
	}
}
