package fleetingplugin

import (
	"strconv"
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts/hostfacts"
	"github.com/socialwebcomputer/doctor/checks/facts/kubefacts"
	"github.com/socialwebcomputer/doctor/internal/source/systemd"
	"github.com/socialwebcomputer/doctor/testkit/hostile"
	"github.com/socialwebcomputer/doctor/testkit/hostilefix"
)

// The plugin's name and config.toml's path come from config.toml and the
// process, the PATH directory from its environment, the unit from its
// --service flag, the user from /etc/passwd: every hostile value in them
// reaching install, chmod, systemctl or sudo -u is one word, or refused.
func TestFixesHoldHostileValues(t *testing.T) {
	scope := &kubefacts.FixScope{Roots: []string{"/etc/gitlab-runner", "/home/gitlab-runner"}}
	unit := func(name string) *hostfacts.Service {
		return &hostfacts.Service{Name: name, Unit: &systemd.Unit{Name: name, Path: "/etc/systemd/system/" + name}}
	}
	env := func(pathVar string) *hostfacts.Environ {
		return &hostfacts.Environ{Source: "/proc/77/environ", Vars: map[string]string{"PATH": pathVar}}
	}
	var noColon []string // a PATH entry ends at a colon: the rest is another entry
	for _, v := range hostilefix.PathValues(func(v string) string { return "/home/gitlab-runner/" + v }) {
		if !strings.Contains(v, ":") {
			noColon = append(noColon, v)
		}
	}
	for _, c := range []struct {
		name   string
		values []string
		build  func(v string) checks.Steps
	}{
		{"install, its name", hostilefix.PathValues(func(v string) string { return "/home/gitlab-runner/bin/fleeting-plugin-" + v }), func(v string) checks.Steps {
			ra := &hostfacts.RunAs{UIDKnown: true, UID: 1001, User: "gitlab-runner", Unit: unit("gitlab-runner.service")}
			return installFix(scope, "fleeting-plugin-"+v, "/etc/gitlab-runner/config.toml", env("/home/gitlab-runner/bin"), ra, &resolution{})
		}},
		{"install, its PATH directory", noColon, func(v string) checks.Steps {
			ra := &hostfacts.RunAs{UIDKnown: true, UID: 1001, User: "gitlab-runner", Unit: unit("gitlab-runner.service")}
			return installFix(scope, "fleeting-plugin-dvp", "/etc/gitlab-runner/config.toml", env("/usr/bin:/home/gitlab-runner/"+v), ra, &resolution{})
		}},
		{"fleeting install", hostilefix.PathValues(func(v string) string { return "/etc/gitlab-runner/" + v + "/config.toml" }), func(v string) checks.Steps {
			ra := &hostfacts.RunAs{UIDKnown: true, UID: 1001, User: v}
			return installFix(scope, "dvp:1", "/etc/gitlab-runner/"+v+"/config.toml", env(""), ra, &resolution{installed: true, installDir: "/home/x"})
		}},
		{"chmod", hostilefix.PathValues(func(v string) string { return "/home/gitlab-runner/" + v + "/fleeting-plugin-dvp" }), func(v string) checks.Steps {
			plugin := "/home/gitlab-runner/" + v + "/fleeting-plugin-dvp"
			return chmodFix(scope, plugin, []hostfacts.Blocker{{Path: plugin}, {Path: "/home/gitlab-runner/" + v}, {Path: "/home"}})
		}},
	} {
		if n := hostilefix.HoldsValues(t, c.values, c.build); n != len(c.values) {
			t.Errorf("%s: %d of %d hostile values printed", c.name, n, len(c.values))
		}
	}
	// The unit's name: one word when systemd would take it, else the
	// install is printed and a sentence says why not the restart.
	for _, v := range append([]string{"-H", "--now"}, hostile.Values...) {
		ra := &hostfacts.RunAs{UIDKnown: true, UID: 1001, User: "gitlab-runner", Unit: unit(v + ".service")}
		got := installFix(scope, "fleeting-plugin-dvp", "/etc/gitlab-runner/config.toml", env("/home/gitlab-runner/bin"), ra, &resolution{})
		blocks := got.Blocks()
		if len(blocks) != 1 {
			t.Errorf("unit %q: %s", v, got)
			continue
		}
		shape := hostilefix.MustShape(t, blocks[0].Text)
		restart := "call(\"sudo\", \"systemctl\", \"restart\", " + strconv.Quote(v+".service") + ")"
		switch {
		case unitArg(v+".service") == nil:
			if len(shape.Stmts) != 2 || shape.Stmts[1] != restart {
				t.Errorf("unit %q: %s", v, shape)
			}
		case len(shape.Stmts) != 1 || !hostilefix.Withheld(got[len(got)-1:]):
			t.Errorf("unit %q is restarted: %s", v, got)
		}
	}
}

// A PATH directory that is a system one, a runner nobody installed, a
// relative config.toml: no command.
func TestFixesRefuse(t *testing.T) {
	scope := &kubefacts.FixScope{Roots: []string{"/etc/gitlab-runner", "/home/gitlab-runner"}}
	refused := &kubefacts.FixScope{Refused: "pid 7 (uid 1000 mallory) runs gitlab-runner as neither root nor a systemd unit's user", Roots: scope.Roots}
	ra := &hostfacts.RunAs{UIDKnown: true, UID: 1001, User: "gitlab-runner"}
	path := func(p string) *hostfacts.Environ { return &hostfacts.Environ{Vars: map[string]string{"PATH": p}} }
	for name, got := range map[string]checks.Steps{
		"install into /usr/local/bin": installFix(scope, "fleeting-plugin-dvp", "/etc/gitlab-runner/config.toml", path("/usr/local/bin:/usr/bin"), ra, &resolution{}),
		"install into /etc":           installFix(scope, "fleeting-plugin-dvp", "/etc/gitlab-runner/config.toml", path("/etc"), ra, &resolution{}),
		"install past ..":             installFix(scope, "fleeting-plugin-dvp", "/etc/gitlab-runner/config.toml", path("/home/gitlab-runner/../alice/bin"), ra, &resolution{}),
		"install, refused":            installFix(refused, "fleeting-plugin-dvp", "/etc/gitlab-runner/config.toml", path("/home/gitlab-runner/bin"), ra, &resolution{}),
		"fleeting install, refused":   installFix(refused, "dvp:1", "/etc/gitlab-runner/config.toml", path(""), ra, &resolution{installed: true}),
		"fleeting install, relative":  installFix(scope, "dvp:1", "config.toml", path(""), ra, &resolution{installed: true}),
		"chmod /usr/local/bin":        chmodFix(scope, "/usr/local/bin/fleeting-plugin-dvp", []hostfacts.Blocker{{Path: "/usr/local/bin/fleeting-plugin-dvp"}}),
		"chmod, refused":              chmodFix(refused, "/home/gitlab-runner/bin/p", []hostfacts.Blocker{{Path: "/home/gitlab-runner/bin/p"}}),
	} {
		if !hostilefix.Withheld(got) {
			t.Errorf("%s: %s", name, got)
		}
	}
}
