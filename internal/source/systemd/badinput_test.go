package systemd

import (
	"strings"
	"testing"
)

// Bad input never panics and always becomes a Problem naming file and line.
func TestBadFragments(t *testing.T) {
	const unit = "/etc/systemd/system/gitlab-runner.service"
	tests := []struct {
		name    string
		content string
		line    int
		msg     string
	}{
		{"garbage bytes (a NUL ends a line)", "\x7fELF\x02\x01\x01\x00\xff\xfe\x00garbage\n[Service]\nExecStart=/bin/true\n", 2, "UTF-8"},
		{"invalid UTF-8 line", "[Service]\nExecStart=/bin/true\nUser=\xc3\x28\n", 3, "UTF-8"},
		{"unterminated section header", "[Service\nExecStart=/bin/true\n", 1, "invalid section header"},
		{"bad characters in a section header", "[Ser\"vice]\nExecStart=/bin/true\n", 1, "bad characters"},
		{"overlong line", "[Service]\nExecStart=/bin/echo " + strings.Repeat("x", longLineMax) + "\n", 2, "longer than"},
		{"overlong continuation", "[Service]\nExecStart=/bin/echo \\\n" + strings.Repeat(strings.Repeat("y", 1<<16)+" \\\n", 17), 18, "continuation line longer"},
		{"invalid user", "[Service]\nExecStart=/bin/true\nUser=a:b\n", 3, "invalid user/group name"},
		{"numeric user 65535", "[Service]\nExecStart=/bin/true\nUser=65535\n", 3, "invalid user/group name"},
		{"working directory in /proc", "[Service]\nExecStart=/bin/true\nWorkingDirectory=/proc/1\n", 3, "API file system"},
		{"relative working directory", "[Service]\nExecStart=/bin/true\nWorkingDirectory=srv\n", 3, "not absolute"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			f.file(unit, tt.content)
			u := f.load("gitlab-runner.service")
			found := false
			for _, p := range u.Problems {
				if p.Fatal && p.Source.Path == unit && p.Source.Line == tt.line && strings.Contains(p.Message, tt.msg) {
					found = true
				}
			}
			if !found {
				t.Errorf("want a fatal problem at line %d with %q, got %v", tt.line, tt.msg, u.Problems)
			}
		})
	}
}

func TestNonFatalSyntax(t *testing.T) {
	u := parseService("ExecStart=/bin/true\n" +
		"NoEquals\n" +
		"=novalue\n" +
		"Type=bogus\n" +
		"WorkingDirectory=-relative\n" +
		"[X-Vendor]\nAnything=goes\n" +
		"[Bogus]\nUser=ignored\n")
	want := []struct {
		line int
		msg  string
	}{{3, "missing '='"}, {4, "missing key name"}, {5, "service type"}, {6, "not absolute"}, {9, "unknown section"}}
	if len(u.Problems) != len(want) {
		t.Fatalf("problems %v", u.Problems)
	}
	for i, w := range want {
		p := u.Problems[i]
		if p.Fatal || p.Source.Line != w.line || !strings.Contains(p.Message, w.msg) {
			t.Errorf("problem %d = %v, want line %d %q", i, p, w.line, w.msg)
		}
	}
	if u.User != "" || u.Type != "simple" || u.WorkingDirectoryPath != "" {
		t.Errorf("User %q Type %q wd %q", u.User, u.Type, u.WorkingDirectoryPath)
	}
	// Outside any section.
	u = parseUnitBytes("x.service", "/x.service", []byte("ExecStart=/bin/true\n[Service]\nExecStart=/bin/true\n"))
	if len(u.Problems) != 1 || u.Problems[0].Source.Line != 1 || !strings.Contains(u.Problems[0].Message, "outside") {
		t.Errorf("problems %v", u.Problems)
	}
}

func TestBadFiles(t *testing.T) {
	t.Run("directory where the unit should be", func(t *testing.T) {
		f := newFixture(t)
		f.mkdir("/etc/systemd/system/gitlab-runner.service")
		f.file("/usr/lib/systemd/system/gitlab-runner.service", "[Service]\nExecStart=/usr/bin/gitlab-runner run\n")
		u := f.load("gitlab-runner.service")
		if u.Path != "/usr/lib/systemd/system/gitlab-runner.service" || len(u.Problems) != 1 ||
			u.Problems[0].Source.Path != "/etc/systemd/system/gitlab-runner.service" || u.Problems[0].Fatal {
			t.Errorf("Path %q problems %v", u.Path, u.Problems)
		}
	})
	t.Run("only a directory", func(t *testing.T) {
		f := newFixture(t)
		f.mkdir("/etc/systemd/system/gitlab-runner.service")
		u := f.load("gitlab-runner.service")
		if u.Found() || len(u.Problems) != 1 {
			t.Errorf("Path %q problems %v", u.Path, u.Problems)
		}
	})
	t.Run("symlink to a directory", func(t *testing.T) {
		f := newFixture(t)
		f.mkdir("/opt/dir")
		f.link("/etc/systemd/system/gitlab-runner.service", "/opt/dir")
		u := f.load("gitlab-runner.service")
		if !hasFatal(u, "directory") {
			t.Errorf("problems %v", u.Problems)
		}
	})
	t.Run("fragment too large", func(t *testing.T) {
		f := newFixture(t)
		f.file("/etc/systemd/system/gitlab-runner.service", "[Service]\n#"+strings.Repeat("x", 10<<20))
		u := f.load("gitlab-runner.service")
		if !hasFatal(u, "larger than") {
			t.Errorf("problems %v", u.Problems)
		}
	})
	t.Run("bad drop-ins are not fatal", func(t *testing.T) {
		f := newFixture(t)
		f.file("/etc/systemd/system/gitlab-runner.service", "[Service]\nExecStart=/usr/bin/gitlab-runner run\n")
		f.mkdir("/etc/systemd/system/gitlab-runner.service.d/10-dir.conf")
		f.file("/etc/systemd/system/gitlab-runner.service.d/20-garbage.conf", "\xff\xfe\x00\x01")
		f.file("/etc/systemd/system/gitlab-runner.service.d/30-stop.conf", "[Service]\nUser=early\n[Service\nUser=late\n")
		f.file("/etc/systemd/system/gitlab-runner.service.d/40-exec.conf", "[Service]\nExecStart=\nExecStart=/bin/echo \"open\nUser=after\n")
		f.link("/etc/systemd/system/gitlab-runner.service.d/50-dangling.conf", "/nowhere.conf")
		u := f.load("gitlab-runner.service")
		for _, p := range u.Problems {
			if p.Fatal && !strings.Contains(p.Message, "no ExecStart=") {
				t.Errorf("drop-in problem must not be fatal: %v", p)
			}
		}
		want := map[string]int{"10-dir.conf": 0, "20-garbage.conf": 1, "30-stop.conf": 3, "40-exec.conf": 3, "50-dangling.conf": 0}
		for name, line := range want {
			found := false
			for _, p := range u.Problems {
				if strings.HasSuffix(p.Source.Path, name) && p.Source.Line == line {
					found = true
				}
			}
			if !found {
				t.Errorf("no problem for %s:%d in %v", name, line, u.Problems)
			}
		}
		// 30-stop.conf stopped at its bad header; 40-exec.conf at the bad
		// ExecStart=, after its reset: the unit is left without a command.
		if u.User != "early" || len(u.Commands) != 0 {
			t.Errorf("User %q Commands %+v", u.User, u.Commands)
		}
		if !hasFatal(u, "no ExecStart=") {
			t.Errorf("the service is left without ExecStart=: %v", u.Problems)
		}
	})
}
