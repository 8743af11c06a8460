package configfacts

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/BurntSushi/toml"

	"github.com/socialwebcomputer/doctor/internal/redact"
)

// Evidence never quotes a config line: values that can be secrets are
// described, and what no secret looks like stays readable. Every secret
// below is one redact.Text alone lets through (its key does not say secret).
func TestLineTextDescribesInsteadOfQuoting(t *testing.T) {
	for _, tc := range []struct{ line, secret, want string }{
		{`output_limit = 'TypeErr4Wq8Zm2Lx6Tn9'`, "TypeErr4Wq8Zm2Lx6Tn9", "output_limit = <string, 20 characters, looks secret>"},
		{`name = "hunter2 is my password"`, "hunter2", "name = <string, 22 characters>"},
		{`pre_build_script = "curl -H 'PRIVATE-TOKEN: 9f8e7d6c5b4a' https://x.invalid"`, "9f8e7d6c5b4a", "pre_build_script = <string, 55 characters>"},
		{`url = "https://deploy:pw9Q2zLm@gitlab.example.invalid/"`, "pw9Q2zLm", `url = "https://gitlab.example.invalid/ (userinfo removed)"`},
		{`url = "https://gitlab.example.invalid/?private_token=abc123"`, "abc123", `url = "https://gitlab.example.invalid/ (query removed)"`},
		{`host = 'https://hostuser:HostPw6Zq2Lm9Tx4Wb7K@127.0.0.1:1'`, "hostuser", `host = "https://127.0.0.1:1 (userinfo removed)"`},
		{`environment = ["DATABASE_URL=postgres://app:pgJb5Qw8@db.invalid/app", "LANG=C"]`, "pgJb5Qw8", `environment = ["DATABASE_URL=postgres://db.invalid/app (userinfo removed)", "LANG=C"]`},
		{`environment = ["AWS_SECRET_ACCESS_KEY=abcdefghijkl"]`, "abcdefghijkl", `environment = ["AWS_SECRET_ACCESS_KEY=<string, 12 characters, looks secret>"]`},
		{`webhook = { url = "https://h:WbhkPw9@chat.invalid/x", retries = 3 }`, "WbhkPw9", `webhook = {retries = 3, url = "https://chat.invalid/x (userinfo removed)"}`},
		{`token = "glrt-Tk4Qm8Zp2Xw6Lc9Vb3Nh7" # glrt-Tk4Qm8Zp2Xw6Lc9Vb3Nh7`, "Tk4Qm8Zp2Xw6", "token = <string, 26 characters, looks secret>"},
		{`# the old password was Pw7Qz2Lm9Tx4`, "Pw7Qz2Lm9Tx4", "<a comment, 35 characters>"},
		{`secret_value = BareVal8Qz2Lm5Tx9Wk3`, "BareVal8Qz2Lm5Tx9Wk3", "secret_value = <20 characters that do not parse as a TOML value>"},
		{`glrt-Tk4Qm8Zp2Xw6Lc9Vb3Nh7`, "Tk4Qm8Zp2Xw6", "<26 characters that are no TOML key = value>"},
		// What is no secret stays as it is.
		{`idle_count = 1`, "", "idle_count = 1"},
		{`output_limit = = 51200`, "", "output_limit = = 51200"},
		{`use_external_addr = false # why not`, "", "use_external_addr = false"},
		{`cert_file = "/etc/gitlab-runner/tenant-ci/client.crt"`, "", `cert_file = "/etc/gitlab-runner/tenant-ci/client.crt"`},
		{`  [[runners]] # a comment`, "", "[[runners]]"},
		{`plugin = "dvp:1"`, "", `plugin = "dvp:1"`},
		{`Periods = ["* * 9-17 * * mon-fri *"]`, "", `Periods = ["* * 9-17 * * mon-fri *"]`},
		{`helper_image = "registry.gitlab.com/gitlab-org/gitlab-runner/gitlab-runner-helper:x86_64-v17.0.0"`, "", `helper_image = "registry.gitlab.com/gitlab-org/gitlab-runner/gitlab-runner-helper:x86_64-v17.0.0"`},
		{`key_path = "/ssh/id_ed25519"`, "", `key_path = "/ssh/id_ed25519"`},
	} {
		c := &ConfigFile{Data: []byte("concurrent = 1\n" + tc.line + "\n")}
		got := c.LineText(2)
		if tc.secret != "" && strings.Contains(got, tc.secret) {
			t.Errorf("LineText(%q) = %q: it quotes %q", tc.line, got, tc.secret)
		}
		if got != tc.want {
			t.Errorf("LineText(%q)\n got %q\nwant %q", tc.line, got, tc.want)
		}
	}
}

