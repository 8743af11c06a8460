package systemd

import (
	"slices"
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/internal/redact"
)

func keepKubeconfig(name string) bool { return name == "KUBECONFIG" }

func standIn(v string) string { return "STANDIN-" + strings.ToUpper(v[:min(2, len(v))]) }

// A unit keeps its names, and only the values keep says are read; every
// line stays where it was, continued lines and comments included, and the
// unit parses to the same problems and assignments.
func TestRedactUnit(t *testing.T) {
	unit := "[Unit]\nDescription=GitLab Runner\n# the old token: glrt-UnitCmt7Qw3Zp9Lx2\n[Service]\n" +
		"Environment=\"KUBECONFIG=/etc/gitlab-runner/k.yaml\" SMTP_RELAY=UnitSmtp8Kq2Zm6Tx1Lp\n" +
		"Environment=\"DEPLOY_KEY=Unit\\\\Key%%5Rz1\" \\\n  OTHER=UnitOther9Qm2Zp7Lx4\n" +
		"ExecStart=/usr/bin/gitlab-runner run --config /etc/gitlab-runner/config.toml\n"
	out, err := RedactUnit("/etc/systemd/system/gitlab-runner.service.d/env.conf", []byte(unit), keepKubeconfig, standIn, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	for _, secret := range []string{"UnitCmt7Qw3Zp9Lx2", "UnitSmtp8Kq2Zm6Tx1Lp", "Key%%5Rz1", "UnitOther9Qm2Zp7Lx4"} {
		if strings.Contains(s, secret) {
			t.Errorf("keeps %q:\n%s", secret, s)
		}
	}
	if strings.Count(s, "\n") != strings.Count(unit, "\n") {
		t.Errorf("lines moved:\n%s", s)
	}
	u := parseUnitBytes("gitlab-runner.service", "env.conf", out)
	got := map[string]Assignment{}
	for _, a := range u.Environment {
		got[a.Name] = a
	}
	if got["KUBECONFIG"].Value != "/etc/gitlab-runner/k.yaml" || got["DEPLOY_KEY"].Value != standIn(`Unit\Key%5Rz1`) ||
		got["OTHER"].Source.Line != 6 || len(u.ExecStart) == 0 {
		t.Errorf("reads differently: %+v\n%s", u.Environment, s)
	}
}

// An environment file keeps each assignment on its line; a value over
// lines and comments leave empty lines.
func TestRedactEnvFile(t *testing.T) {
	env := "# the password: EnvCmt5Rz1Qm7Tx3Wl8\nKUBECONFIG=/etc/k.yaml\nMULTI=\"EnvMl7Qw3\nZp9Lx2Mc5\"\nPLAIN='EnvPlain8Kq2Zm6Tx1'\nLAST=x\n"
	out, err := RedactEnvFile("/etc/default/gitlab-runner", []byte(env), keepKubeconfig, standIn)
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	for _, secret := range []string{"EnvCmt5Rz1Qm7Tx3Wl8", "EnvMl7Qw3", "Zp9Lx2Mc5", "EnvPlain8Kq2Zm6Tx1"} {
		if strings.Contains(s, secret) {
			t.Errorf("keeps %q:\n%s", secret, s)
		}
	}
	vars, _, err := ParseEnvFile("f", out)
	if err != nil || len(vars) != 4 || vars[0].Value != "/etc/k.yaml" || vars[3].Name != "LAST" || vars[3].Source.Line != 6 {
		t.Errorf("reads differently: %+v %v\n%q", vars, err, s)
	}
}

// runnerArgv is what the bundle keeps of a command line: redact.Argv,
// a variable reference left to expand.
func runnerArgv(words []string) []string {
	return redact.Argv(words, func(v string) string {
		if strings.Contains(strings.ReplaceAll(v, "$$", ""), "$") {
			return v
		}
		return redact.StandIn(v)
	})
}

// TestRedactUnitExecStart: a unit's ExecStart= keeps the runner's own
// options and the flags' names, and nothing of a setting: a token, a
// password in quotes, a bearer token after =, in any of the forms
// systemd reads (prefixes, quotes, specifiers, continuation lines,
// several commands); a variable stays a reference to the redacted
// environment.
func TestRedactUnitExecStart(t *testing.T) {
	unit := "[Service]\nEnvironment=PW=UnitPw7Qw3Zp9Lx2Mc\n" +
		"ExecStart=-/usr/bin/gitlab-runner run-single --url https://gitlab.example.invalid \\\n" +
		"  --token glrt-UnitTok8Kq2Zm6Tx1 \"--kubernetes-bearer_token=Bearer Unit9Zm6Tx1Kq\" \\\n" +
		"  --ssh-password $PW --cache-s3-secret-key '50%%Unit4Lx2Mc' --config /etc/gitlab-runner/%N.toml\n"
	out, err := RedactUnit("/etc/systemd/system/gitlab-runner.service", []byte(unit), keepKubeconfig, standIn, runnerArgv)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"UnitPw7Qw3Zp9Lx2Mc", "UnitTok8Kq2Zm6Tx1", "Unit9Zm6Tx1Kq", "Unit4Lx2Mc", "gitlab.example.invalid"} {
		if strings.Contains(string(out), secret) {
			t.Errorf("%s is kept:\n%s", secret, out)
		}
	}
	for _, kept := range []string{"--token", "--ssh-password\" \"$PW\"", "--config\" \"/etc/gitlab-runner/gitlab-runner.toml\"", "run-single"} {
		if !strings.Contains(string(out), kept) {
			t.Errorf("%s is not kept:\n%s", kept, out)
		}
	}
	if strings.Count(string(out), "\n") != strings.Count(unit, "\n") {
		t.Errorf("lines moved:\n%s", out)
	}
}

