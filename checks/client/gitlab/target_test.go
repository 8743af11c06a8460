package gitlab

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/internal/hostio"
)

func TestParseURLDropsTheJobToken(t *testing.T) {
	tg, err := ParseURL("https://gitlab-ci-token:glcbt-secret0123@gitlab.example.invalid/group/p.git", false, "CI_REPOSITORY_URL")
	if err != nil {
		t.Fatal(err)
	}
	if got := tg.Endpoint("api/v4/version").String(); got != "https://gitlab.example.invalid/api/v4/version" {
		t.Errorf("endpoint %s", got)
	}
	if tg.Port != "443" || tg.Origin() != "https://gitlab.example.invalid:443" {
		t.Errorf("port %s origin %s", tg.Port, tg.Origin())
	}
	// A URL that does not parse must not be quoted: it may carry the token.
	if _, err := ParseURL("https://gitlab-ci-token:glcbt-secret0123@host:port:x/", false, "CI_REPOSITORY_URL"); err == nil || strings.Contains(err.Error(), "secret") {
		t.Errorf("error %v", err)
	}
}

func TestRelativeRootAndMerge(t *testing.T) {
	a, _ := ParseURL("https://gitlab.example.invalid:8443/gitlab", true, `[[runners]] "a" url`)
	b, _ := ParseURL("https://gitlab.example.invalid:8443/group/p.git", false, "CI_REPOSITORY_URL")
	c, _ := ParseURL("http://[::1]:8080/", true, `[[runners]] "c" url`)
	ts := Merge([]*Target{a, b, c})
	if len(ts) != 2 || ts[0].Named() != `[[runners]] "a" url and CI_REPOSITORY_URL` {
		t.Fatalf("merged %d targets, first %q", len(ts), ts[0].Named())
	}
	if got := ts[0].Endpoint("/api/v4/runners/verify").String(); got != "https://gitlab.example.invalid:8443/gitlab/api/v4/runners/verify" {
		t.Errorf("endpoint under a relative root: %s", got)
	}
	if ts[1].Host != "::1" || ts[1].Addr() != "[::1]:8080" {
		t.Errorf("IPv6 target %s %s", ts[1].Host, ts[1].Addr())
	}
}

func TestTailnetRanges(t *testing.T) {
	for s, want := range map[string]bool{"100.64.0.1": true, "100.127.255.254": true, "100.128.0.1": false,
		"fd7a:115c:a1e0::53": true, "fd7a:115c:a1e1::1": false, "::ffff:100.100.100.100": true, "127.0.0.1": false} {
		if got := IsTailnet(netip.MustParseAddr(s)); got != want {
			t.Errorf("IsTailnet(%s) = %v", s, got)
		}
	}
	env := &hostio.Env{Settings: map[string]string{SettingTailnet: "no"}}
	if on, _ := OnTailnet(env); on {
		t.Error("the tailnet setting no was ignored")
	}
}

func TestStageDeadlinesSetting(t *testing.T) {
	if d := StageDeadlines(&hostio.Env{}); d != DefaultDeadlines {
		t.Errorf("defaults %+v", d)
	}
	env := &hostio.Env{Settings: map[string]string{SettingStageTimeout: "250ms"}}
	if d := StageDeadlines(env); d.TLS != 250*time.Millisecond || d.DNS != 250*time.Millisecond {
		t.Errorf("override %+v", d)
	}
}
