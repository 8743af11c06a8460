package systemd

import (
	"reflect"
	"testing"
)

// showOutput is what Debian 12's systemctl 252 printed for a template
// instance whose unit quotes, escapes and unsets (captured from the
// manager testkit/realsystemd runs).
const showOutput = `MainPID=0
Result=success
ExecMainStatus=0
ExecStart={ path=/bin/echo ; argv[]=/bin/echo a b a\x2db-c a-b/c ; ignore_errors=no ; start_time=[n/a] ; stop_time=[n/a] ; pid=0 ; code=(null) ; status=0/0 }
ExecStart={ path=/bin/echo ; argv[]=/bin/echo 2 ; ignore_errors=yes ; start_time=[n/a] ; stop_time=[n/a] ; pid=0 ; code=(null) ; status=0/0 }
Environment=A=1 B=2 "C=a\\nb" "D=x\$y\` + "`" + `z\"q" E=ü "N=l1\nl2" T=transient CTL=1
EnvironmentFiles=/x y (ignore_errors=yes)
EnvironmentFiles=/z (ignore_errors=no)
UnsetEnvironment=A B=2
WorkingDirectory=!~
User=nobody
LoadState=loaded
ActiveState=inactive
SubState=dead
FragmentPath=/lib/systemd/system/t@.service
DropInPaths=/run/systemd/transient/t@.service.d/a.conf /etc/systemd/system.control/t@.service.d/b.conf
UnitFileState=static
NeedDaemonReload=no
`

func TestParseShow(t *testing.T) {
	s, err := ParseShow(showOutput)
	if err != nil {
		t.Fatal(err)
	}
	want := &Show{
		LoadState:        "loaded",
		FragmentPath:     "/lib/systemd/system/t@.service",
		DropInPaths:      []string{"/run/systemd/transient/t@.service.d/a.conf", "/etc/systemd/system.control/t@.service.d/b.conf"},
		Environment:      []string{"A=1", "B=2", `C=a\nb`, "D=x$y`z\"q", "E=ü", "N=l1\nl2", "T=transient", "CTL=1"},
		UnsetEnvironment: []string{"A", "B=2"},
		EnvironmentFiles: []ShowEnvFile{{"/x y", true}, {"/z", false}},
		ExecStart: []ShowExec{{Path: "/bin/echo", Argv: `/bin/echo a b a\x2db-c a-b/c`},
			{Path: "/bin/echo", Argv: "/bin/echo 2", IgnoreFailure: true}},
		User: "nobody", WorkingDirectory: "!~",
		ActiveState: "inactive", SubState: "dead", Result: "success", UnitFileState: "static",
	}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("ParseShow =\n%+v\nwant\n%+v", s, want)
	}
	for _, bad := range []string{"", "Environment=\"open\n", "LoadState=loaded\nEnvironment=\"a\"b\n", "LoadState=loaded\nExecStart=nope\n", "LoadState=loaded\nEnvironment=\"\\q\"\n"} {
		if _, err := ParseShow(bad); err == nil {
			t.Errorf("ParseShow(%q) took it", bad)
		}
	}
}

// UnsetEnvironment= is applied last, to Environment= and the files alike;
// an entry with a value removes the variable only with that value; an
// empty assignment resets the list; the Environment property keeps one
// entry a name, replaced where it first stood.
func TestUnsetEnvironment(t *testing.T) {
	f := newFixture(t)
	f.file("/etc/systemd/system/gitlab-runner.service", "[Service]\nExecStart=/usr/bin/gitlab-runner run\n"+
		"Environment=KUBECONFIG=/a A=1 B=2 A=3\nEnvironmentFile=/etc/default/runner\nUnsetEnvironment=GONE\n")
	f.file("/etc/default/runner", "FROMFILE=1\nC=keep\n")
	f.file("/etc/systemd/system/gitlab-runner.service.d/10-unset.conf", "[Service]\nUnsetEnvironment=\nUnsetEnvironment=KUBECONFIG B=9 FROMFILE C=other KUBECONFIG\n")
	f.file("/etc/systemd/system/gitlab-runner.service.d/20-late.conf", "[Service]\nEnvironment=KUBECONFIG=/late\n")
	u := f.load("gitlab-runner.service")
	noProblems(t, u)
	vars, _ := u.Environ()
	want := map[string]string{"A": "3", "B": "2", "C": "keep"}
	if !reflect.DeepEqual(vars, want) {
		t.Errorf("Environ = %v, want %v", vars, want)
	}
	if got := u.EnvironmentList(); !reflect.DeepEqual(got, []string{"KUBECONFIG=/late", "A=3", "B=2"}) {
		t.Errorf("EnvironmentList = %q", got)
	}
	if src, ok := u.Unset("KUBECONFIG", "/late"); !ok || src.Path != "/etc/systemd/system/gitlab-runner.service.d/10-unset.conf" {
		t.Errorf("Unset(KUBECONFIG) = %v %v", src, ok)
	}
	if got := u.AsShow().UnsetEnvironment; !reflect.DeepEqual(got, []string{"KUBECONFIG", "B=9", "FROMFILE", "C=other"}) {
		t.Errorf("UnsetEnvironment = %q", got)
	}
}
