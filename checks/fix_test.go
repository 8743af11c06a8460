package checks

import (
	"strings"
	"testing"
)

// A run's fix is redacted, but a host path in a block is kept whole: the
// long-base64 rule would take a long path for a secret and leave a command
// that pastes as a redirection.
func TestRedactStepsKeepsPaths(t *testing.T) {
	long := "/tmp/TestNamespaceFixPastedInAnotherShellActsOnTheRunnersCluster1940205631/003/runner.kubeconfig"
	secret := "glrt-" + strings.Repeat("a", 20)
	got := redactSteps(Steps{
		Say("token " + secret),
		Sh("KUBECONFIG=" + long + " kubectl get ns\ncurl https://user:" + secret + "@gitlab.example.invalid/api/v4/version\necho " + secret),
	})
	if strings.Contains(got.String(), secret) {
		t.Errorf("a token survived: %s", got)
	}
	if !strings.Contains(got[1].Text, "KUBECONFIG="+long+" kubectl") {
		t.Errorf("the path was redacted: %s", got[1].Text)
	}
}
