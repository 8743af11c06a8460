//go:build integration

package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/cmd/doctor/cli"
	"github.com/socialwebcomputer/doctor/internal/fixcode"
	"github.com/socialwebcomputer/doctor/report"
	"github.com/socialwebcomputer/doctor/testkit/cmdtest"
	"github.com/socialwebcomputer/doctor/testkit/fixproof"
	"github.com/socialwebcomputer/doctor/testkit/testenv"
	"github.com/socialwebcomputer/doctor/testkit/tools"
)

// The namespace fix, pasted as an operator pastes it: doctor diagnoses a
// runner whose kubeconfig is the first apiserver's; an interactive bash in
// tmux, whose own KUBECONFIG is a second apiserver's with a context of the
// same name, gets every block of the fix pasted. The namespace appears in
// the runner's cluster and not in the other: the fix carries the runner's
// kubeconfig and context. The same paste without them (the fix before
// issue 23) would have acted on the shell's cluster, which the control
// below shows.
func TestNamespaceFixPastedInAnotherShellActsOnTheRunnersCluster(t *testing.T) {
	tmux := tools.Need(t, "tmux", "Debian's tmux package")
	kubectl := testenv.Bin(t, "kubectl")
	runnerEnv, otherEnv := testenv.Start(t), testenv.Start(t)
	dir := t.TempDir()
	write := func(name string, env *testenv.Env) string {
		env.BindOwnersToClusterAdmin()
		p := filepath.Join(dir, name)
		cmdtest.NoErr(t, os.WriteFile(p, ownerKubeconfig(env, env.URL, time.Now().Add(time.Hour)), 0o600))
		return p
	}
	runnerKC, otherKC := write("runner.kubeconfig", runnerEnv), write("other.kubeconfig", otherEnv)
	const ns = "ns-pasted"

	var out, errb bytes.Buffer
	cli.Main([]string{"run", "--kubeconfig", runnerKC, "--namespace", ns, "--only", "namespace", "-o", "json", "--timeout", "60s"},
		cli.IO{Out: &out, Err: &errb, Getenv: func(string) string { return "" }})
	var rep report.Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("doctor run: %v\n%s\n%s", err, out.String(), errb.String())
	}
	var fix checks.Steps
	for _, f := range rep.Findings {
		if f.Check == "namespace" {
			fix = f.FixSteps
		}
	}
	blocks := fix.Blocks()
	if len(blocks) == 0 {
		t.Fatalf("no namespace finding with a block to paste:\n%s", out.String())
	}
	// Proved by its tools first (the manifest, if any, against the
	// runner's apiserver).
	fixproof.Checker{Kubeconfig: runnerKC}.Assert(t, "namespace fix", fix)

	sock := filepath.Join(dir, "tmux.sock")
	tm := func(a ...string) string {
		t.Helper()
		cmd := exec.Command(tmux, append([]string{"-S", sock, "-f", "/dev/null"}, a...)...)
		cmd.Env = append(os.Environ(), "LANG=C.UTF-8", "TERM=xterm-256color")
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %s: %v\n%s", strings.Join(a, " "), err, b)
		}
		return string(b)
	}
	// The operator's shell: its kubeconfig is the other cluster's, and its
	// current context has the runner's context's name.
	shell := "env -i HOME=" + fixcode.Quote(dir) + " PATH=" + fixcode.Quote(filepath.Dir(kubectl)+":/usr/bin:/bin") +
		" KUBECONFIG=" + fixcode.Quote(otherKC) + " PS1='$ ' bash --norc --noprofile -i"
	tm("new-session", "-d", "-s", "paste", "-x", "200", "-y", "50", shell)
	t.Cleanup(func() { _ = exec.Command(tmux, "-S", sock, "kill-server").Run() })
	for i, b := range blocks {
		if b.Kind != checks.KindShell {
			t.Fatalf("block %d of the namespace fix is %s, not shell: it cannot be pasted into a shell", i+1, b.Kind)
		}
		buf := filepath.Join(dir, "block")
		cmdtest.NoErr(t, os.WriteFile(buf, []byte(b.Text+"\n"), 0o600))
		tm("load-buffer", "-b", "fix", buf)
		tm("paste-buffer", "-b", "fix", "-t", "paste")
	}
	tm("send-keys", "-t", "paste", "echo pasted-$((6*7))", "Enter")
	deadline := time.Now().Add(30 * time.Second)
	screen := ""
	for !strings.Contains(screen, "pasted-42") {
		if time.Now().After(deadline) {
			t.Fatalf("the pasted fix did not finish in 30s:\n%s", screen)
		}
		time.Sleep(200 * time.Millisecond)
		screen = tm("capture-pane", "-p", "-J", "-S", "-", "-t", "paste")
	}
	t.Logf("the shell:\n%s", screen)

	if _, err := runnerEnv.Clientset().CoreV1().Namespaces().Get(t.Context(), ns, metav1.GetOptions{}); err != nil {
		t.Errorf("the runner's cluster has no namespace %s after the paste: %v\n%s", ns, err, screen)
	}
	if _, err := otherEnv.Clientset().CoreV1().Namespaces().Get(t.Context(), ns, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the shell's own cluster has namespace %s (or: %v): the fix acted on the wrong cluster\n%s", ns, err, screen)
	}

	// The control: the same command without the runner's kubeconfig and
	// context, as the fix read before, acts on the shell's cluster.
	tm("send-keys", "-t", "paste", "kubectl create namespace "+ns+"-control; echo control-$((6*7))", "Enter")
	deadline = time.Now().Add(30 * time.Second)
	for !strings.Contains(screen, "control-42") {
		if time.Now().After(deadline) {
			t.Fatalf("the control did not finish in 30s:\n%s", screen)
		}
		time.Sleep(200 * time.Millisecond)
		screen = tm("capture-pane", "-p", "-J", "-S", "-", "-t", "paste")
	}
	if _, err := otherEnv.Clientset().CoreV1().Namespaces().Get(t.Context(), ns+"-control", metav1.GetOptions{}); err != nil {
		t.Errorf("control: a bare kubectl in that shell did not reach the shell's cluster (%v), so the test shows nothing:\n%s", err, screen)
	}
}
