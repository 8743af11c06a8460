//go:build oracle

package systemd

// Temporary differential test against the host's systemd-analyze verify.

import (
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

type sdResult struct {
	loaded   bool
	env      []string
	user     string
	group    string
	envFiles []string
	cmds     [][]string
	warnings []string
}

func runOracle(t *testing.T, root, body string) sdResult {
	p := filepath.Join(root, "etc/systemd/system/x.service")
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("systemd-analyze", "verify", "--root="+root, "--man=no", "x.service")
	cmd.Env = append(os.Environ(), "SYSTEMD_LOG_LEVEL=debug")
	cmd.Dir = "/tmp"
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Run()
	var r sdResult
	for _, l := range strings.Split(stderr.String(), "\n") {
		if strings.HasPrefix(l, p+":") {
			r.warnings = append(r.warnings, strings.TrimPrefix(l, p+":"))
		}
	}
	inUnit := false
	for _, l := range strings.Split(stdout.String(), "\n") {
		if strings.Contains(l, "-> Unit x.service:") {
			inUnit, r.loaded = true, true
			continue
		}
		if !inUnit {
			continue
		}
		if !strings.HasPrefix(l, "\t") {
			inUnit = false
			continue
		}
		t := strings.TrimLeft(l, "\t")
		switch {
		case strings.HasPrefix(t, "Environment: "):
			r.env = append(r.env, strings.TrimPrefix(t, "Environment: "))
		case strings.HasPrefix(t, "EnvironmentFile: "):
			r.envFiles = append(r.envFiles, strings.TrimPrefix(t, "EnvironmentFile: "))
		case strings.HasPrefix(t, "User: "):
			r.user = strings.TrimPrefix(t, "User: ")
		case strings.HasPrefix(t, "Group: "):
			r.group = strings.TrimPrefix(t, "Group: ")
		case strings.HasPrefix(t, "Command Line: "):
			r.cmds = append(r.cmds, decodeCmdline(strings.TrimPrefix(t, "Command Line: ")))
		}
	}
	return r
}

// decodeCmdline undoes quote_command_line(): words, some double-quoted with
// \" \\ \$ \` and C escapes.
func decodeCmdline(s string) []string {
	var out []string
	for {
		s = strings.TrimLeft(s, " ")
		if s == "" {
			return out
		}
		var b strings.Builder
		if s[0] == '"' {
			i := 1
			for i < len(s) && s[i] != '"' {
				if s[i] == '\\' && i+1 < len(s) {
					c := s[i+1]
					if strings.IndexByte("\"\\$`", c) >= 0 {
						b.WriteByte(c)
						i += 2
						continue
					}
					if o, n, ok := cunescapeOne(s[i+1:]); ok {
						b.Write(o)
						i += 1 + n
						continue
					}
				}
				b.WriteByte(s[i])
				i++
			}
			s = s[i+1:]
		} else {
			i := strings.IndexByte(s, ' ')
			if i < 0 {
				i = len(s)
			}
			b.WriteString(s[:i])
			s = s[i:]
		}
		out = append(out, b.String())
	}
}

var tokens = []string{
	"/bin/echo", "/bin/echo", "a", "b c", `"q w"`, `'s q'`, `""`, `''`, `\x41`, `\t`, `\\`, `\"`, `\'`, `\s`,
	`\q`, `\u00e9`, `\101`, `%%`, `%n`, `%i`, `%p`, `;`, `\;`, `$FOO`, `${FOO}`, `a"b c"d`, `"unterminated`,
	`x;y`, " \\\n ", " \\\n# comment\n ", "-", "@", ":", "+", "!", "!!", "=", "A=1", "B=\"x y\"", "%z",
	"/", "rel/x", "name", "\\", "'", "\"", "\t", "  ",
	`\U0001F600`, `\U0000D800`, `\uD800`, `\x00`, `\000`, `\777`, `%`, `%-`, `$`, `${`, `${A:-b}`, `"\;"`, `\\;`, `;x`, `'\''`,
	`"a\"b"`, `\"`, `\x4`, `\u00`, `%I`, `%f`, `%j`, `%P`, `%U`, `%g`, `%G`, `%C%S%L%E%t%T%V`,
}

func randomValue(r *rand.Rand) string {
	n := 1 + r.Intn(6)
	var b strings.Builder
	for i := 0; i < n; i++ {
		tok := tokens[r.Intn(len(tokens))]
		b.WriteString(tok)
		if r.Intn(3) > 0 {
			b.WriteByte(' ')
		}
	}
	return b.String()
}

func TestOracle(t *testing.T) {
	if _, err := exec.LookPath("systemd-analyze"); err != nil {
		t.Skip("no systemd-analyze")
	}
	r := rand.New(rand.NewSource(1))
	envTokens := []string{"A=1", "B=x", `"C=a b"`, `D="q w"`, `E='s'`, `F=\x41`, `G=\t`, "H=", "=x", "NOEQ", "1X=2",
		`I=%%`, `J=%n`, `K=%z`, `"L=unterminated`, `M=a\ b`, `N=\q`, `O=$P`, `Q=${R}`, "A=2", " \\\n ", `S=\u00e9`}
	var cases []string
	for i := 0; i < 1500; i++ {
		var b strings.Builder
		b.WriteString("[Service]\n")
		for j := 0; j < 1+r.Intn(3); j++ {
			prefix := []string{"", "", "", "-", "@", ":", "+", "!!", "-@", "+!", "!!!", "--", "@@", "!-!", ":-+"}[r.Intn(15)]
			fmt.Fprintf(&b, "ExecStart=%s/bin/echo %s\n", prefix, randomValue(r))
			if r.Intn(5) == 0 {
				b.WriteString("ExecStart=\n")
			}
		}
		if r.Intn(3) == 0 {
			b.WriteString("Type=oneshot\n")
		}
		cases = append(cases, b.String())
	}
	for i := 0; i < 1500; i++ {
		var b strings.Builder
		b.WriteString("[Service]\nExecStart=/bin/true\n")
		for j := 0; j < 1+r.Intn(3); j++ {
			switch r.Intn(6) {
			case 0, 1, 2:
				var w strings.Builder
				for k := 0; k < 1+r.Intn(4); k++ {
					w.WriteString(envTokens[r.Intn(len(envTokens))])
					w.WriteByte(' ')
				}
				fmt.Fprintf(&b, "Environment=%s\n", w.String())
			case 3:
				b.WriteString("Environment=\n")
			case 4:
				fmt.Fprintf(&b, "User=%s\n", []string{"gitlab-runner", "%i", "a:b", "1000", "65535", "x ", "-1", "%n", "ci@x", "", "4294967295", "0", "..", "a/b", "%z"}[r.Intn(15)])
			case 5:
				fmt.Fprintf(&b, "EnvironmentFile=%s\n", []string{"-/etc/x", "/etc/%n", "rel", "/etc/../x", "/etc//./y/", "-", "", "-%z", "/etc/%m%%"}[r.Intn(9)])
			}
		}
		cases = append(cases, b.String())
	}
	lineToks := []string{"[Service]", "[Unit]", "[Install]", "[X-Foo]", "[Bogus]", "[Service", "[Se\"rvice]", "# c", "; c", "  # c",
		"ExecStart=/bin/echo a", "ExecStart=/bin/echo b \\", "Environment=A=1 \\", "Environment=B=2", "User=u", "User=v \\",
		"", "   ", "NoEq", "=x", "ExecStart =  /bin/echo  c  ", "\xef\xbb\xbfUser=bom", "User=\xc3\x28", "Environment=C=\x00D",
		"Type=oneshot", "Type=bad", "\r", "Description=x", "Environment=E=\\\\"}
	for i := 0; i < 1500; i++ {
		var b strings.Builder
		for j := 0; j < 2+r.Intn(8); j++ {
			b.WriteString(lineToks[r.Intn(len(lineToks))])
			b.WriteString([]string{"\n", "\n", "\n", "\r\n", "\r", "\x00"}[r.Intn(6)])
		}
		cases = append(cases, b.String())
	}
	root := t.TempDir()
	mismatches := 0
	stats := map[string]int{}
	for _, c := range cases {
		sd := runOracle(t, root, c)
		u := parseUnitBytes("x.service", "/etc/systemd/system/x.service", []byte(c))
		fatal := false
		for _, p := range u.Problems {
			fatal = fatal || p.Fatal
		}
		var mine sdResult
		mine.loaded = !fatal
		// systemd's list: first position, last value.
		idx := map[string]int{}
		for _, a := range u.Environment {
			if i, ok := idx[a.Name]; ok {
				mine.env[i] = a.Name + "=" + a.Value
				continue
			}
			idx[a.Name] = len(mine.env)
			mine.env = append(mine.env, a.Name+"="+a.Value)
		}
		mine.user = u.User
		for _, f := range u.EnvironmentFiles {
			p := f.Path
			if f.Optional {
				p = "-" + p
			}
			mine.envFiles = append(mine.envFiles, p)
		}
		for _, cmd := range u.Commands {
			mine.cmds = append(mine.cmds, cmd.Argv)
		}
		if sd.loaded {
			stats["loaded"]++
		}
		if len(sd.cmds) > 0 {
			stats["cmds"]++
		}
		if len(sd.env) > 0 {
			stats["env"]++
		}
		if sd.user != "" {
			stats["user"]++
		}
		if len(sd.envFiles) > 0 {
			stats["envfiles"]++
		}
		if len(sd.warnings) > 0 {
			stats["warned"]++
		}
		bad := mine.loaded != sd.loaded
		if sd.loaded && !bad {
			bad = !reflect.DeepEqual(mine.env, sd.env) || mine.user != sd.user ||
				!reflect.DeepEqual(mine.envFiles, sd.envFiles) || !reflect.DeepEqual(mine.cmds, sd.cmds)
		}
		sdLines := map[string]bool{}
		for _, w := range sd.warnings {
			sdLines[strings.SplitN(w, ":", 2)[0]] = true
		}
		myLines := map[string]bool{}
		for _, p := range u.Problems {
			if p.Source.Line > 0 && !strings.Contains(p.Message, "live host") && !strings.Contains(p.Message, "expands to nothing") && !strings.Contains(p.Message, "empty argument list") && !strings.Contains(p.Message, "more than one ExecStart") {
				myLines[fmt.Sprint(p.Source.Line)] = true
			}
		}
		if strings.Contains(c, "\\\n") || strings.Contains(c, "\\\r") || strings.Contains(c, "\\\x00") {
			sdLines, myLines = nil, nil // continuation: systemd names the last line
		}
		if !reflect.DeepEqual(sdLines, myLines) {
			stats["warnlines-differ"]++
			if stats["warnlines-differ"] <= 8 {
				t.Logf("warning lines differ:\n%s\nsystemd: %q\nmine: %v", c, sd.warnings, u.Problems)
			}
		}
		if strings.Contains(c, "%m") {
			bad = false
		}
		if bad {
			mismatches++
			if mismatches <= 15 {
				t.Errorf("case:\n%s\nsystemd: %+v\nmine:    %+v\nproblems: %v", c, sd, mine, u.Problems)
			}
		}
	}
	t.Logf("%d cases, %d mismatches, %v", len(cases), mismatches, stats)
}

func TestOracleDiscovery(t *testing.T) {
	type scen struct {
		name  string
		setup func(f *fixture)
		unit  string
	}
	base := func(f *fixture) {
		f.file("/usr/lib/systemd/system/gitlab-runner.service", "[Service]\nExecStart=/usr/bin/gitlab-runner run\n")
	}
	scens := []scen{
		{"plain", base, "gitlab-runner.service"},
		{"etc wins", func(f *fixture) { base(f); f.file("/etc/systemd/system/gitlab-runner.service", "[Service]\nExecStart=/etc/x\n") }, "gitlab-runner.service"},
		{"mask link", func(f *fixture) { base(f); f.link("/etc/systemd/system/gitlab-runner.service", "/dev/null") }, "gitlab-runner.service"},
		{"mask empty", func(f *fixture) { base(f); f.file("/etc/systemd/system/gitlab-runner.service", "") }, "gitlab-runner.service"},
		{"dir in place", func(f *fixture) { base(f); f.mkdir("/etc/systemd/system/gitlab-runner.service") }, "gitlab-runner.service"},
		{"linked", func(f *fixture) {
			f.file("/opt/r/gitlab-runner.service", "[Service]\nExecStart=/opt/x\n")
			f.link("/etc/systemd/system/gitlab-runner.service", "/opt/r/gitlab-runner.service")
		}, "gitlab-runner.service"},
		{"self link", func(f *fixture) { base(f); f.link("/etc/systemd/system/gitlab-runner.service", "/usr/lib/systemd/system/gitlab-runner.service") }, "gitlab-runner.service"},
		{"alias", func(f *fixture) {
			base(f)
			f.link("/etc/systemd/system/gitlab-ci-multi-runner.service", "/usr/lib/systemd/system/gitlab-runner.service")
			f.file("/etc/systemd/system/gitlab-ci-multi-runner.service.d/a.conf", "[Service]\nUser=a\n")
			f.file("/etc/systemd/system/gitlab-runner.service.d/b.conf", "[Service]\nUser=b\n")
		}, "gitlab-ci-multi-runner.service"},
		{"alias reverse", func(f *fixture) {
			base(f)
			f.link("/etc/systemd/system/gitlab-ci-multi-runner.service", "gitlab-runner.service")
			f.file("/etc/systemd/system/gitlab-ci-multi-runner.service.d/a.conf", "[Service]\nUser=a\n")
		}, "gitlab-runner.service"},
		{"merged usr", func(f *fixture) {
			f.link("/lib", "usr/lib")
			base(f)
			f.file("/lib/systemd/system/gitlab-runner.service.d/a.conf", "[Service]\nUser=a\n")
		}, "gitlab-runner.service"},
		{"prefix and type dropins, hidden, collisions", func(f *fixture) {
			base(f)
			f.file("/etc/systemd/system/gitlab-.service.d/10.conf", "[Service]\nUser=p\n")
			f.file("/usr/lib/systemd/system/gitlab-runner.service.d/10.conf", "[Service]\nUser=n\n")
			f.file("/etc/systemd/system/service.d/20.conf", "[Service]\nUser=t\n")
			f.file("/run/systemd/system/gitlab-runner.service.d/.30.conf", "[Service]\nUser=h\n")
			f.file("/run/systemd/system/gitlab-runner.service.d/40.conf.bak", "[Service]\nUser=h\n")
			f.file("/run/systemd/system/gitlab-runner.service.d/50.conf~", "[Service]\nUser=h\n")
			f.link("/run/systemd/system/gitlab-runner.service.d/60.conf", "/dev/null")
			f.mkdir("/run/systemd/system/gitlab-runner.service.d/70.conf")
		}, "gitlab-runner.service"},
		{"template instance", func(f *fixture) {
			f.file("/usr/lib/systemd/system/gitlab-runner@.service", "[Service]\nExecStart=/x %i\n")
			f.file("/etc/systemd/system/gitlab-runner@.service.d/1.conf", "[Service]\nUser=a\n")
			f.file("/etc/systemd/system/gitlab-runner@ci.service.d/2.conf", "[Service]\nUser=b\n")
			f.file("/etc/systemd/system/gitlab-.service.d/3.conf", "[Service]\nUser=c\n")
			f.file("/etc/systemd/system/gitlab-@ci.service.d/4.conf", "[Service]\nUser=c\n")
			f.file("/etc/systemd/system/gitlab-@.service.d/5.conf", "[Service]\nUser=c\n")
		}, "gitlab-runner@ci.service"},
		{"dangling alias", func(f *fixture) { f.link("/etc/systemd/system/gitlab-runner.service", "gone.service") }, "gitlab-runner.service"},
	}
	for _, sc := range scens {
		t.Run(sc.name, func(t *testing.T) {
			f := newFixture(t)
			sc.setup(f)
			cmd := exec.Command("systemd-analyze", "verify", "--root="+f.dir, "--man=no", sc.unit)
			cmd.Env = append(os.Environ(), "SYSTEMD_LOG_LEVEL=debug")
			cmd.Dir = "/tmp"
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			cmd.Run()
			var frag string
			var dropins []string
			state := ""
			in := false
			for _, l := range strings.Split(stdout.String(), "\n") {
				if strings.Contains(l, "-> Unit ") {
					in = strings.Contains(l, "-> Unit "+sc.unit+":") || in && false
					if !in {
						// an alias dump names the unit by its id
						in = frag == ""
					}
					continue
				}
				tl := strings.TrimLeft(l, "\t")
				if !in {
					continue
				}
				switch {
				case strings.HasPrefix(tl, "Fragment Path: "):
					if frag == "" {
						frag = strings.TrimPrefix(strings.TrimPrefix(tl, "Fragment Path: "), f.dir)
					}
				case strings.HasPrefix(tl, "DropIn Path: "):
					dropins = append(dropins, strings.TrimPrefix(strings.TrimPrefix(tl, "DropIn Path: "), f.dir))
				case strings.HasPrefix(tl, "Unit Load State: "):
					if state == "" {
						state = strings.TrimPrefix(tl, "Unit Load State: ")
					}
				}
			}
			u, _ := Load(f.env(), sc.unit)
			t.Logf("systemd: state=%q frag=%q dropins=%q\nstderr: %s", state, frag, dropins, firstLines(stderr.String(), sc.unit))
			t.Logf("mine:    masked=%v frag=%q dropins=%q aliases=%q problems=%v", u.Masked, u.Path, u.DropIns, u.Aliases, u.Problems)
			if state == "loaded" && (frag != u.Path || !reflect.DeepEqual(dropins, u.DropIns) && !(len(dropins) == 0 && len(u.DropIns) == 0)) {
				t.Errorf("differ")
			}
			if state == "masked" && !u.Masked {
				t.Errorf("masked differs")
			}
		})
	}
}

func firstLines(s, unit string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, unit) || strings.Contains(l, "alias") || strings.Contains(l, "symlink") || strings.Contains(l, "mask") {
			out = append(out, l)
		}
	}
	if len(out) > 12 {
		out = out[:12]
	}
	return strings.Join(out, "\n")
}
