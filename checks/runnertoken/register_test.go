package runnertoken

import (
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/client/gitlab"
	"github.com/socialwebcomputer/doctor/checks/facts/kubefacts"
	"github.com/socialwebcomputer/doctor/internal/fixcode"
	"github.com/socialwebcomputer/doctor/internal/redact"
	"github.com/socialwebcomputer/doctor/runnerconfig"
	"github.com/socialwebcomputer/doctor/testkit/hostile"
	"github.com/socialwebcomputer/doctor/testkit/hostilefix"
	"github.com/socialwebcomputer/doctor/testkit/shellshape"
)

var scope = &kubefacts.FixScope{Roots: []string{"/etc/gitlab-runner"}}

// registerBlock is the one block of registerFix's steps.
func registerBlock(t *testing.T, s checks.Steps) string {
	t.Helper()
	b := s.Blocks()
	if len(b) != 1 || b[0].Kind != checks.KindShell {
		t.Fatalf("want one shell block: %q", s)
	}
	return b[0].Text
}

func TestRegisterFixReadsTheTokenAndNamesTheRunnersOwn(t *testing.T) {
	got := registerBlock(t, registerFix(scope, "https://gitlab.example.invalid:8443/", "/etc/gitlab-runner/config.toml", "gitlab-runner.service"))
	want := "read -rs GLRT_TOKEN\n" +
		`sudo gitlab-runner register --non-interactive --config /etc/gitlab-runner/config.toml --url https://gitlab.example.invalid:8443/ --token "$GLRT_TOKEN"` + "\n" +
		"sudo systemctl restart gitlab-runner.service"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// The config path is one word of register, whatever it holds (or no
// command: a path FixScope refuses).
func TestRegisterFixCarriesAHostileConfigPathAsOneWord(t *testing.T) {
	build := func(v string) checks.Steps {
		return registerFix(scope, "https://gitlab.example.invalid/", "/etc/gitlab-runner/"+v+"/config.toml", "gitlab-runner.service")
	}
	benign := registerBlock(t, build("plain"))
	for _, v := range hostile.Values {
		got := build(v)
		if len(got.Blocks()) == 0 {
			if !hostilefix.WithheldStep(got[len(got)-1]) {
				t.Errorf("%q: %q", v, got)
			}
			continue
		}
		hostilefix.SameShape(t, v, benign, registerBlock(t, got))
	}
}

// The unit: one word of the restart when systemd would take the name,
// else no restart (register still) and a sentence.
func TestRegisterFixRestartsOnlyAValidUnit(t *testing.T) {
	build := func(unit string) checks.Steps {
		return registerFix(scope, "https://gitlab.example.invalid/", "/etc/gitlab-runner/config.toml", unit)
	}
	benign := registerBlock(t, build("gitlab-runnerplain.service"))
	for _, v := range hostile.Values {
		unit := "gitlab-runner" + v + ".service"
		got := build(unit)
		if fixcode.UnitName(unit) == nil {
			hostilefix.SameShape(t, v, benign, registerBlock(t, got))
			continue
		}
		if b := registerBlock(t, got); strings.Contains(b, "systemctl") || !hostilefix.WithheldStep(got[len(got)-1]) {
			t.Errorf("%q: %q", v, got)
		}
	}
}

// The URL is printed without its user info, as one word; one that does
// not parse is read into GITLAB_URL instead, and the host's text is in
// no block.
func TestRegisterFixURLIsOneWordWithoutUserinfo(t *testing.T) {
	parsed, read := 0, 0
	for _, v := range append(hostile.Values, "user:glpat-abcdefghijklmnopqrst@", "glrt-0123456789abcdef@") {
		raw := "https://" + v + "gitlab.example.invalid/" + v + "/"
		got := registerFix(scope, raw, "/etc/gitlab-runner/config.toml", "gitlab-runner.service")
		blocks := got.Blocks()
		if len(blocks) == 0 {
			if !hostilefix.WithheldStep(got[len(got)-1]) {
				t.Errorf("%q: %q", v, got)
			}
			continue
		}
		sh, err := shellshape.Parse(blocks[len(blocks)-1].Text)
		if err != nil {
			t.Errorf("%q: %v", v, err)
			continue
		}
		if len(sh.Stmts) != 3 {
			t.Errorf("%q: %d statements:\n%s", v, len(sh.Stmts), blocks[len(blocks)-1].Text)
			continue
		}
		want := "⟨$GITLAB_URL⟩"
		if tg, err := gitlab.ParseURL(raw, true, "url"); err == nil {
			want = redact.StripUserinfo(tg.Base.String())
			parsed++
			if strings.Contains(want, "@") && strings.Contains(v, "@") {
				t.Errorf("%q: user info in %q", v, want)
			}
		} else if read++; len(blocks) != 2 || blocks[0].Text != "read -r GITLAB_URL" {
			t.Errorf("%q: no URL and no read: %q", v, got)
		}
		if i := wordIndex(sh.Words, "--url"); i < 0 || i+3 >= len(sh.Words) || sh.Words[i+1] != want || sh.Words[i+3] != "⟨$GLRT_TOKEN⟩" {
			t.Errorf("%q: --url is not %q:\n%s", v, want, sh)
		}
		if strings.Contains(got.String(), "glpat-") || strings.Contains(got.String(), "glrt-0123") {
			t.Errorf("%q: a token in the fix: %q", v, got)
		}
	}
	if parsed == 0 || read == 0 {
		t.Errorf("%d URLs parsed, %d read: both branches should be taken", parsed, read)
	}
}

// A config.toml outside the runner's own directories gets no register:
// it rewrites the file as root.
func TestRegisterFixOutsideTheScopeIsWithheld(t *testing.T) {
	got := registerFix(scope, "https://gitlab.example.invalid/", "/etc/shadow", "gitlab-runner.service")
	if len(got.Blocks()) != 0 || !hostilefix.WithheldStep(got[len(got)-1]) {
		t.Errorf("%q", got)
	}
}

func wordIndex(words []string, w string) int {
	for i, x := range words {
		if x == w {
			return i
		}
	}
	return -1
}

// The note that the runner disabled itself restarts its unit only by a
// name systemd takes.
func TestDisabledNoteRestartsOnlyAValidUnit(t *testing.T) {
	r := &runnerconfig.Runner{}
	if b := disabledNote(r, "gitlab-runner.service").Blocks(); len(b) != 1 || b[0].Text != "sudo systemctl restart gitlab-runner.service" {
		t.Errorf("%q", b)
	}
	for _, unit := range []string{"a b.service", "x\nExecStartPre=/bin/sh", "$(id).service"} {
		got := disabledNote(r, unit)
		if len(got.Blocks()) != 0 || !hostilefix.WithheldStep(got[len(got)-1]) || !strings.Contains(got.String(), "unhealthy_requests_limit") {
			t.Errorf("%q: %q", unit, got)
		}
	}
}
