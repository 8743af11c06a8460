package hostilefix

import (
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/internal/fixcode"
)

// The comparison fails a rendering that lets a value become syntax, and
// passes the encoder's: a test that could not fail would prove nothing.
func TestCompareCatchesAValueThatBecomesSyntax(t *testing.T) {
	naive := func(v string) string { return "kubectl create namespace " + v + "\nkubectl get ns" }
	if err := CompareBlock(checks.KindShell, naive("ci"), naive(Taint("ci"))); err == nil {
		t.Error("a value pasted unquoted passed the comparison")
	}
	quoted := func(v string) string { return "kubectl create namespace '" + v + "'" }
	if err := CompareBlock(checks.KindShell, quoted("ci"), quoted(Taint("ci"))); err == nil {
		t.Error("a value in single quotes, which its ' ends, passed the comparison")
	}
	heredoc := func(v string) string {
		return "kubectl apply -f - <<'EOF'\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: " + v + "\nEOF"
	}
	if err := CompareBlock(checks.KindShell, heredoc("ci"), heredoc(Taint("ci"))); err == nil {
		t.Error("a value that ends a heredoc passed the comparison")
	}
	unit := func(v string) string { return "[Service]\nEnvironment=KUBECONFIG=" + v }
	if err := CompareBlock(checks.KindDropIn, unit("/x"), unit(Taint("/x"))); err == nil {
		t.Error("a value that adds a directive passed the comparison")
	}

	render := func(v string) string {
		doc := fixcode.UnitSection("Service", fixcode.Environment("KUBECONFIG", v))
		text, err := fixcode.Lines(
			fixcode.Run(fixcode.Command("kubectl", "create", "namespace", v)),
			fixcode.Run(fixcode.Command("tee", "/etc/x.conf").Quiet().Stdin(doc)),
		).Render()
		if err != nil {
			t.Fatal(err)
		}
		return text
	}
	plain := render("ci")
	restore := fixcode.SetTaint(Taint)
	hostile := render("ci")
	restore()
	if !strings.Contains(hostile, "doctor-pwned") {
		t.Fatalf("the taint did not reach the block: %s", hostile)
	}
	if err := CompareBlock(checks.KindShell, plain, hostile); err != nil {
		t.Errorf("the encoder's rendering failed the comparison: %v", err)
	}
}

// TouchesSystem finds the fix the issue found: root's files handed over,
// /etc re-owned, a path relative to the operator's directory.
func TestTouchesSystemFindsTheFixesThatGaveRootAway(t *testing.T) {
	for block, want := range map[string]string{
		"sudo chown nobody /etc/shadow\nsudo chmod 0600 /etc/shadow":                                     "/etc/shadow",
		"sudo install -d -m 0700 -o nobody /etc":                                                         "/etc",
		"sudo install -d -m 0700 -o nobody .":                                                            ".",
		"sudo env X=1 chmod 0700 /proc/1":                                                                "/proc/1",
		"sudo tee /etc/sudoers.d/x >/dev/null <<'EOF'\nx\nEOF":                                           "/etc/sudoers.d/x",
		"sudo chmod 0600 /etc/gitlab-runner/config.toml":                                                 "",
		"sudo install -m 0600 -o gitlab-runner ./new.kubeconfig.yaml /etc/gitlab-runner/kubeconfig.yaml": "",
		"kubectl get ns /etc":                                                                            "",
	} {
		if got := TouchesSystem(block); got != want {
			t.Errorf("%q: %q, want %q", block, got, want)
		}
	}
}
