//go:build integration

package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/socialwebcomputer/doctor/checks/execupgrade"
	"github.com/socialwebcomputer/doctor/report"
	"github.com/socialwebcomputer/doctor/testkit/cmdtest"
	"github.com/socialwebcomputer/doctor/testkit/testenv"
	"github.com/socialwebcomputer/doctor/testkit/testroot"
)

// --deep is doctor's only write to a cluster: a probe pod. However the run
// ends -- the probe passes, the probe pod fails, Ctrl-C, a service
// manager's SIGTERM -- the pod is gone when the doctor binary exits. Each
// case runs the built binary as a child process against the real
// apiserver and lists the namespace afterwards.

// deepRun is one doctor --deep child process.
type deepRun struct {
	cmd       *exec.Cmd
	out, errb bytes.Buffer
	done      chan error
	started   time.Time
}

func startDeep(t *testing.T, bin, rootDir string, args ...string) *deepRun {
	t.Helper()
	d := &deepRun{done: make(chan error, 1)}
	d.cmd = exec.Command(bin, append([]string{"run", "--root", rootDir, "-o", "json", "--deep"}, args...)...)
	d.cmd.Stdout, d.cmd.Stderr = &d.out, &d.errb
	d.started = time.Now()
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { d.done <- d.cmd.Wait() }()
	t.Cleanup(func() {
		if d.cmd.ProcessState == nil {
			_ = d.cmd.Process.Kill()
			<-d.done
		}
	})
	return d
}

// wait waits at most within for the process, and returns its report. The
// process must have exited by itself (not died of a signal): doctor ends
// its run, deletes the probe pod, prints the report and exits.
func (d *deepRun) wait(t *testing.T, within time.Duration) *report.Report {
	t.Helper()
	select {
	case err := <-d.done:
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
	case <-time.After(within):
		_ = d.cmd.Process.Signal(syscall.SIGKILL)
		<-d.done
		t.Fatalf("doctor did not exit within %s; stderr: %s", within, d.errb.String())
	}
	if st := d.cmd.ProcessState; !st.Exited() {
		t.Fatalf("doctor died (%s) instead of ending its run; stderr: %s", st, d.errb.String())
	}
	var rep report.Report
	if err := json.Unmarshal(d.out.Bytes(), &rep); err != nil {
		t.Fatalf("exit %d, no JSON report: %v\nstdout: %s\nstderr: %s", d.cmd.ProcessState.ExitCode(), err, d.out.String(), d.errb.String())
	}
	if got := d.cmd.ProcessState.ExitCode(); got != rep.Summary.ExitCode {
		t.Errorf("exit code %d, the report says %d", got, rep.Summary.ExitCode)
	}
	return &rep
}

// probePods are the pods --deep made (DeepLabel) in the namespace, deleted
// or not: a pod deleted with grace period 0 is removed at once, so any
// pod listed is one doctor left.
func probePods(t *testing.T, env *testenv.Env, ns string) []corev1.Pod {
	t.Helper()
	list, err := env.Clientset().CoreV1().Pods(ns).List(t.Context(), metav1.ListOptions{LabelSelector: execupgrade.DeepLabel})
	if err != nil {
		t.Fatal(err)
	}
	return list.Items
}

func assertNoProbePodLeft(t *testing.T, env *testenv.Env) {
	t.Helper()
	for _, p := range probePods(t, env, "gitlab-runner") {
		t.Errorf("probe pod %s left in gitlab-runner (phase %s, deletion requested: %v)", p.Name, p.Status.Phase, p.DeletionTimestamp != nil)
	}
}

// waitForProbePod returns the name of the probe pod once it exists.
func waitForProbePod(t *testing.T, env *testenv.Env, d *deepRun) string {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if pods := probePods(t, env, "gitlab-runner"); len(pods) > 0 {
			return pods[0].Name
		}
		select {
		case err := <-d.done:
			d.done <- err
			t.Fatalf("doctor exited (%v) before creating its probe pod; stderr: %s", err, d.errb.String())
		default:
		}
	}
	t.Fatalf("doctor --deep never created its probe pod; stderr: %s", d.errb.String())
	return ""
}

func checkOutcome(rep *report.Report, id string) (status, reason string) {
	for _, c := range rep.Checks {
		if c.ID == id {
			return string(c.Status), c.Reason
		}
	}
	return "", ""
}

