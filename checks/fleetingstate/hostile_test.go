package fleetingstate

import (
	"path"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts"
	"github.com/socialwebcomputer/doctor/internal/testing/shellshape"
)

// state_storage.dir comes from config.toml: every hostile value in it
// reaching chown and chmod is one word.
func TestOwnFixHoldsHostileValues(t *testing.T) {
	scope := &facts.FixScope{Roots: []string{"/home/gitlab-runner"}}
	ra := &facts.RunAs{UIDKnown: true, UID: 1001, GID: 1001}
	build := func(v string) checks.Steps { return ownFix(scope, ra, "/home/gitlab-runner/"+v+"/state") }
	if n := holdsHostile(t, hostile, build); n != len(hostile) {
		t.Errorf("%d of %d hostile values printed: each is a path of the runner's own", n, len(hostile))
	}
	refused := &facts.FixScope{Refused: "pid 7 (uid 1000 mallory) runs gitlab-runner as neither root nor a systemd unit's user", Roots: scope.Roots}
	for _, got := range []checks.Steps{ownFix(refused, ra, "/home/gitlab-runner/state"), ownFix(scope, ra, "/var/lib"), ownFix(scope, ra, "/etc/shadow"), ownFix(scope, ra, "state")} {
		if !withheld(got) {
			t.Errorf("chown without scope: %+v", got)
		}
	}
}

// HOME comes from the runner's environment: the state_storage table the
// fix prints is that one table, whatever HOME holds, its dir HOME/state.
func TestEnableFixHoldsHostileValues(t *testing.T) {
	for _, v := range append([]string{"plain"}, hostile...) {
		home := "/home/" + v
		steps := enableFix(&facts.RunAs{HomeSet: true, Home: home})
		var blocks checks.Steps
		for _, st := range steps {
			if st.Kind != checks.KindText {
				blocks = append(blocks, st)
			}
		}
		if len(blocks) != 1 {
			if !withheld(steps) {
				t.Errorf("%q: %+v", v, steps)
			}
			continue
		}
		if blocks[0].Kind != checks.KindTOML {
			t.Fatalf("%q: a %s block", v, blocks[0].Kind)
		}
		var got map[string]any
		md, err := toml.Decode(blocks[0].Text, &got)
		if err != nil {
			t.Errorf("%q: the block does not parse: %v\n%s", v, err, blocks[0].Text)
			continue
		}
		want := []string{"runners.autoscaler.state_storage", "runners.autoscaler.state_storage.enabled",
			"runners.autoscaler.state_storage.dir", "runners.autoscaler.state_storage.keep_instance_with_acquisitions"}
		var keys []string
		for _, k := range md.Keys() {
			keys = append(keys, k.String())
		}
		if strings.Join(keys, " ") != strings.Join(want, " ") {
			t.Errorf("%q: keys %q, want %q\n%s", v, keys, want, blocks[0].Text)
			continue
		}
		ss := got["runners"].(map[string]any)["autoscaler"].(map[string]any)["state_storage"].(map[string]any)
		if ss["dir"] != path.Join(home, "state") || ss["enabled"] != true || ss["keep_instance_with_acquisitions"] != true {
			t.Errorf("%q: %v\n%s", v, ss, blocks[0].Text)
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
