package execupgrade

import (
	"strings"
	"testing"
)

// A hostile proxy's Server header and body are cut, kept on one line and
// redacted before they reach evidence.
func TestRemoteTextIsCutAndRedacted(t *testing.T) {
	got := remoteText("evil-proxy token=glrt-AbCdEfGh0123456789 "+strings.Repeat("x", 500)+"\n\x1b[31mred", 80)
	if strings.Contains(got, "AbCdEfGh0123456789") || strings.ContainsAny(got, "\n\x1b") && strings.Contains(got, "\n") || len([]rune(got)) > 81 {
		t.Errorf("remoteText = %q", got)
	}
	if remoteText("Caddy", 80) != "Caddy" {
		t.Error("an ordinary Server header changed")
	}
}
