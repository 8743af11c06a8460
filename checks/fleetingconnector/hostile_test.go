package fleetingconnector

import (
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts"
	"github.com/socialwebcomputer/doctor/internal/testing/shellshape"
)

// key_path comes from config.toml and the user from /etc/passwd: every
// hostile value in them reaching ssh-keygen -p, chown, chmod is one word.
func TestFixesHoldHostileValues(t *testing.T) {
	scope := &facts.FixScope{Roots: []string{"/etc/gitlab-runner", "/home/gitlab-runner"}}
	passphrase := func(v string) checks.Steps { return passphraseFix(scope, "/home/gitlab-runner/"+v+"/id_ed25519") }
	keyMode := func(v string) checks.Steps {
		file := "/home/gitlab-runner/" + v + "/id_ed25519"
		ra := &facts.RunAs{UIDKnown: true, UID: 1001, GID: 1001, User: v}
		return keyModeFix(scope, file, ra, []facts.Blocker{{Path: file}}, false)
	}
	dirs := func(v string) checks.Steps {
		file := "/home/gitlab-runner/" + v + "/id_ed25519"
		ra := &facts.RunAs{UIDKnown: true, UID: 1001, GID: 1001, User: "gitlab-runner"}
		return keyModeFix(scope, file, ra, []facts.Blocker{{Path: "/home/gitlab-runner/" + v}, {Path: "/home"}}, false)
	}
	for name, build := range map[string]func(string) checks.Steps{"ssh-keygen -p": passphrase, "chown and chmod": keyMode, "chmod o+x": dirs} {
		if n := holdsHostile(t, hostile, build); n != len(hostile) {
			t.Errorf("%s: %d of %d hostile values printed: each is a path of the runner's own", name, n, len(hostile))
		}
	}
}

// A key outside the runner's own directories (a Secret's mount, root's
// .ssh), /home in the way, and a runner nobody installed get no command.
func TestFixesRefuse(t *testing.T) {
	scope := &facts.FixScope{Roots: []string{"/etc/gitlab-runner", "/home/gitlab-runner"}}
	ra := &facts.RunAs{UIDKnown: true, UID: 1001, GID: 1001, User: "gitlab-runner"}
	for _, file := range []string{"/ssh/id_ed25519", "/root/.ssh/id_ed25519", "/etc/ssh/ssh_host_ed25519_key", "/home/gitlab-runner/../alice/.ssh/id_ed25519", "id_ed25519"} {
		if got := passphraseFix(scope, file); !withheld(got) {
			t.Errorf("ssh-keygen -p %s: %+v", file, got)
		}
		if got := keyModeFix(scope, file, ra, []facts.Blocker{{Path: file}}, false); !withheld(got) {
			t.Errorf("chown %s: %+v", file, got)
		}
	}
	got := keyModeFix(scope, "/home/gitlab-runner/.ssh/id", ra, []facts.Blocker{{Path: "/home"}}, false)
	if !withheld(got) || !strings.Contains(got.String(), "/home is a system path") {
		t.Errorf("chmod o+x /home: %+v", got)
	}
	refused := &facts.FixScope{Refused: "pid 7 (uid 1000 mallory) runs gitlab-runner as neither root nor a systemd unit's user", Roots: scope.Roots}
	for _, got := range []checks.Steps{
		passphraseFix(refused, "/home/gitlab-runner/.ssh/id"),
		keyModeFix(refused, "/home/gitlab-runner/.ssh/id", ra, []facts.Blocker{{Path: "/home/gitlab-runner/.ssh/id"}}, false),
	} {
		if !withheld(got) || !strings.Contains(got.String(), "cannot vouch for") {
			t.Errorf("a refused runner got %+v", got)
		}
	}
}

// hostile are values a runner's user or its config.toml control that reach
// this check's fixes: each ends a word, a line, a quote, a heredoc or a
// document, or is one a terminal hides.
var hostile = []string{
	"two words", "new\nline", "x\n$(touch /tmp/pwned)", "`touch /tmp/pwned`", "a;b", "a&&b", "a|b", "#c",
	"it's", `say "hi"`, "$(id)", "${HOME}", "EOF", "x\nEOF\ntouch /tmp/pwned", "---", "x\n---\nkind: Namespace",
	"bidi\u202ereversed", "-rf", "!!", "*", "~root", "tab\there",
}

// holdsHostile fails unless every block build(v) renders for each of
// values parses as the block build("plain") renders, with v as one word in
// place of "plain"; a step may instead be a sentence saying no command is
// printed. It returns how many values were printed in a block.
func holdsHostile(t *testing.T, values []string, build func(v string) checks.Steps) int {
	t.Helper()
	benign := build("plain")
	var want []*shellshape.Shape
	for _, st := range benign {
		if st.Kind == checks.KindShell {
			want = append(want, mustShape(t, st.Text))
		}
	}
	if len(want) == 0 {
		t.Fatalf("the benign fix has no block: %+v", benign)
	}
	printed := 0
	for _, v := range values {
		blocks := 0
		for i, st := range build(v) {
			switch st.Kind {
			case checks.KindText:
				continue // prose, or why no command is printed
			case checks.KindShell:
			default:
				t.Errorf("%q: step %d is a %s block", v, i, st.Kind)
				continue
			}
			if blocks >= len(want) {
				t.Errorf("%q: more blocks than the benign fix: %+v", v, build(v))
				break
			}
			w := want[blocks]
			blocks++
			got := mustShape(t, st.Text)
			if len(got.Stmts) != len(w.Stmts) || len(got.Words) != len(w.Words) || len(got.Heredocs) != len(w.Heredocs) {
				t.Errorf("%q changed the structure:\n%s\nparsed as\n%s\nnot like\n%s", v, st.Text, got, w)
				continue
			}
			for j, ww := range w.Words {
				if g := got.Words[j]; g != strings.ReplaceAll(ww, "plain", v) {
					t.Errorf("%q: word %d is %q, want %q\n%s", v, j, g, strings.ReplaceAll(ww, "plain", v), st.Text)
				}
			}
		}
		if blocks > 0 {
			printed++
		}
	}
	return printed
}

// withheld says whether steps print no command: sentences only, one of
// them saying why.
func withheld(steps checks.Steps) bool {
	said := false
	for _, st := range steps {
		if st.Kind != checks.KindText {
			return false
		}
		said = said || strings.HasPrefix(st.Text, "doctor prints no command here: ")
	}
	return said
}

func mustShape(t *testing.T, text string) *shellshape.Shape {
	t.Helper()
	s, err := shellshape.Parse(text)
	if err != nil {
		t.Fatalf("does not parse: %v\n%s", err, text)
	}
	return s
}
