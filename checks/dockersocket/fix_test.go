package dockersocket

import (
	"strings"
	"testing"

	"github.com/BurntSushi/toml"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/facts/docker"
	"github.com/socialwebcomputer/doctor/checks/facts/kubefacts"
	"github.com/socialwebcomputer/doctor/internal/fixcode"
	"github.com/socialwebcomputer/doctor/testkit/hostile"
	"github.com/socialwebcomputer/doctor/testkit/hostilefix"
)

// The socket's path is one word of the container's docker run, wherever it
// goes (stat's argument, -v's value), or no command at all.
func TestRecreateContainerCarriesTheSocketAsOneWord(t *testing.T) {
	build := func(v string) checks.Steps { return recreateContainer("/run/" + v + "/docker.sock") }
	benign := build("plain")
	if len(benign) != 2 || benign[1].Kind != checks.KindShell {
		t.Fatalf("benign: %q", benign)
	}
	for _, v := range hostile.Values {
		got := build(v)
		if strings.ContainsAny(v, ":\x00") { // -v's separator; a NUL no command carries
			if len(got.Blocks()) != 0 || !hostilefix.WithheldStep(got[1]) {
				t.Errorf("%q: a ':' or a NUL in the path, and %q", v, got)
			}
			continue
		}
		if len(got) != 2 || got[1].Kind != checks.KindShell {
			t.Errorf("%q: %q", v, got)
			continue
		}
		hostilefix.SameShape(t, v, benign[1].Text, got[1].Text)
	}
	if got := recreateContainer("docker.sock"); len(got.Blocks()) != 0 {
		t.Errorf("a relative path, which -v reads as a volume: %q", got)
	}
}

// usermod's group and user, and the unit restarted, are words; a runner
// doctor cannot vouch for gets no usermod.
func TestAddToGroupCarriesNamesAsWords(t *testing.T) {
	scope := &kubefacts.FixScope{}
	benign := addToGroup(scope, "grp-plain", "usr-plain", "gitlab-runner.service")
	if len(benign) != 2 || benign[1].Text != "sudo usermod -aG grp-plain usr-plain\nsudo systemctl restart gitlab-runner.service" {
		t.Fatalf("benign: %q", benign)
	}
	for _, v := range hostile.Values {
		got := addToGroup(scope, "grp-"+v, "usr-"+v, "gitlab-runner.service")
		if len(got) != 2 || got[1].Kind != checks.KindShell {
			if !hostilefix.WithheldStep(got[len(got)-1]) {
				t.Errorf("%q: %q", v, got)
			}
			continue
		}
		hostilefix.SameShape(t, v, benign[1].Text, got[1].Text)
	}
	// The unit: a name systemd takes is one word of the restart; one it
	// refuses is in no command, and usermod still is.
	benignUnit := addToGroup(scope, "grp", "usr", "gitlab-runnerplain.service")
	for _, v := range hostile.Values {
		unit := "gitlab-runner" + v + ".service"
		got := addToGroup(scope, "grp", "usr", unit)
		if fixcode.UnitName(unit) == nil {
			hostilefix.SameShape(t, v, benignUnit[1].Text, got[1].Text)
			continue
		}
		if len(got) != 3 || got[1].Text != "sudo usermod -aG grp usr" || !hostilefix.WithheldStep(got[2]) {
			t.Errorf("%q: %q", v, got)
		}
	}
	for _, bad := range [][2]string{{"-o", "usr"}, {"grp", "--help"}, {"", "usr"}} {
		if got := addToGroup(scope, bad[0], bad[1], "gitlab-runner.service"); len(got.Blocks()) != 0 {
			t.Errorf("%q: an option for usermod: %q", bad, got)
		}
	}
	refused := &kubefacts.FixScope{Refused: "pid 4242 runs gitlab-runner as neither root nor a systemd unit's user"}
	if got := addToGroup(refused, "docker", "gitlab-runner", "gitlab-runner.service"); len(got.Blocks()) != 0 || !hostilefix.WithheldStep(got[1]) {
		t.Errorf("a runner doctor cannot vouch for: %q", got)
	}
}

// The default socket's directory gets doctor's constant rmdir; any other
// path one FixScope allows as a word, and one it refuses none.
func TestRmdirOfTheSocketsDirectory(t *testing.T) {
	got := missingFix(&kubefacts.FixScope{Refused: "not vouched for"}, true, "/var/run/docker.sock")
	if got[1].Text != "sudo systemctl start docker\nsudo rmdir /var/run/docker.sock" {
		t.Errorf("the default socket: %q", got)
	}
	got = missingFix(&kubefacts.FixScope{}, true, "/run/user/999/docker.sock")
	if got[1].Text != "sudo systemctl start docker" || !hostilefix.WithheldStep(got[2]) || strings.Contains(got.Blocks().String(), "rmdir") {
		t.Errorf("a system path: %q", got)
	}
	scope := &kubefacts.FixScope{Roots: []string{"/srv/runner"}}
	build := func(v string) checks.Steps { return missingFix(scope, true, "/srv/runner/"+v+"/docker.sock") }
	benign := build("plain")
	if benign[1].Kind != checks.KindShell || !strings.Contains(benign[1].Text, "sudo rmdir /srv/runner/plain/docker.sock") {
		t.Fatalf("benign: %q", benign)
	}
	for _, v := range hostile.Values {
		got := build(v)
		if strings.Contains(v, "\x00") { // no command carries it: no start, no rmdir
			if len(got.Blocks()) != 0 || !hostilefix.WithheldStep(got[1]) {
				t.Errorf("%q: %q", v, got)
			}
			continue
		}
		if got[1].Kind != checks.KindShell || strings.Contains(v, "..") {
			if !hostilefix.WithheldStep(got[2]) {
				t.Errorf("%q: %q", v, got)
			}
			continue
		}
		hostilefix.SameShape(t, v, benign[1].Text, got[1].Text)
	}
}

// The daemon's address reaches config.toml's lines as a TOML string:
// [runners.docker] with its three keys, host exactly the value.
func TestTLSFixHoldsTheHostAsAString(t *testing.T) {
	for _, v := range hostile.Values {
		host := "tcp://" + v + ":2376"
		got := tlsFix(&docker.Daemon{Addr: docker.Address{Host: host}})
		if got[1].Kind != checks.KindTOML {
			if !hostilefix.WithheldStep(got[1]) {
				t.Errorf("%q: %q", v, got)
			}
			continue
		}
		var doc map[string]map[string]map[string]any
		md, err := toml.Decode(got[1].Text, &doc)
		if err != nil {
			t.Errorf("%q: the lines do not parse: %v\n%s", v, err, got[1].Text)
			continue
		}
		d := doc["runners"]["docker"]
		if len(doc) != 1 || len(doc["runners"]) != 1 || len(d) != 3 || d["host"] != host || d["tls_verify"] != true ||
			d["tls_cert_path"] != "/etc/gitlab-runner/docker-certs" || len(md.Keys()) != 4 {
			t.Errorf("%q: the lines hold %v (keys %v)\n%s", v, doc, md.Keys(), got[1].Text)
		}
	}
}
