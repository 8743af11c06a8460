// Package hostile holds the values an attacker puts where doctor takes a
// host's value and prints it in a fix: what every encoder test and every
// check's hostile-value test substitutes.
package hostile

import (
	"strings"
	"unicode/utf8"

	"github.com/socialwebcomputer/doctor/internal/redact"
)

// Values end a word, a line, a quote, a heredoc, a document, a table or a
// directive, hide from a terminal, read as an option, or are no name
// (an object's, a namespace's, a path's); one is empty, one holds a NUL,
// one is 254 bytes (one more than a DNS subdomain), one 10,000 bytes. A
// test that tries values tries these, plus any of its own domain.
var Values = []string{
	"plain",
	"",
	"two words",
	"new\nline",
	"x\n$(touch /tmp/pwned)",
	"`touch /tmp/pwned`", "`id`",
	"a;b", "a&b", "a|b", "a&&b", "a||b", "#comment", "#c", "a #b",
	"it's", `say "hi"`, `quote"d`, `back\slash`, `trailing\`, "'", `"`, "''", `\'`,
	"$HOME", "${HOME}", "$(id)", "$((1+1))",
	"EOF", "x\nEOF\ntouch /tmp/pwned", "EOF_1", "\nEOF",
	"---", "x\n---\napiVersion: v1\nkind: Namespace", "x\n---\napiVersion: v1", "x\n---\nkind: Namespace",
	"{", "}", "{a,b}", "[a]", "[x]", "]", "*", "?",
	"~", "~root", "a=~/x", "!", "!!", "a!b", "!-1", "^a^b", "x!$",
	"-rf", "--all", "--config=/etc/shadow", "--kubeconfig=/etc/shadow", "=x", "a=b", "a = b",
	"if", "then", "time", "!ls",
	"UPPER", "CSR-Upper", "a/b", "..", "dot.ted", "node-csr.x",
	"tab\there", "cr\rhere", "esc\x1b[31mred", "bel\a", "del\x7f", "a\x00b",
	"bidi\u202ereversed", "zero\u200bwidth", "joiner\u200d", "word\u2060joiner", "bom\ufeff", "soft\u00adhyphen",
	"line\u2028sep", "non-utf8\xff", "non-utf8\xff\xfe", "\xc3", "emoji 🎉", "ünïcödé",
	"%i", "%%", "100%", "a%b",
	"Environment=X=1\nExecStartPre=/bin/touch /tmp/pwned",
	"[Service]\nExecStart=/bin/sh",
	"name = \"v\"\n[runners]\nx = 1",
	"x\n[runners]\nexecutor = \"shell\"",
	"img\"\n[[runners]]\nname = \"evil\"",
	"arm64\"\n[[runners]]\nname = \"evil\"",
	"name: x\nsubjects: []",
	"name: x\nvalue: 1000000000",
	strings.Repeat("a", 254),
	strings.Repeat("long-", 2000) + "end",
}

// Shell are the Values the shell encoder carries: all but those holding a
// NUL and those that look like a secret, which every encoder refuses.
func Shell() []string {
	var out []string
	for _, v := range Values {
		if !strings.Contains(v, "\x00") && !redact.Secretlike(v) {
			out = append(out, v)
		}
	}
	return out
}

// UTF8 are the Values that are UTF-8 and free of control characters other
// than newline and tab, and that look like no secret: what every encoder
// can carry.
func UTF8() []string {
	var out []string
	for _, v := range Values {
		if !utf8.ValidString(v) || redact.Secretlike(v) {
			continue
		}
		ok := true
		for _, r := range v {
			if r < 0x20 && r != '\n' && r != '\t' || r == 0x7f {
				ok = false
			}
		}
		if ok {
			out = append(out, v)
		}
	}
	return out
}
