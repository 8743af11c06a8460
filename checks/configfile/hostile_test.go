package configfile

import (
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts"
	"github.com/socialwebcomputer/doctor/internal/testing/shellshape"
)

// Every hostile value reaching the fix of the file and of a directory in
// the way (its name, the user chown gives it to) is refused or arrives as
// one word; /etc in the way is never chmodded.
func TestChangeStepsHoldHostileValues(t *testing.T) {
	scope := &facts.FixScope{Roots: []string{"/etc/gitlab-runner"}}
	build := func(v string) checks.Steps {
		steps := facts.ChangeSteps(scope, v,
			facts.Change{Path: "/etc/gitlab-runner/" + v + "/config.toml", Mode: "0600", Chown: true},
			facts.Change{Path: "/etc/gitlab-runner/" + v, Mode: "o+x"},
			facts.Change{Path: "/etc", Mode: "o+x"})
		if last := steps[len(steps)-1]; last.Kind != checks.KindText || !strings.Contains(last.Text, "/etc is a system path") {
			t.Errorf("%q: /etc got %+v", v, last)
		}
		return steps
	}
	if n := holdsHostile(t, hostile, build); n != len(hostile) {
		t.Errorf("%d of %d hostile values printed: each is a path of the runner's own", n, len(hostile))
	}
}

// A system directory in the way, a path outside the runner's own, a
// relative one, and any path of a runner nobody installed get no command.
func TestChangeStepsRefuse(t *testing.T) {
	scope := &facts.FixScope{Roots: []string{"/etc/gitlab-runner"}}
	for _, p := range []string{"/etc", "/", "/usr/bin", "/etc/shadow", "/etc/gitlab-runner/../shadow", "config.toml"} {
		if got := facts.ChangeSteps(scope, "", facts.Change{Path: p, Mode: "o+x"}); !withheld(got) {
			t.Errorf("%s: %+v", p, got)
		}
	}
	refused := &facts.FixScope{Refused: "pid 7 (uid 1000 mallory) runs gitlab-runner as neither root nor a systemd unit's user"}
	got := facts.ChangeSteps(refused, "mallory", facts.Change{Path: "/etc/gitlab-runner/config.toml", Mode: "0600", Chown: true})
	if !withheld(got) || !strings.Contains(got.String(), "cannot vouch for") {
		t.Errorf("a refused runner got %+v", got)
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