// A value that runs on over several lines is decoded whole, not taken for
// one that does not parse.
func TestLineTextDecodesMultiLineValues(t *testing.T) {
	c := &ConfigFile{Data: []byte("environment = [\n  \"AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMIK7MDENG\",\n  \"LANG=C\",\n]\n")}
	if got, want := c.LineText(1), `environment = ["AWS_SECRET_ACCESS_KEY=<string, 20 characters, looks secret>", "LANG=C"]`; got != want {
		t.Errorf("LineText = %q, want %q", got, want)
	}
}

// A decode error's text does not quote the value it choked on, and its
// position is still there for the evidence line.
func TestDecodeErrorQuotesNoValue(t *testing.T) {
	for _, tc := range []struct{ doc, secret, want string }{
		{"[[runners]]\n  secret_value = BareVal8Qz2Lm5Tx9Wk3\n", "BareVal8Qz2Lm5Tx9Wk3", "expected value but found \"<"},
		{"[[runners]]\n  output_limit = = 51200\n", "", "expected value but found '=' instead"},
		{"[[runners]]\n  [runners.kubernetes]\n  poll_interval = 1.5e\n", "1.5e", "Invalid float value: \"<4 characters>\""},
	} {
		c := &ConfigFile{Data: []byte(tc.doc)}
		_, _, err := decode(c.Data, nil)
		if err == nil {
			t.Fatalf("%q decodes", tc.doc)
		}
		wrapped := redact.QuotesDescribed(err)
		msg := wrapped.Error()
		if tc.secret != "" && strings.Contains(msg, tc.secret) {
			t.Errorf("the decode error quotes %q: %s", tc.secret, msg)
		}
		if !strings.Contains(msg, tc.want) {
			t.Errorf("the decode error %q does not say %q", msg, tc.want)
		}
		var pe toml.ParseError
		if !errors.As(wrapped, &pe) || pe.Position.Line != 2 && pe.Position.Line != 3 {
			t.Errorf("the toml.ParseError and its line are lost under %q", msg)
		}
	}
}

// FuzzLineText: any line, and any value under an innocent key, gives a
// bounded description without panicking; a string value that is not shown
// as a path, word or URL never appears in it.
func FuzzLineText(f *testing.F) {
	f.Add("output_limit = = 51200", "TypeErr4Wq8Zm2Lx6Tn9")
	f.Add("environment = [\"A=1\",", "curl -H 'PRIVATE-TOKEN: x'")
	f.Add("[[runners]] # c", "https://u:p@h.invalid/?q=1")
	f.Fuzz(func(t *testing.T, line, value string) {
		c := &ConfigFile{Data: []byte(line + "\nnotes = " + strconv.Quote(value) + "\n" + line)}
		for n := 1; n <= strings.Count(string(c.Data), "\n")+1; n++ {
			if got := c.LineText(n); utf8.RuneCountInString(got) > 201 {
				t.Fatalf("LineText(%d) is %d runes", n, utf8.RuneCountInString(got))
			}
		}
		got := c.LineText(strings.Count(line, "\n") + 2)
		if len(value) >= 12 && redact.LooksSecret(value) && strings.Contains(got, value) {
			t.Fatalf("LineText quotes a secret-looking value: %q", got)
		}
		if len(value) >= 12 && strings.ContainsAny(value, "\"'\\$;|&") && !strings.Contains(value, "://") && strings.Contains(got, value) {
			t.Fatalf("LineText quotes a value that is no path, word or URL: %q", got)
		}
	})
}
