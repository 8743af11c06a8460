package systemd

import (
	"strings"
	"testing"
)

// FuzzParseUnit parses arbitrary bytes as a unit fragment: it must never
// panic, and every Problem must name its file.
func FuzzParseUnit(f *testing.F) {
	f.Add([]byte(kardianosUnit))
	f.Add([]byte(systemctlEdit))
	f.Add([]byte("[Service]\nExecStart=@/bin/sh sh -c 'echo \"$X\" ${Y}' ; \\; \\\n# c\n  x\\x41 %n %% %z\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		u := parseUnitBytes("gitlab-runner@ci.service", "/etc/systemd/system/gitlab-runner@ci.service", data)
		for _, p := range u.Problems {
			if p.Source.Path == "" || p.Message == "" {
				t.Fatalf("problem without file or message: %+v", p)
			}
		}
		if (u.ExecStart != nil) != (len(u.Commands) > 0) {
			t.Fatalf("ExecStart %q with %d commands", u.ExecStart, len(u.Commands))
		}
		vars, origin := u.Environ()
		for k := range vars {
			if !envNameValid(k) || origin[k].Path == "" {
				t.Fatalf("bad variable %q from %v", k, origin[k])
			}
		}
		u.Flag("config", "c")
		u.ResolvedWorkingDirectory("/home/x")
	})
}

// FuzzEnvFile parses arbitrary bytes as an EnvironmentFile=.
func FuzzEnvFile(f *testing.F) {
	f.Add([]byte("# c\nA=1\nB=\"x\\\"y\"\nC='z'\nexport D=1\n"))
	f.Add([]byte("A=one\\\ntwo\r\nB=\"unterminated"))
	f.Fuzz(func(t *testing.T, data []byte) {
		vars, probs, err := ParseEnvFile("/etc/sysconfig/gitlab-runner", data)
		if err != nil && vars != nil {
			t.Fatal("a rejected file must yield no variables")
		}
		lines := strings.Count(string(data), "\n") + 1
		for _, a := range vars {
			if !envNameValid(a.Name) || a.Source.Line < 1 || a.Source.Line > lines {
				t.Fatalf("bad assignment %+v (%d lines)", a, lines)
			}
		}
		for _, p := range probs {
			if p.Source.Path == "" || p.Source.Line < 1 {
				t.Fatalf("problem without file and line: %+v", p)
			}
		}
	})
}