// TestDeepCleansUpOnSignal sends SIGINT, then (in a second run) SIGTERM,
// while the probe pod waits for a node that never comes: the run ends at
// once, the pod is deleted, and the exit code is not 0 (the probe proved
// nothing).
func TestDeepCleansUpOnSignal(t *testing.T) {
	env, kc := execWorld(t, nil)
	bin := cmdtest.BuildDoctor(t)
	root := testroot.New(t)
	root.GuideRunner(testroot.GuideConfig, kc)
	for _, sig := range []os.Signal{os.Interrupt, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			d := startDeep(t, bin, root.Dir, "--timeout", "120s", "--skip", "gitlab-reachability")
			probe := waitForProbePod(t, env, d)
			if err := d.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			signalled := time.Now()
			rep := d.wait(t, 40*time.Second)
			t.Logf("exit %d %s after %s; probe pod %s", d.cmd.ProcessState.ExitCode(), sig, time.Since(signalled).Round(time.Millisecond), probe)
			assertNoProbePodLeft(t, env)
			if rep.Summary.ExitCode == report.ExitOK {
				t.Errorf("an interrupted --deep run exited 0")
			}
			if st, _ := checkOutcome(rep, "exec-upgrade"); st == "pass" {
				t.Errorf("exec-upgrade passed although the probe never ran")
			}
			if len(rep.CleanupErrors) > 0 {
				t.Errorf("cleanup errors: %v", rep.CleanupErrors)
			}
		})
	}
}

// TestDeepCleansUpOnSuccess runs the probe to the end: the pod is placed
// (this test acting as scheduler and kubelet), exec'd through the front
// with the real SPDY executor, and deleted; doctor exits 0.
func TestDeepCleansUpOnSuccess(t *testing.T) {
	env, kc, _ := execWorldKubelet(t, &testenv.FrontOptions{HTTP11: true, RequireClientCert: true})
	stop := actAsScheduler(t, env, "gitlab-runner", "rented-1")
	defer stop()
	root := testroot.New(t)
	root.GuideRunner(testroot.GuideConfig, kc)
	d := startDeep(t, cmdtest.BuildDoctor(t), root.Dir, "--timeout", "90s", "--skip", "gitlab-reachability")
	rep := d.wait(t, 100*time.Second)
	if st, reason := checkOutcome(rep, "exec-upgrade"); st != "pass" || rep.Summary.ExitCode != report.ExitOK {
		t.Errorf("exec-upgrade %s (%s), exit %d; stderr: %s", st, reason, rep.Summary.ExitCode, d.errb.String())
	}
	assertNoProbePodLeft(t, env)
	if len(rep.CleanupErrors) > 0 {
		t.Errorf("cleanup errors: %v", rep.CleanupErrors)
	}
}

// TestDeepCleansUpWhenProbePodFails gives the probe pod a node that fails
// it (its container exits 1 before the exec): doctor says so as soon as
// the pod has failed -- not when --timeout runs out, as it did -- the
// check is unknown naming the failure, and the pod is deleted.
func TestDeepCleansUpWhenProbePodFails(t *testing.T) {
	env, kc := execWorld(t, nil)
	failed := corev1.PodStatus{
		Phase: corev1.PodFailed, Reason: "Error", Message: "probe container exited",
		ContainerStatuses: []corev1.ContainerStatus{{
			Name: "probe", Image: "busybox:1.36",
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error"}},
		}},
	}
	stop := actAsSchedulerWith(t, env, "gitlab-runner", "rented-1", failed)
	defer stop()
	root := testroot.New(t)
	root.GuideRunner(testroot.GuideConfig, kc)
	const timeout = 60 * time.Second
	d := startDeep(t, cmdtest.BuildDoctor(t), root.Dir, "--timeout", timeout.String(), "--skip", "gitlab-reachability")
	rep := d.wait(t, timeout+20*time.Second)
	took := time.Since(d.started)
	st, reason := checkOutcome(rep, "exec-upgrade")
	t.Logf("exec-upgrade %s after %s: %s", st, took.Round(time.Millisecond), reason)
	if took > timeout/2 {
		t.Errorf("doctor took %s to notice a failed probe pod (--timeout %s)", took, timeout)
	}
	if st != "unknown" || !strings.Contains(reason, "Failed") || !strings.Contains(reason, "exited 1") {
		t.Errorf("exec-upgrade %s: %q; want unknown naming the failed pod", st, reason)
	}
	if rep.Summary.ExitCode == report.ExitOK {
		t.Errorf("a --deep run whose probe failed exited 0")
	}
	assertNoProbePodLeft(t, env)
	if len(rep.CleanupErrors) > 0 {
		t.Errorf("cleanup errors: %v", rep.CleanupErrors)
	}
}
