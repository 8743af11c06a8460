package kubefacts

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts/configfacts"
	"github.com/socialwebcomputer/doctor/checks/facts/hostfacts"
	"github.com/socialwebcomputer/doctor/internal/hostio"
)

// helperEnv marks the child started by TestRealProcess: it only sleeps.
const helperEnv = "DOCTOR_FACTS_HELPER_SLEEP"

// TestHelperProcess is the child's body, not a test: the parent runs this
// test binary under the name gitlab-runner with a runner's command line, so
// /proc shows exactly what a runner's entry shows.
func TestHelperProcess(t *testing.T) {
	if os.Getenv(helperEnv) != "1" {
		return
	}
	time.Sleep(60 * time.Second) // the parent kills it long before
	os.Exit(0)
}

// StartFakeRunner runs the test binary as <tmp>/gitlab-runner in dir with
// the given arguments after argv[0] and exactly env (plus the helper
// marker), and kills it when the test ends. It returns the child's pid once
// /proc shows its final command line.
func StartFakeRunner(t *testing.T, dir string, args []string, env []string) int {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "gitlab-runner")
	// A symlink: the kernel names the process (comm) after the path it was
	// started by, so comm is gitlab-runner as for the real binary.
	if err := os.Symlink(self, bin); err != nil {
		t.Fatal(err)
	}
	// -test.run comes first: the testing flags stop at the first non-flag,
	// and IsRunnerRun skips flags, so "run" stays the subcommand.
	cmd := exec.Command(bin, append([]string{"-test.run=^TestHelperProcess$"}, args...)...)
	cmd.Env = append(append([]string{}, env...), helperEnv+"=1")
	cmd.Dir = dir
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	pid := cmd.Process.Pid
	want := "run\x00"
	for deadline := time.Now().Add(5 * time.Second); ; {
		b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		if strings.Contains(string(b), want) {
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("child %d never showed its command line: %q", pid, b)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestRealProcess(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(cfg, []byte("concurrent = 2\n[[runners]]\n  name = \"real\"\n  executor = \"kubernetes\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	kube := filepath.Join(dir, "tenant-ci", "kubeconfig.yaml")
	pid := StartFakeRunner(t, dir, []string{"run", "--config", cfg, "--working-directory", dir},
		[]string{"KUBECONFIG=" + kube, "PATH=/usr/bin:/bin", "LANG=C.UTF-8"})

	var (
		r   *hostfacts.Runner
		e   *hostfacts.Environ
		c   *configfacts.ConfigFile
		k   *Kubeconfig
		env = &hostio.Env{Root: "/", RunnerPID: pid}
	)
	probe := &checks.Check{
		ID: "probe", Title: "t", Severity: checks.Info,
		Doc:      checks.Doc{Cause: "c", Symptom: "s", Fix: checks.Text("f"), Verify: checks.Text("v")},
		Requires: []checks.Node{hostfacts.RunnerFact, hostfacts.EnvironFact, configfacts.ConfigFact, KubeconfigFact},
		Run: func(p *checks.Pass) error {
			r, e, c, k = hostfacts.RunnerFact.Get(p), hostfacts.EnvironFact.Get(p), configfacts.ConfigFact.Get(p), KubeconfigFact.Get(p)
			return nil
		},
	}
	res, err := checks.Run(context.Background(), env, []*checks.Check{probe}, checks.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if st := res.Checks[0].Status; st != checks.StatusPass {
		t.Fatalf("probe %s: %s", st, res.Checks[0].Reason)
	}

	p := r.Selected
	if p == nil {
		t.Fatalf("--runner-pid %d not selected; found %d runners, problem %q", pid, len(r.All), r.Problem)
	}
	if p.PID != pid || p.Comm != "gitlab-runner" || p.UID != os.Geteuid() || p.GID != os.Getegid() {
		t.Errorf("process read from /proc: %+v (want pid %d, comm gitlab-runner, uid %d)", p, pid, os.Geteuid())
	}
	if !slices.Contains(p.Cmdline, "run") || !slices.Contains(p.Cmdline, cfg) {
		t.Errorf("cmdline %q", p.Cmdline)
	}
	if e.Err != nil || e.Source != "/proc/"+strconv.Itoa(pid)+"/environ" {
		t.Fatalf("environ %s: %v", e.Source, e.Err)
	}
	if v, _ := e.Lookup("KUBECONFIG"); v != kube {
		t.Errorf("KUBECONFIG in the child's real environ = %q, want %q", v, kube)
	}
	if _, leaked := e.Lookup("HOME"); leaked {
		t.Error("the child's environ has HOME, which the test did not give it: not the child's own environment")
	}
	if c.Path != cfg || c.How != "--config in the runner's command line" || !c.Decoded() {
		t.Errorf("config %q by %q, decoded %v (%v %v)", c.Path, c.How, c.Decoded(), c.ReadErr, c.DecodeErr)
	}
	if k.Source != "KUBECONFIG in "+e.Source || len(k.Files) != 1 || k.Files[0].Path != kube {
		t.Errorf("kubeconfig from %q: %+v", k.Source, k.Files)
	}
}

// TestRealProcessRelativeConfig: a relative --config is resolved against
// the runner's working directory, read from the real /proc/<pid>/cwd.
func TestRealProcessRelativeConfig(t *testing.T) {
	dir := t.TempDir()
	pid := StartFakeRunner(t, dir, []string{"run", "-c", "rel/config.toml"}, nil)
	got := configfacts.LocateConfigFor(&hostio.Env{Root: "/"}, &hostfacts.Process{PID: pid, UID: 0,
		Cmdline: []string{"gitlab-runner", "run", "-c", "rel/config.toml"}})
	if want := filepath.Join(dir, "rel/config.toml"); got != want {
		t.Errorf("relative --config located at %q, want %q", got, want)
	}
}

// TestRealProcessHome: client-go and the runner find ~/.kube/config through
// the process's own $HOME, not /etc/passwd; with HOME unset client-go's
// path is .kube/config relative to the working directory, read from the
// real /proc/<pid>/cwd.
func TestRealProcessHome(t *testing.T) {
	probe := func(t *testing.T, pid int) (*hostfacts.RunAs, *Kubeconfig) {
		t.Helper()
		var ra *hostfacts.RunAs
		var k *Kubeconfig
		c := &checks.Check{
			ID: "probe", Title: "t", Severity: checks.Info,
			Doc:      checks.Doc{Cause: "c", Symptom: "s", Fix: checks.Text("f"), Verify: checks.Text("v")},
			Requires: []checks.Node{hostfacts.RunAsFact, KubeconfigFact},
			Run:      func(p *checks.Pass) error { ra, k = hostfacts.RunAsFact.Get(p), KubeconfigFact.Get(p); return nil },
		}
		res, err := checks.Run(context.Background(), &hostio.Env{Root: "/", RunnerPID: pid}, []*checks.Check{c}, checks.Options{})
		if err != nil || res.Checks[0].Status != checks.StatusPass {
			t.Fatalf("probe: %v %+v", err, res)
		}
		return ra, k
	}
	kubeconfig := func(dir string) string {
		p := filepath.Join(dir, ".kube", "config")
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("apiVersion: v1\nkind: Config\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}

	t.Run("HOME set", func(t *testing.T) {
		home := t.TempDir()
		want := kubeconfig(home)
		pid := StartFakeRunner(t, t.TempDir(), []string{"run"}, []string{"HOME=" + home})
		ra, k := probe(t, pid)
		if !ra.HomeSet || ra.Home != home {
			t.Errorf("HOME %q set %v, want the child's %q", ra.Home, ra.HomeSet, home)
		}
		if len(k.Files) != 1 || k.Files[0].Path != want {
			t.Errorf("kubeconfig %+v (%s), want %s", k.Files, k.None, want)
		}
	})
	t.Run("HOME unset", func(t *testing.T) {
		cwd := t.TempDir()
		want := kubeconfig(cwd)
		pid := StartFakeRunner(t, cwd, []string{"run"}, []string{"PATH=/usr/bin:/bin"})
		ra, k := probe(t, pid)
		if ra.HomeSet || ra.Cwd != cwd {
			t.Errorf("HOME set %v, cwd %q; want unset and %q", ra.HomeSet, ra.Cwd, cwd)
		}
		if len(k.Files) != 1 || k.Files[0].Path != want || !strings.Contains(k.Source, "HOME is unset") {
			t.Errorf("kubeconfig %+v from %q (%s), want %s relative to the working directory", k.Files, k.Source, k.None, want)
		}
	})
}
