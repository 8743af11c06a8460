package runnerprocess

import (
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/internal/testing/shellshape"
)

// The unit's name comes from the process's --service flag: every hostile
// value in it is one word of systemctl and journalctl, or refused.
func TestStartAndReadHoldsHostileValues(t *testing.T) {
	printed := holdsHostile(t, append([]string{"-H", "--now"}, hostile...), func(v string) checks.Steps {
		return checks.Steps{startAndRead(v + ".service")}
	})
	if printed == 0 {
		t.Error("no unit name was printed")
	}
	for _, v := range []string{"-H.service", "--now.service", "a;b.service", "x\nEOF.service", "gitlab-runner"} {
		if got := (checks.Steps{startAndRead(v)}); !withheld(got) {
			t.Errorf("%q: %s", v, got)
		}
	}
	if got := startAndRead("gitlab-runner.service").Text; got != "sudo systemctl start gitlab-runner.service\nsudo journalctl -u gitlab-runner.service -n 50 --no-pager" {
		t.Errorf("the fix reads %q", got)
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
