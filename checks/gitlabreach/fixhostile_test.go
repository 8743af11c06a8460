package gitlabreach_test

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/BurntSushi/toml"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/client/gitlab/gitlabtest"
	"github.com/socialwebcomputer/doctor/internal/testing/testroot"
)

// fixValues are what a config.toml can put into a url: every character
// that ends a word, a line, a quote or a heredoc, and the ones a terminal
// hides.
var fixValues = []string{
	"plain", "two words", "new\nline", "x\n$(touch /tmp/pwned)", "`touch /tmp/pwned`", "a;b", "a|b", "#c",
	"it's", `say "hi"`, `back\slash`, "$HOME", "$(id)", "EOF", "x\nEOF\ntouch /tmp/pwned", "---",
	"!!", "-rf", "tab\there", "esc\x1b[31mred", "bidi\u202ereversed", "zero\u200bwidth", "%i",
	"Environment=X=1\nExecStartPre=/bin/touch /tmp/pwned",
}

// A url no client is built for is a finding whose fix is sentences and
// the restart of the default unit: the url, whatever it holds, reaches no
// block.
func TestHostileURLReachesNoBlock(t *testing.T) {
	w := newWorld(t, gitlabtest.Options{})
	for _, v := range fixValues {
		if !utf8.ValidString(v) {
			continue
		}
		url := "ftp://gitlab.example.invalid/" + v
		var b bytes.Buffer
		if err := toml.NewEncoder(&b).Encode(map[string]any{"runners": []map[string]any{
			{"name": "hostile", "url": url, "token": "glrt-test-token-0123456789", "executor": "kubernetes"}}}); err != nil {
			t.Fatal(err)
		}
		root := testroot.New(t)
		root.Runner(4242, 0, map[string]string{"PATH": "/usr/bin:/bin"})
		root.Write("/etc/gitlab-runner/config.toml", b.String(), 0o600)
		r := reach(t, root, w.settings())
		if len(r.Findings) != 1 {
			t.Errorf("%q: %d findings:\n%s", v, len(r.Findings), text(r))
			continue
		}
		blocks := r.Findings[0].Fix.Blocks()
		if len(blocks) != 1 || blocks[0] != (checks.Step{Kind: checks.KindShell, Text: "sudo systemctl restart gitlab-runner.service"}) {
			t.Errorf("%q: blocks %q", v, blocks)
		}
		if v != "plain" && strings.Contains(blocks.String(), v) {
			t.Errorf("%q: the url in a block", v)
		}
	}
}
