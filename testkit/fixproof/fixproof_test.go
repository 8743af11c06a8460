package fixproof

import (
	"github.com/socialwebcomputer/doctor/testkit/tools"
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/checks"
)

// Each tool refuses what an operator's paste would refuse, so a fix that
// does not paste fails the test that renders it; and accepts the
// corrected block.
func TestToolsRefuseWhatDoesNotPaste(t *testing.T) {
	for _, c := range []struct {
		name string
		step checks.Step
		want string // in the error; "" for a block that pastes
	}{
		// exec-upgrade's Doc.Fix before issue 23: the Caddyfile has no ";".
		{"exec-upgrade's one-line block", checks.Caddy("reverse_proxy {$KCP_UPSTREAM} { flush_interval -1; transport http { versions 1.1 } }"),
			"Unexpected next token after '{' on same line"},
		{"exec-upgrade's block, one directive a line", checks.Caddy("reverse_proxy {$KCP_UPSTREAM} {\n\tflush_interval -1\n\ttransport http {\n\t\tversions 1.1\n\t}\n}"), ""},
		// explain indented every line of the namespace fix: the heredoc never closed.
		{"an indented heredoc", checks.Sh("  kubectl apply -f - <<'EOF'\n  apiVersion: v1\n  kind: Namespace\n  metadata:\n    name: gitlab-runner\n  EOF"),
			"here-document"},
		{"the heredoc at column 0", checks.Sh("kubectl apply -f - <<'EOF'\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: gitlab-runner\nEOF"), ""},
		{"a placeholder", checks.Sh("kubectl certificate approve <csr>"), "placeholder"},
		{"a sentence's full stop", checks.Sh("sudo systemctl restart gitlab-runner.service."), "punctuation"},
		{"sudo and a redirection", checks.Sh("sudo tr '\\0' '\\n' < /proc/1/environ"), "SC2024"},
		{"commands joined by a word", checks.Sh("sudo systemctl start gitlab-runner.service, then read why it stopped: sudo journalctl -u gitlab-runner"), "shellcheck"},
		{"a drop-in's placeholder", checks.Unit("[Service]\nEnvironment=KUBECONFIG=<path to the kubeconfig>"), "Invalid environment assignment"},
		{"a drop-in", checks.Unit("[Service]\nEnvironment=KUBECONFIG=/etc/gitlab-runner/kubeconfig.yaml"), ""},
		{"a table header and its key on one line", checks.Toml(`[runners.kubernetes.node_selector] "kubernetes.io/arch" = "arm64"`), "expected a top-level item to end with a newline"},
		{"a table and its key", checks.Toml("[runners.kubernetes.node_selector]\n\"kubernetes.io/arch\" = \"arm64\""), ""},
		{"a global key", checks.Toml("concurrent = 4"), ""},
		{"a key the runner does not read", checks.Toml("[runners.kubernetes]\nnode_selectors = {}"), "does not read"},
		{"a manifest without a name", checks.Yaml("apiVersion: v1\nkind: Namespace\n"), "metadata.name"},
		{"a manifest", checks.Yaml("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: gitlab-runner\n"), ""},
		{"a heredoc's manifest without a name", checks.Sh("kubectl apply -f - <<'EOF'\napiVersion: v1\nkind: Namespace\nEOF"), "metadata.name"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := Checker{}.validate(c.step)
			if err == nil && c.step.Kind == checks.KindShell {
				err = Shellcheck(c.step.Text)
			}
			switch {
			case err != nil && strings.Contains(err.Error(), "tool missing"):
				tools.Missing(t, "this case needs the tool of its kind ("+err.Error()+"; scripts/test-all.sh installs them)")
			case c.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case c.want != "" && err == nil:
				t.Errorf("accepted, want an error saying %q", c.want)
			case c.want != "" && !strings.Contains(err.Error(), c.want):
				t.Errorf("error %q does not say %q", err, c.want)
			}
		})
	}
}

// A sentence may not carry a command an operator would paste.
func TestCommandInProse(t *testing.T) {
	for s, want := range map[string]string{
		"Start the runner (sudo systemctl start gitlab-runner) and read its output.": "sudo systemctl",
		"Then kubectl get csr answers.":                                              "kubectl get",
		"kubectl ≥1.30 execs over WebSocket, so the probe uses SPDY.":                "",
		"Download a new kubeconfig for this cluster.":                                "",
	} {
		if got := commandInProse(s); !strings.HasPrefix(got, want) || (want == "") != (got == "") {
			t.Errorf("commandInProse(%q) = %q, want %q…", s, got, want)
		}
	}
}
