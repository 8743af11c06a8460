// Package hostile holds the values an attacker puts where doctor takes a
// host's value and prints it in a fix: what every encoder test and every
// check's hostile-value test substitutes.
package hostile

import (
	"strings"
	"unicode/utf8"
)

// Values end a word, a line, a quote, a heredoc, a document or a
// directive, or hide from a terminal; one is empty, one 10,000 bytes.
var Values = []string{
	"plain",
	"",
	"two words",
	"new\nline",
	"x\n$(touch /tmp/pwned)",
	"`touch /tmp/pwned`",
	"a;b", "a&b", "a|b", "a&&b", "a||b", "#comment", "a #b",
	"it's", `say "hi"`, `back\slash`, `trailing\`, "'", `"`, "''", `\'`,
	"$HOME", "${HOME}", "$(id)", "$((1+1))",
	"EOF", "x\nEOF\ntouch /tmp/pwned", "EOF_1", "\nEOF",
	"---", "x\n---\napiVersion: v1\nkind: Namespace", "{", "}", "{a,b}", "[a]", "*", "?",
	"~", "~root", "a=~/x", "!", "!!", "a!b", "!-1", "^a^b", "x!$",
	"-rf", "--config=/etc/shadow", "=x", "a=b",
	"if", "then", "time", "!ls",
	"tab\there", "cr\rhere", "esc\x1b[31mred", "bel\a", "del\x7f",
	"bidi\u202ereversed", "zero\u200bwidth", "joiner\u200d", "word\u2060joiner", "bom\ufeff", "soft\u00adhyphen",
	"line\u2028sep", "non-utf8\xff\xfe", "\xc3", "emoji 🎉", "ünïcödé",
	"%i", "%%", "100%", "a%b",
	"Environment=X=1\nExecStartPre=/bin/touch /tmp/pwned",
	"[Service]\nExecStart=/bin/sh",
	"name = \"v\"\n[runners]\nx = 1",
	strings.Repeat("long-", 2000) + "end",
}

// UTF8 are the Values that are UTF-8 and free of control characters other
// than newline and tab: what every encoder can carry.
func UTF8() []string {
	var out []string
	for _, v := range Values {
		if !utf8.ValidString(v) {
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
