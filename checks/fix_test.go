package checks

import (
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/internal/fixcode"
)

// Redaction reads a fix's sentences, never its blocks: a block is code,
// and a redacted word would change what it does. A secret never reaches a
// block in the first place: the encoder refuses the value, and the block
// is a sentence saying why (without the value).
func TestRedactionNeverRewritesABlock(t *testing.T) {
	secret := "glrt-" + strings.Repeat("a", 20)
	context := "x token=abcdefgh"
	long := "/tmp/TestNamespaceFixPastedInAnotherShellActsOnTheRunnersCluster1940205631/003/runner.kubeconfig"
	ns := `$(touch /tmp/x)'`
	steps := Steps{
		Say("token " + secret),
		Commands(fixcode.Command("kubectl", "--context", context, "get", "ns")),
		Commands(fixcode.Command("kubectl", "create", "namespace", ns).Env("KUBECONFIG", fixcode.Data(long))),
	}
	got := redactSteps(steps)
	if strings.Contains(got.String(), secret) || strings.Contains(got.String(), "abcdefgh") {
		t.Errorf("a secret survived: %s", got)
	}
	if got[1].Kind != KindText || !strings.Contains(got[1].Text, "looks like it holds a secret") {
		t.Errorf("a command with a secret-looking value was printed: %+v", got[1])
	}
	want := `KUBECONFIG=` + long + ` kubectl create namespace '$(touch /tmp/x)'\'''`
	if got[2].Kind != KindShell || got[2].Text != want || got[2] != steps[2] {
		t.Errorf("the block was rewritten:\n%s\nwant\n%s", got[2].Text, want)
	}
}
