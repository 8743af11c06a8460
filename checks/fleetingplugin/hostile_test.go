package fleetingplugin

import (
	"strconv"
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts"
	"github.com/socialwebcomputer/doctor/internal/source/systemd"
	"github.com/socialwebcomputer/doctor/internal/testing/shellshape"
)

// The plugin's name and config.toml's path come from config.toml and the
// process, the PATH directory from its environment, the unit from its
// --service flag, the user from /etc/passwd: every hostile value in them
// reaching install, chmod, systemctl or sudo -u is one word, or refused.
func TestFixesHoldHostileValues(t *testing.T) {
	scope := &facts.FixScope{Roots: []string{"/etc/gitlab-runner", "/home/gitlab-runner"}}
	unit := func(name string) *facts.Service {
		return &facts.Service{Name: name, Unit: &systemd.Unit{Name: name, Path: "/etc/systemd/system/" + name}}
	}
	env := func(pathVar string) *facts.Environ {
		return &facts.Environ{Source: "/proc/77/environ", Vars: map[string]string{"PATH": pathVar}}
	}
	var noColon []string // a PATH entry ends at a colon: the rest is another entry
	for _, v := range hostile {
		if !strings.Contains(v, ":") {
			noColon = append(noColon, v)
		}
	}
	for _, c := range []struct {
		name   string
		values []string
		build  func(v string) checks.Steps
	}{
		{"install, its name", hostile, func(v string) checks.Steps {
			ra := &facts.RunAs{UIDKnown: true, UID: 1001, User: "gitlab-runner", Unit: unit("gitlab-runner.service")}
			return installFix(scope, "fleeting-plugin-"+v, "/etc/gitlab-runner/config.toml", env("/home/gitlab-runner/bin"), ra, &resolution{})
		}},
		{"install, its PATH directory", noColon, func(v string) checks.Steps {
			ra := &facts.RunAs{UIDKnown: true, UID: 1001, User: "gitlab-runner", Unit: unit("gitlab-runner.service")}
			return installFix(scope, "fleeting-plugin-dvp", "/etc/gitlab-runner/config.toml", env("/usr/bin:/home/gitlab-runner/"+v), ra, &resolution{})
		}},
		{"fleeting install", hostile, func(v string) checks.Steps {
			ra := &facts.RunAs{UIDKnown: true, UID: 1001, User: v}
			return installFix(scope, "dvp:1", "/etc/gitlab-runner/"+v+"/config.toml", env(""), ra, &resolution{installed: true, installDir: "/home/x"})
		}},
		{"chmod", hostile, func(v string) checks.Steps {
			plugin := "/home/gitlab-runner/" + v + "/fleeting-plugin-dvp"
			return chmodFix(scope, plugin, []facts.Blocker{{Path: plugin}, {Path: "/home/gitlab-runner/" + v}, {Path: "/home"}})
		}},
	} {
		if n := holdsHostile(t, c.values, c.build); n != len(c.values) {
			t.Errorf("%s: %d of %d hostile values printed", c.name, n, len(c.values))
		}
	}
	// The unit's name: one word when systemd would take it, else the
	// install is printed and a sentence says why not the restart.
	for _, v := range append([]string{"-H", "--now"}, hostile...) {
		ra := &facts.RunAs{UIDKnown: true, UID: 1001, User: "gitlab-runner", Unit: unit(v + ".service")}
		got := installFix(scope, "fleeting-plugin-dvp", "/etc/gitlab-runner/config.toml", env("/home/gitlab-runner/bin"), ra, &resolution{})
		blocks := got.Blocks()
		if len(blocks) != 1 {
			t.Errorf("unit %q: %s", v, got)
			continue
		}
		shape := mustShape(t, blocks[0].Text)
		restart := "call(\"sudo\", \"systemctl\", \"restart\", " + strconv.Quote(v+".service") + ")"
		switch {
		case unitArg(v+".service") == nil:
			if len(shape.Stmts) != 2 || shape.Stmts[1] != restart {
				t.Errorf("unit %q: %s", v, shape)
			}
		case len(shape.Stmts) != 1 || !withheld(got[len(got)-1:]):
			t.Errorf("unit %q is restarted: %s", v, got)
		}
	}
}

// A PATH directory that is a system one, a runner nobody installed, a
// relative config.toml: no command.
func TestFixesRefuse(t *testing.T) {
	scope := &facts.FixScope{Roots: []string{"/etc/gitlab-runner", "/home/gitlab-runner"}}
	refused := &facts.FixScope{Refused: "pid 7 (uid 1000 mallory) runs gitlab-runner as neither root nor a systemd unit's user", Roots: scope.Roots}
	ra := &facts.RunAs{UIDKnown: true, UID: 1001, User: "gitlab-runner"}
	path := func(p string) *facts.Environ { return &facts.Environ{Vars: map[string]string{"PATH": p}} }
	for name, got := range map[string]checks.Steps{
		"install into /usr/local/bin": installFix(scope, "fleeting-plugin-dvp", "/etc/gitlab-runner/config.toml", path("/usr/local/bin:/usr/bin"), ra, &resolution{}),
		"install into /etc":           installFix(scope, "fleeting-plugin-dvp", "/etc/gitlab-runner/config.toml", path("/etc"), ra, &resolution{}),
		"install past ..":             installFix(scope, "fleeting-plugin-dvp", "/etc/gitlab-runner/config.toml", path("/home/gitlab-runner/../alice/bin"), ra, &resolution{}),
		"install, refused":            installFix(refused, "fleeting-plugin-dvp", "/etc/gitlab-runner/config.toml", path("/home/gitlab-runner/bin"), ra, &resolution{}),
		"fleeting install, refused":   installFix(refused, "dvp:1", "/etc/gitlab-runner/config.toml", path(""), ra, &resolution{installed: true}),
		"fleeting install, relative":  installFix(scope, "dvp:1", "config.toml", path(""), ra, &resolution{installed: true}),
		"chmod /usr/local/bin":        chmodFix(scope, "/usr/local/bin/fleeting-plugin-dvp", []facts.Blocker{{Path: "/usr/local/bin/fleeting-plugin-dvp"}}),
		"chmod, refused":              chmodFix(refused, "/home/gitlab-runner/bin/p", []facts.Blocker{{Path: "/home/gitlab-runner/bin/p"}}),
	} {
		if !withheld(got) {
			t.Errorf("%s: %s", name, got)
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
