package dockersocket

import (
	"strconv"
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/internal/testing/shellshape"
)

// hostileValues are what a host can put where a fix takes a value: every
// character that ends a word, a line, a quote, a heredoc, a document or a
// directive, and the ones a terminal hides (a copy of internal/fixcode's
// test list, which is in a test package and cannot be imported).
var hostileValues = []string{
	"plain", "", "two words", "new\nline", "x\n$(touch /tmp/pwned)", "`touch /tmp/pwned`",
	"a;b", "a&b", "a|b", "a&&b", "#comment", "a #b",
	"it's", `say "hi"`, `back\slash`, `trailing\`, "'", `"`, `\'`,
	"$HOME", "${HOME}", "$(id)", "$((1+1))",
	"EOF", "x\nEOF\ntouch /tmp/pwned", "EOF_1", "\nEOF",
	"---", "x\n---\napiVersion: v1\nkind: Namespace", "{a,b}", "[a]", "*", "?",
	"~", "~root", "!", "!!", "a!b", "^a^b",
	"-rf", "--config=/etc/shadow", "=x", "a=b", "if", "time",
	"tab\there", "cr\rhere", "esc\x1b[31mred", "del\x7f",
	"bidi\u202ereversed", "zero\u200bwidth", "bom\ufeff",
	"line\u2028sep", "non-utf8\xff\xfe", "emoji 🎉", "ünïcödé",
	"%i", "%%", "100%",
	"Environment=X=1\nExecStartPre=/bin/touch /tmp/pwned",
	"[Service]\nExecStart=/bin/sh",
	"name = \"v\"\n[runners]\nx = 1",
}

// withheld says whether step is the sentence that stands for a block an
// encoder or a rule refused.
func withheld(st checks.Step) bool {
	return st.Kind == checks.KindText && strings.HasPrefix(st.Text, "doctor prints no command here: ")
}

// wantShape fails unless got, a shell block built with v where benign was
// built with "plain", parses to the same statements, every word of benign
// with "plain" replaced by v: v arrived as data, whole, where "plain" did.
func wantShape(t *testing.T, v, benign, got string) {
	t.Helper()
	want, err := shellshape.Parse(benign)
	if err != nil {
		t.Fatalf("benign block does not parse: %v\n%s", err, benign)
	}
	g, err := shellshape.Parse(got)
	if err != nil {
		t.Errorf("%q: the block does not parse: %v\n%s", v, err, got)
		return
	}
	if len(g.Stmts) != len(want.Stmts) || len(g.Words) != len(want.Words) || len(g.Heredocs) != len(want.Heredocs) {
		t.Errorf("%q changed the structure:\n%s\nparsed as\n%s\nnot like\n%s", v, got, g, want)
		return
	}
	for i, w := range want.Words {
		with := v
		if strings.HasPrefix(w, "⟨$(") {
			// A command substitution's words are shown Go-quoted (and
			// each is also a word of its own, compared as it is).
			with = strings.TrimSuffix(strings.TrimPrefix(strconv.Quote(v), `"`), `"`)
		}
		if gw, ww := g.Words[i], strings.ReplaceAll(w, "plain", with); gw != ww {
			t.Errorf("%q: word %d is %q, want %q\n%s", v, i, gw, ww, got)
		}
	}
}