// What the rewrite cannot write back as systemd read it (an assignment
// systemd ignores with a warning that quotes it) is refused, not copied.
func TestRedactUnitRefusesWhatItCannotRewrite(t *testing.T) {
	unit := "[Service]\nEnvironment=not-an-assignment-UnitBad7Qw3Zp9\n"
	if out, err := RedactUnit("x.service", []byte(unit), keepKubeconfig, standIn, nil); err == nil {
		t.Errorf("rewrote it: %q", out)
	}
}

// FuzzRedactUnit: a unit or environment file rewritten for a bundle parses
// to the same problems and assignments (RedactUnit checks it), and no value
// it replaced is left in it.
func FuzzRedactUnit(f *testing.F) {
	f.Add("[Service]\nEnvironment=\"KUBECONFIG=/k\" SMTP=UnitSmtp8Kq2Zm6Tx1Lp\n# c UnitCmt7Qw3Zp9Lx2\n", false)
	f.Add("[Service]\nEnvironment=A=UnitA7Qw3Zp9Lx2Mc \\\n  B=\"x y\" C=%%n\n", false)
	f.Add("KUBECONFIG=/k\nMULTI=\"EnvMl7Qw3\nZp9Lx2Mc5\"\n# c\nP='EnvPlain8Kq2Zm6Tx1'\n", true)
	f.Add("[Service]\nExecStart=/usr/bin/gitlab-runner run-single --token ExecTok7Qw3Zp9Lx2 \"--ssh-password=Exec Pw8Kq2Zm6\" -c /etc/%n.toml\n", false)
	f.Add("[Service]\nEnvironment=T=UnitT7Qw3Zp9Lx2Mc\nExecStart=-@/usr/bin/gitlab-runner runner --debug run-single -t $T --url=${U} ; /bin/true\n", false)
	f.Fuzz(func(t *testing.T, data string, envFile bool) {
		rewrite := func(file string, data []byte, keep func(string) bool, standIn func(string) string) ([]byte, error) {
			return RedactUnit(file, data, keep, standIn, runnerArgv)
		}
		parse := func(b []byte) []Assignment { return parseUnitBytes("x.service", "x.service", b).Environment }
		if envFile {
			rewrite, parse = RedactEnvFile, func(b []byte) []Assignment { v, _, _ := ParseEnvFile("x", b); return v }
		}
		// The bundle's stand-in, which is its own stand-in: a command line
		// redacted again in analyze reads the same.
		out, err := rewrite("x.service", []byte(data), keepKubeconfig, redact.StandIn)
		if err != nil {
			return // not copied
		}
		if strings.Count(string(out), "\n") != strings.Count(data, "\n") {
			t.Fatalf("lines moved: %q", out)
		}
		if envFile {
			return
		}
		// An ExecStart= command line keeps only what redact.Argv keeps:
		// the rewrite runs what Argv makes of the original.
		before, after := parseUnitBytes("x.service", "x.service", []byte(data)), parseUnitBytes("x.service", "x.service", out)
		if want := runnerArgv(before.ExecStart); !slices.Equal(runnerArgv(after.ExecStart), want) {
			t.Fatalf("ExecStart %q, want %q:\n%q", after.ExecStart, want, out)
		}
		for _, a := range parse([]byte(data)) {
			// Written once in the file, it can be kept only where it was set.
			if !keepKubeconfig(a.Name) && len(a.Value) >= 12 && strings.Count(data, a.Value) == 1 && strings.Contains(string(out), a.Value) &&
				!strings.Contains(a.Value, "REDACTED-") {
				t.Fatalf("%s's value kept: %q", a.Name, out)
			}
		}
	})
}

// A template's drop-in keeps its specifiers: the bundle's copy of
// gitlab-runner@.service.d/kubeconfig.conf still says %i, so doctor analyze
// resolves it for the instance it loads, as the live run did.
func TestRedactUnitKeepsSpecifiers(t *testing.T) {
	in := "[Service]\nEnvironment=KUBECONFIG=/etc/gitlab-runner/%i/kubeconfig.yaml \"TOKEN=s3cret%%x\" P=100%%\n"
	out, err := RedactUnit("/etc/systemd/system/gitlab-runner@.service.d/kubeconfig.conf", []byte(in),
		func(n string) bool { return n == "KUBECONFIG" || n == "P" }, func(v string) string { return "stand-in" }, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := "[Service]\nEnvironment=\"KUBECONFIG=/etc/gitlab-runner/%i/kubeconfig.yaml\" \"TOKEN=stand-in\" \"P=100%%\"\n"; string(out) != want {
		t.Errorf("redacted:\n%s\nwant\n%s", out, want)
	}
	u := parseUnitBytes("gitlab-runner@tenant.service", "x", out)
	if vars, _ := u.Environ(); vars["KUBECONFIG"] != "/etc/gitlab-runner/tenant/kubeconfig.yaml" || vars["P"] != "100%" {
		t.Errorf("read back for an instance: %v", vars)
	}
}
