package hostfacts

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/socialwebcomputer/doctor/internal/hostio"
)

func TestParseEnviron(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want map[string]string
	}{
		{"empty", "", map[string]string{}},
		{"one", "KUBECONFIG=/etc/k.yaml\x00", map[string]string{"KUBECONFIG": "/etc/k.yaml"}},
		{"no trailing NUL", "A=1\x00B=2", map[string]string{"A": "1", "B": "2"}},
		{"first definition wins, as getenv", "K=first\x00K=second\x00", map[string]string{"K": "first"}},
		{"value keeps its =", "OPTS=a=b=c\x00", map[string]string{"OPTS": "a=b=c"}},
		{"empty value is set", "KUBECONFIG=\x00", map[string]string{"KUBECONFIG": ""}},
		{"entries without = are dropped", "garbage\x00=novar\x00A=1\x00", map[string]string{"A": "1"}},
		{"many trailing NULs", "A=1\x00\x00\x00", map[string]string{"A": "1"}},
		{"empty entries between", "A=1\x00\x00B=2\x00", map[string]string{"A": "1", "B": "2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ParseEnviron([]byte(tc.in)); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ParseEnviron(%q) = %v, want %v", tc.in, got, tc.want)
			}
		})
	}
}

func TestFlagValue(t *testing.T) {
	names := []string{"--config", "-c"}
	for _, tc := range []struct {
		args []string
		want string
		ok   bool
	}{
		{[]string{"gitlab-runner", "run", "--config", "/a.toml"}, "/a.toml", true},
		{[]string{"gitlab-runner", "run", "--config=/a.toml"}, "/a.toml", true},
		{[]string{"gitlab-runner", "run", "-c", "/a.toml"}, "/a.toml", true},
		{[]string{"gitlab-runner", "run", "-c=/a.toml"}, "/a.toml", true},
		{[]string{"gitlab-runner", "run", "--config=", "x"}, "", true},
		{[]string{"gitlab-runner", "run", "--config"}, "", false},                     // no value follows
		{[]string{"gitlab-runner", "run", "--configx", "/a"}, "", false},              // another flag
		{[]string{"gitlab-runner", "run", "--", "--config", "/a"}, "", false},         // after --
		{[]string{"--config", "/argv0-is-not-a-flag"}, "", false},                     // argv[0] is skipped
		{[]string{"r", "run", "-c", "/first", "--config", "/second"}, "/first", true}, // first wins
	} {
		got, ok := FlagValue(tc.args, names...)
		if got != tc.want || ok != tc.ok {
			t.Errorf("FlagValue(%q) = %q, %v; want %q, %v", tc.args, got, ok, tc.want, tc.ok)
		}
	}
}

func TestIsRunnerRun(t *testing.T) {
	for _, tc := range []struct {
		comm string
		args []string
		want bool
	}{
		{"gitlab-runner", []string{"/usr/bin/gitlab-runner", "run", "--config", "/c.toml"}, true},
		{"gitlab-runner", []string{"/usr/bin/gitlab-runner", "--debug", "run"}, true},
		{"gitlab-runner", []string{"gitlab-runner", "--log-level", "debug", "run"}, true},
		{"gitlab-runner", []string{"gitlab-runner", "-l", "info", "run"}, true},
		{"gitlab-runner", []string{"gitlab-runner", "--log-level=debug", "run"}, true},
		{"gitlab-runner", []string{"gitlab-runner", "--log-format", "json", "run"}, true},
		{"gitlab-runner", []string{"gitlab-runner", "--cpuprofile", "/tmp/p", "run"}, true},
		{"sleep", []string{"/home/u/bin/gitlab-runner", "run"}, true},            // comm renamed, argv[0] not
		{"gitlab-runner", []string{"/proc/self/exe", "run"}, true},               // argv[0] odd, comm says
		{"gitlab-runner", []string{"/usr/bin/gitlab-runner-amd64", "run"}, true}, // release binary name
		{"gitlab-runner", []string{"gitlab-runner", "register", "--url", "x"}, false},
		{"gitlab-runner", []string{"gitlab-runner", "verify"}, false},
		{"gitlab-runner", []string{"gitlab-runner", "run-single"}, false},
		{"gitlab-runner", []string{"gitlab-runner"}, false},
		{"gitlab-runner", []string{"gitlab-runner", "--debug"}, false},
		{"gitlab-runner", nil, false},
		{"bash", []string{"/bin/bash", "-c", "gitlab-runner run"}, false},
		{"sleep", []string{"/bin/sleep", "run"}, false},
	} {
		if got := IsRunnerRun(tc.comm, tc.args); got != tc.want {
			t.Errorf("IsRunnerRun(%q, %q) = %v, want %v", tc.comm, tc.args, got, tc.want)
		}
	}
}

