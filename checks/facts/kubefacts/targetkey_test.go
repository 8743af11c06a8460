package kubefacts

import (
	"strings"
	"testing"

	"k8s.io/client-go/rest"
)

// TestTargetKeyKeepsNoSecret: the key names the server without the URL's
// userinfo (it is written to doctor's cache file), and two credentials,
// userinfo included, are still two targets.
func TestTargetKeyKeepsNoSecret(t *testing.T) {
	a := TargetKey(&rest.Config{Host: "https://ci:hunter2secret@kcp.example.invalid:6443"})
	b := TargetKey(&rest.Config{Host: "https://ci:other-secret@kcp.example.invalid:6443"})
	c := TargetKey(&rest.Config{Host: "https://ci:hunter2secret@kcp.example.invalid:6443"})
	for _, k := range []string{a, b} {
		if strings.Contains(k, "secret") || strings.Contains(k, "ci:") {
			t.Errorf("TargetKey = %q: it keeps the URL's userinfo", k)
		}
		if !strings.HasPrefix(k, "https://kcp.example.invalid:6443#") {
			t.Errorf("TargetKey = %q: want the server, then #hash", k)
		}
	}
	if a == b {
		t.Errorf("two passwords give one key %q", a)
	}
	if a != c {
		t.Errorf("one target gives two keys: %q, %q", a, c)
	}
	if TargetKey(&rest.Config{Host: "https://a.invalid", BearerToken: "x"}) == TargetKey(&rest.Config{Host: "https://a.invalid", BearerToken: "y"}) {
		t.Errorf("two tokens give one key")
	}
}
