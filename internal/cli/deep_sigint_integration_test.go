//go:build integration

package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/socialwebcomputer/doctor/internal/testroot"
)

// TestDeepCleansUpOnSIGINT runs the doctor binary with --deep against a
// cluster where the probe pod can never start, sends it SIGINT once the pod
// exists, and requires the pod to be deleted before the process exits.
func TestDeepCleansUpOnSIGINT(t *testing.T) {
	env, kc := execWorld(t, nil)
	bin := filepath.Join(t.TempDir(), "doctor")
	build := exec.Command("go", "build", "-o", bin, "../../cmd/doctor")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	root := testroot.New(t)
	root.GuideRunner(testroot.GuideConfig, kc)
	var out, errb bytes.Buffer
	cmd := exec.Command(bin, "run", "--root", root.Dir, "-o", "json", "--deep", "--timeout", "120s")
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()

	pods := env.Clientset().CoreV1().Pods("gitlab-runner")
	probe := ""
	for deadline := time.Now().Add(60 * time.Second); probe == "" && time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		list, err := pods.List(t.Context(), metav1.ListOptions{})
		if err != nil {
			continue
		}
		for _, p := range list.Items {
			if strings.HasPrefix(p.Name, "doctor-exec-probe-") {
				probe = p.Name
			}
		}
	}
	if probe == "" {
		t.Fatalf("doctor --deep never created its probe pod; stderr: %s", errb.String())
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(40 * time.Second):
		_ = cmd.Process.Signal(syscall.SIGKILL)
		t.Fatalf("doctor did not exit within 40s of SIGINT")
	}
	p, err := pods.Get(t.Context(), probe, metav1.GetOptions{})
	if err == nil && p.DeletionTimestamp == nil {
		t.Errorf("probe pod %s still exists after SIGINT (no deletion requested)", probe)
	}
	t.Logf("doctor exited after SIGINT; probe pod %s deleted; stdout %d bytes", probe, out.Len())
}