func TestReadPasswd(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "/etc/passwd", "root:x:0:0:root:/root:/bin/bash\n"+
		"# a comment line\n"+
		"short:x:5\n"+
		"bad:x:notanumber:0::/nowhere:/bin/sh\n"+
		"gitlab-runner:x:999:999:GitLab Runner:/home/gitlab-runner:/bin/bash\n"+
		"shadow:x:999:999::/elsewhere:/bin/sh\n") // a second name for 999: the first wins
	got := ReadPasswd(&hostio.Env{Root: root})
	want := map[int]PasswdEntry{
		0:   {Name: "root", Home: "/root", Shell: "/bin/bash", UID: 0, GID: 0},
		999: {Name: "gitlab-runner", Home: "/home/gitlab-runner", Shell: "/bin/bash", UID: 999, GID: 999},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ReadPasswd = %v, want %v", got, want)
	}
	if got := ReadPasswd(&hostio.Env{Root: t.TempDir()}); len(got) != 0 {
		t.Errorf("missing /etc/passwd gave %v", got)
	}
}

func TestReadProcess(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "/proc/77/comm", "gitlab-runner\n")
	writeFile(t, root, "/proc/77/cmdline", "/usr/bin/gitlab-runner\x00run\x00--config\x00/c.toml\x00")
	writeFile(t, root, "/proc/77/status", "Name:\tgitlab-runner\nUid:\t1000\t999\t999\t999\nGid:\t1000\t998\t998\t998\nGroups:\t4 24 27\n")
	passwd := map[int]PasswdEntry{999: {Name: "gitlab-runner", Home: "/home/gitlab-runner"}}
	p, ok := readProcess(&hostio.Env{Root: root}, 77, passwd)
	if !ok {
		t.Fatal("not recognised as a runner")
	}
	want := &Process{PID: 77, Comm: "gitlab-runner", Cmdline: []string{"/usr/bin/gitlab-runner", "run", "--config", "/c.toml"},
		UID: 999, GID: 998, UIDKnown: true, Groups: []int{4, 24, 27}, User: "gitlab-runner"}
	if !reflect.DeepEqual(p, want) {
		t.Errorf("readProcess = %+v, want the effective uid/gid %+v", p, want)
	}

	// No status: uid unknown, not root.
	writeFile(t, root, "/proc/78/cmdline", "gitlab-runner\x00run\x00")
	p, ok = readProcess(&hostio.Env{Root: root}, 78, passwd)
	if !ok || p.UIDKnown || p.Label() != "pid 78 (uid unknown)" {
		t.Errorf("without status: %+v, %v; want the uid unknown", p, ok)
	}
	// A status that does not parse: unknown too, never -1 taken for a uid.
	writeFile(t, root, "/proc/80/cmdline", "gitlab-runner\x00run\x00")
	writeFile(t, root, "/proc/80/status", "Uid:\tgarbage\n")
	if p, ok = readProcess(&hostio.Env{Root: root}, 80, passwd); !ok || p.UIDKnown {
		t.Errorf("garbage status: %+v, %v; want the uid unknown", p, ok)
	}
	// A process that vanished mid-scan.
	if _, ok := readProcess(&hostio.Env{Root: root}, 79, passwd); ok {
		t.Error("a missing /proc entry was read as a runner")
	}
}

func writeFile(t testing.TB, root, p, content string) {
	t.Helper()
	full := filepath.Join(root, p)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
