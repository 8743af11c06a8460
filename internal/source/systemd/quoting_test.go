package systemd

import (
	"reflect"
	"strings"
	"testing"
)

// parseService parses a [Service] section body as gitlab-runner.service.
func parseService(body string) *Unit {
	return parseUnitBytes("gitlab-runner.service", "/etc/systemd/system/gitlab-runner.service", []byte("[Service]\n"+body))
}

func TestExecStartWords(t *testing.T) {
	tests := []struct {
		name, body string
		want       []string // u.ExecStart
		path       string   // u.ExecStartPath, when it differs from want[0]
	}{
		{"kardianos quoting", `ExecStart=/usr/bin/gitlab-runner "run" "--config" "/etc/gitlab-runner/config.toml"`,
			[]string{"/usr/bin/gitlab-runner", "run", "--config", "/etc/gitlab-runner/config.toml"}, ""},
		{"double and single quotes", `ExecStart=/bin/echo "a b" 'c d' e`, []string{"/bin/echo", "a b", "c d", "e"}, ""},
		{"empty-string words", `ExecStart=/bin/echo "" '' x`, []string{"/bin/echo", "", "", "x"}, ""},
		{"quotes inside a word", `ExecStart=/bin/echo a"b c"d`, []string{"/bin/echo", "ab cd"}, ""},
		{"C escapes", `ExecStart=/bin/echo "t\tx" \x41 \101 \u00e9 a\sb`, []string{"/bin/echo", "t\tx", "A", "A", "é", "a b"}, ""},
		{"escaped quotes", `ExecStart=/bin/echo "say \"hi\"" 'it\'s'`, []string{"/bin/echo", `say "hi"`, "it's"}, ""},
		{"escaped backslash", `ExecStart=/bin/echo a\\b`, []string{"/bin/echo", `a\b`}, ""},
		{"unknown escape kept", `ExecStart=/bin/echo a\qb`, []string{"/bin/echo", `a\qb`}, ""},
		{"kardianos \\x20 in the path", `ExecStart=/opt/my\x20runner/gitlab-runner run`, []string{"/opt/my runner/gitlab-runner", "run"}, ""},
		{"specifiers", `ExecStart=/bin/echo 100%% %n %N %p %u`, []string{"/bin/echo", "100%", "gitlab-runner.service", "gitlab-runner", "gitlab-runner", "root"}, ""},
		{"prefix -", `ExecStart=-/bin/false x`, []string{"/bin/false", "x"}, ""},
		{"prefix @ sets argv0", `ExecStart=@/bin/sh mysh -c true`, []string{"mysh", "-c", "true"}, "/bin/sh"},
		{"prefixes !!", `ExecStart=!!/bin/true`, []string{"/bin/true"}, ""},
		{"prefixes -@:", `ExecStart=-@:/bin/true true ${X}`, []string{"true", "${X}"}, "/bin/true"},
		{"${VAR} one word, $VAR split", "Environment=\"FOO=a b\"\nExecStart=/bin/echo ${FOO} $FOO x${FOO}y",
			[]string{"/bin/echo", "a b", "a", "b", "xa by"}, ""},
		{"$VAR split respects quotes", "Environment=FOO=\"'a b' c\"\nExecStart=/bin/echo $FOO", []string{"/bin/echo", "a b", "c"}, ""},
		{"unset $VAR vanishes", `ExecStart=/bin/echo $NOPE ${NOPE}x`, []string{"/bin/echo", "x"}, ""},
		{"$$ is a dollar", `ExecStart=/bin/echo $$FOO`, []string{"/bin/echo", "$FOO"}, ""},
		{": disables expansion", "Environment=FOO=1\nExecStart=:/bin/echo ${FOO}", []string{"/bin/echo", "${FOO}"}, ""},
		{"${VAR:-x} is not expanded", "Environment=FOO=1\nExecStart=/bin/echo ${FOO:-x}", []string{"/bin/echo", "${FOO:-x}"}, ""},
		{"continuation", "ExecStart=/bin/echo a \\\n   b", []string{"/bin/echo", "a", "b"}, ""},
		{"comment inside a continuation", "ExecStart=/bin/echo a \\\n# not part of it\n; nor this\n  b", []string{"/bin/echo", "a", "b"}, ""},
		{"backslash-escaped backslash does not continue", "ExecStart=/bin/echo a\\\\\nUser=x", []string{"/bin/echo", `a\`}, ""},
		{"reset replaces", "ExecStart=/bin/a\nExecStart=\nExecStart=/bin/b x", []string{"/bin/b", "x"}, ""},
		{"literal semicolon", `ExecStart=/bin/echo \; x;y`, []string{"/bin/echo", ";", "x;y"}, ""},
		{"whitespace around =", "  ExecStart   =   /bin/echo  a  ", []string{"/bin/echo", "a"}, ""},
		{"bare executable name", `ExecStart=gitlab-runner run`, []string{"gitlab-runner", "run"}, ""},
		{"CRLF line ends", "ExecStart=/bin/echo a\r\nUser=x\r\n", []string{"/bin/echo", "a"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := parseService(tt.body)
			if !reflect.DeepEqual(u.ExecStart, tt.want) {
				t.Fatalf("ExecStart = %q, want %q (problems %v)", u.ExecStart, tt.want, u.Problems)
			}
			wantPath := tt.path
			if wantPath == "" {
				wantPath = tt.want[0]
			}
			if u.ExecStartPath != wantPath {
				t.Errorf("ExecStartPath = %q, want %q", u.ExecStartPath, wantPath)
			}
			for _, p := range u.Problems {
				if p.Fatal {
					t.Errorf("unexpected fatal problem %v", p)
				}
			}
		})
	}
}

func TestExecStartErrors(t *testing.T) {
	tests := []struct {
		name, body string
		fatal      bool   // the unit is refused
		msg        string // in some Problem
		commands   int
	}{
		{"unbalanced quote in an argument", `ExecStart=/bin/echo "open`, true, "unbalanced quoting", 0},
		{"unbalanced quote in the first word drops the line", `ExecStart="/bin/echo`, true, "no ExecStart=", 0},
		{"- makes a bad argument non-fatal", `ExecStart=-/bin/echo "open`, true, "ignored", 0},
		{"relative path with a slash", `ExecStart=bin/echo`, true, "neither a valid executable name", 0},
		{"directory path", `ExecStart=/bin/`, true, "specifies a directory", 0},
		{"unknown specifier", `ExecStart=/bin/echo %z`, true, "specifiers", 0},
		{"two commands in a simple service", "ExecStart=/bin/a\nExecStart=/bin/b", true, "more than one ExecStart=", 2},
		{"two commands on one line", `ExecStart=/bin/a ; /bin/b`, true, "more than one ExecStart=", 2},
		{"oneshot may have two", "Type=oneshot\nExecStart=/bin/a ; /bin/b", false, "", 2},
		{"no ExecStart", "User=x", true, "no ExecStart=", 0},
		{"host-specific specifier", `ExecStart=/bin/echo %H`, false, "%H depends on the live host", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := parseService(tt.body)
			fatal := false
			found := tt.msg == ""
			for _, p := range u.Problems {
				fatal = fatal || p.Fatal
				found = found || strings.Contains(p.Message, tt.msg)
				if p.Source.Path == "" {
					t.Errorf("problem without a file: %v", p)
				}
			}
			if fatal != tt.fatal || !found {
				t.Errorf("fatal=%v (want %v), message %q found=%v; problems %v", fatal, tt.fatal, tt.msg, found, u.Problems)
			}
			if len(u.Commands) != tt.commands {
				t.Errorf("%d commands, want %d: %+v", len(u.Commands), tt.commands, u.Commands)
			}
		})
	}
}

func TestEnvironmentWords(t *testing.T) {
	tests := []struct {
		name, body string
		want       []string // NAME=VALUE in order
		problems   int
	}{
		{"one word", `Environment=KUBECONFIG=/etc/gitlab-runner/kubeconfig`, []string{"KUBECONFIG=/etc/gitlab-runner/kubeconfig"}, 0},
		{"two words", `Environment=A=1 B=2`, []string{"A=1", "B=2"}, 0},
		{"quoted whole word keeps the space", `Environment="A=1 B=2"`, []string{"A=1 B=2"}, 0},
		{"quoted value", `Environment=A="x y" B='z'`, []string{"A=x y", "B=z"}, 0},
		{"systemd.exec(5) example", `Environment="VAR1=word1 word2" VAR2=word3 "VAR3=$word 5 6"`, []string{"VAR1=word1 word2", "VAR2=word3", "VAR3=$word 5 6"}, 0},
		{"escapes", `Environment=A=a\tb "B=\x41"`, []string{"A=a\tb", "B=A"}, 0},
		{"empty value", `Environment=A= B=""`, []string{"A=", "B="}, 0},
		{"later assignments are kept in order", "Environment=A=1\nEnvironment=A=2", []string{"A=1", "A=2"}, 0},
		{"reset", "Environment=A=1\nEnvironment=\nEnvironment=B=2", []string{"B=2"}, 0},
		{"invalid words are ignored", `Environment=NOEQ 1BAD=x GOOD=y =z`, []string{"GOOD=y"}, 3},
		{"specifiers", `Environment=UNIT=%n PCT=%%`, []string{"UNIT=gitlab-runner.service", "PCT=%"}, 0},
		{"syntax error keeps the words before it", `Environment=A=1 "B=2`, []string{"A=1"}, 1},
		{"continuation", "Environment=A=1 \\\n B=2", []string{"A=1", "B=2"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := parseService(tt.body + "\nExecStart=/bin/true")
			var got []string
			for _, a := range u.Environment {
				got = append(got, a.Name+"="+a.Value)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Environment = %q, want %q", got, tt.want)
			}
			if len(u.Problems) != tt.problems {
				t.Errorf("%d problems, want %d: %v", len(u.Problems), tt.problems, u.Problems)
			}
		})
	}
}

func TestExtractWordMatchesSystemd(t *testing.T) {
	// Cases from systemd's own src/test/test-extract-word.c expectations
	// for EXTRACT_UNQUOTE|EXTRACT_CUNESCAPE.
	tests := []struct {
		in, word, rest string
		err            bool
	}{
		{"foobar waldo", "foobar", "waldo", false},
		{"\"foobar\" \"waldo\"", "foobar", "\"waldo\"", false},
		{"'fooo bar' waldo", "fooo bar", "waldo", false},
		{"\"fooo bar", "", "", true},
		{"fooo\\", "", "", true},
		{"\"foo\\ba\\x6ar\"", "foo\bajr", "", false},
		{"  ", "", "", false},
	}
	for _, tt := range tests {
		w, rest, _, err := extractWord(tt.in, exUnquote|exCUnescape)
		if (err != nil) != tt.err || w != tt.word || rest != tt.rest {
			t.Errorf("extractWord(%q) = %q, %q, %v", tt.in, w, rest, err)
		}
	}
}
