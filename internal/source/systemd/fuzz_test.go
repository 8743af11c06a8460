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

// FuzzParseShow reads arbitrary text as systemctl show's answer: it never
// panics, and a list it splits, written back as shell_maybe_quote writes
// it, splits to the same words.
func FuzzParseShow(f *testing.F) {
	f.Add(showOutput)
	f.Add("LoadState=loaded\nEnvironment=\"a\\\"b\" c\nExecStart={ path=/x ; argv[]=/x ; ignore_errors=no ; start_time=[n/a] }\n")
	f.Fuzz(func(t *testing.T, out string) {
		s, err := ParseShow(out)
		if err != nil {
			return
		}
		for _, kv := range s.Environment {
			if strings.ContainsRune(kv, 0) && !strings.ContainsRune(out, 0) {
				t.Fatalf("a NUL out of nowhere: %q", kv)
			}
		}
		back, err := SplitShowList(showQuoteList(s.UnsetEnvironment))
		if err != nil || strings.Join(back, "\x00") != strings.Join(s.UnsetEnvironment, "\x00") {
			t.Fatalf("%q written back reads %q (%v)", s.UnsetEnvironment, back, err)
		}
	})
}

// showQuoteList writes words as systemctl does (shell_maybe_quote, flags 0).
func showQuoteList(words []string) string {
	out := make([]string, len(words))
	for i, w := range words {
		bare := w != ""
		for _, c := range []byte(w) {
			if c <= ' ' || c >= 127 || strings.IndexByte("\"\\`$*?['()<>|&;!", c) >= 0 {
				bare = false
			}
		}
		if bare {
			out[i] = w
			continue
		}
		var b strings.Builder
		b.WriteByte('"')
		for _, c := range []byte(w) {
			switch {
			case c == '\n':
				b.WriteString(`\n`)
			case c == '\t':
				b.WriteString(`\t`)
			case strings.IndexByte("\"\\`$", c) >= 0:
				b.WriteByte('\\')
				b.WriteByte(c)
			default:
				b.WriteByte(c)
			}
		}
		b.WriteByte('"')
		out[i] = b.String()
	}
	return strings.Join(out, " ")
}
