package systemd

import (
	"errors"
	"io/fs"
	"reflect"
	"strings"
	"testing"
)

func TestParseEnvFile(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string // NAME=VALUE@line
		problems int
	}{
		{"plain", "A=1\nB=2\n", []string{"A=1@1", "B=2@2"}, 0},
		{"comments and blank lines", "# c\n; c\n\n   # indented\nA=1\n", []string{"A=1@5"}, 0},
		{"whitespace", "  A  =  x y  \t\n", []string{"A=x y@1"}, 0},
		{"double quotes keep whitespace", `A="  x  "`, []string{"A=  x  @1"}, 0},
		{"double-quote escapes", `A="a\"b\\c\$d\` + "`" + `e\nf"`, []string{"A=a\"b\\c$d`e\\nf@1"}, 0},
		{"single quotes are literal", `A='a\"b $x'`, []string{`A=a\"b $x@1`}, 0},
		{"unquoted backslash", `A=a\ b\\c\d`, []string{`A=a b\cd@1`}, 0},
		{"escaped trailing space survives", "A=a\\ \n", []string{"A=a @1"}, 0},
		{"continuation unquoted", "A=one\\\ntwo\nB=3", []string{"A=onetwo@1", "B=3@3"}, 0},
		{"continuation in double quotes", "A=\"one\\\ntwo\"", []string{"A=onetwo@1"}, 0},
		{"newline inside quotes", "A='one\ntwo'\nB=1", []string{"A=one\ntwo@1", "B=1@3"}, 0},
		{"quotes concatenate", `A="x"'y'z`, []string{"A=xyz@1"}, 0},
		{"quote inside unquoted value is literal", `A=x"y"`, []string{`A=x"y"@1`}, 0},
		{"empty values", "A=\nB=\"\"\n", []string{"A=@1", "B=@2"}, 0},
		{"no =: ignored", "JUSTAKEY\nA=1", []string{"A=1@2"}, 0},
		{"export is not a keyword", "export A=1\nB=2", []string{"B=2@2"}, 1},
		{"invalid names", "1A=x\nA-B=y\nOK_1=z", []string{"OK_1=z@3"}, 2},
		{"later wins stays in order", "A=1\nA=2", []string{"A=1@1", "A=2@2"}, 0},
		{"CRLF", "A=1\r\nB=2\r\n", []string{"A=1@1", "B=2@2"}, 0},
		{"comment ending in backslash does not continue (v254+)", "# c \\\nA=1", []string{"A=1@2"}, 0},
		{"unterminated quote runs to the end", "A=\"x\ny", []string{"A=x\ny@1"}, 0},
		{"value at EOF without newline", "A=1   ", []string{"A=1@1"}, 0},
		{"NUL ends the file", "A=1\x00\nB=2", []string{"A=1@1"}, 0},
		{"KUBECONFIG", "KUBECONFIG=/etc/gitlab-runner/kubeconfig\n", []string{"KUBECONFIG=/etc/gitlab-runner/kubeconfig@1"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vars, probs, err := ParseEnvFile("/etc/sysconfig/gitlab-runner", []byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, a := range vars {
				got = append(got, a.Name+"="+a.Value+"@"+itoa(a.Source.Line))
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
			if len(probs) != tt.problems {
				t.Errorf("problems %v, want %d", probs, tt.problems)
			}
			for _, p := range probs {
				if p.Source.Path != "/etc/sysconfig/gitlab-runner" || p.Source.Line == 0 {
					t.Errorf("problem without file and line: %v", p)
				}
			}
		})
	}
	if _, _, err := ParseEnvFile("/x", []byte("A=\xff\n")); !errors.Is(err, ErrEnvFileUTF8) {
		t.Errorf("invalid UTF-8: %v", err)
	}
}

func itoa(i int) string { return Source{Line: i}.String()[1:] }

func TestEnvironmentFiles(t *testing.T) {
	unit := "[Service]\n" +
		"ExecStart=/usr/bin/gitlab-runner run --config ${CONFIG}\n" +
		"Environment=A=unit B=unit CONFIG=/unit.toml\n" +
		"EnvironmentFile=-/etc/sysconfig/missing\n" +
		"EnvironmentFile=/etc/sysconfig/gitlab-runner\n" +
		"EnvironmentFile=-/etc/gitlab-runner/env.d/*.env\n"
	f := newFixture(t)
	f.file("/etc/systemd/system/gitlab-runner.service", unit)
	f.file("/etc/sysconfig/gitlab-runner", "# set by ops\nA=\"from file\"\nCONFIG=/etc/gitlab-runner/config.toml\n")
	f.file("/etc/gitlab-runner/env.d/20-b.env", "B=twenty\n")
	f.file("/etc/gitlab-runner/env.d/10-b.env", "B=ten\n")
	f.file("/etc/gitlab-runner/env.d/.hidden.env", "B=hidden\n")

	u := f.load("gitlab-runner.service")
	noProblems(t, u)
	vars, origin := u.Environ()
	if vars["A"] != "from file" || origin["A"].String() != "/etc/sysconfig/gitlab-runner:2" {
		t.Errorf("EnvironmentFile must override Environment=: A=%q from %v", vars["A"], origin["A"])
	}
	if vars["B"] != "twenty" || origin["B"].Path != "/etc/gitlab-runner/env.d/20-b.env" {
		t.Errorf("glob matches in order: B=%q from %v", vars["B"], origin["B"])
	}
	if ef := u.EnvironmentFiles[0]; ef.Err != nil || !ef.Optional || ef.Matches != nil {
		t.Errorf("optional missing file: %+v", ef)
	}
	if m := u.EnvironmentFiles[2].Matches; !reflect.DeepEqual(m, []string{"/etc/gitlab-runner/env.d/10-b.env", "/etc/gitlab-runner/env.d/20-b.env"}) {
		t.Errorf("glob matches %q", m)
	}
	// ExecStart is expanded with the file's value.
	if v, _ := u.Flag("config"); v != "/etc/gitlab-runner/config.toml" {
		t.Errorf("config = %q", v)
	}
	if len(u.Files) != 4 || u.Files[1].Path != "/etc/sysconfig/gitlab-runner" {
		t.Errorf("Files %+v", u.Files)
	}
}

func TestEnvironmentFileErrors(t *testing.T) {
	f := newFixture(t)
	f.file("/etc/systemd/system/gitlab-runner.service", "[Service]\n"+
		"ExecStart=/usr/bin/gitlab-runner run\n"+
		"EnvironmentFile=/etc/sysconfig/missing\n"+
		"EnvironmentFile=-/etc/sysconfig/adir\n"+
		"EnvironmentFile=relative/file\n"+
		"EnvironmentFile=/etc/../etc/x\n"+
		"EnvironmentFile=/etc/sysconfig/badutf8\n"+
		"EnvironmentFile=/etc/sysconfig/export\n")
	f.mkdir("/etc/sysconfig/adir")
	f.file("/etc/sysconfig/badutf8", "A=ok\nB=\xc3\x28\n")
	f.file("/etc/sysconfig/export", "export KUBECONFIG=/x\n")
	u := f.load("gitlab-runner.service")

	if n := len(u.EnvironmentFiles); n != 4 {
		t.Fatalf("relative and unnormalized paths must be dropped at parse time: %d files", n)
	}
	missing := u.EnvironmentFiles[0]
	if !errors.Is(missing.Err, fs.ErrNotExist) {
		t.Errorf("missing non-optional file: Err %v", missing.Err)
	}
	if dir := u.EnvironmentFiles[1]; dir.Err == nil || !strings.Contains(dir.Err.Error(), "directory") {
		t.Errorf("a directory: Err %v", dir.Err)
	}
	if bad := u.EnvironmentFiles[2]; !errors.Is(bad.Err, ErrEnvFileUTF8) || bad.Vars != nil {
		t.Errorf("invalid UTF-8 rejects the file: %+v", bad)
	}
	want := []struct {
		line  int
		path  string
		fatal bool
		msg   string
	}{
		{3, "/etc/systemd/system/gitlab-runner.service", true, "/etc/sysconfig/missing"},
		{4, "/etc/systemd/system/gitlab-runner.service", false, "directory"},
		{5, "/etc/systemd/system/gitlab-runner.service", false, "not absolute"},
		{6, "/etc/systemd/system/gitlab-runner.service", false, "not normalized"},
		{2, "/etc/sysconfig/badutf8", false, "UTF-8"},
		{7, "/etc/systemd/system/gitlab-runner.service", true, "UTF-8"},
		{1, "/etc/sysconfig/export", false, "export KUBECONFIG"},
	}
	for _, w := range want {
		found := false
		for _, p := range u.Problems {
			if p.Source.Line == w.line && p.Source.Path == w.path && p.Fatal == w.fatal && strings.Contains(p.Message, w.msg) {
				found = true
			}
		}
		if !found {
			t.Errorf("no problem %+v among\n%v", w, u.Problems)
		}
	}
	if vars, _ := u.Environ(); len(vars) != 0 {
		t.Errorf("nothing valid was set: %v", vars)
	}
}
