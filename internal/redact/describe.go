package redact

import (
	"fmt"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/socialwebcomputer/doctor/internal/text/lazyre"
)

// Evidence describes a value it did not make: a config line's value is
// shown only when it cannot be a secret (a number, a boolean, a path, a
// word, a URL without its userinfo), and is otherwise described by its
// type, its length and whether it looks like a secret. That is redaction
// by construction; Text stays the net under it.

// DescribeString is a string value as evidence shows it, key being the
// name it is set under (a key, or an environment variable): quoted when it
// is plainly no secret, else a description, <string, 22 characters, looks
// secret>. "NAME=value" inside a value describes the value under NAME.
func DescribeString(key, s string) string {
	if name, v, ok := strings.Cut(s, "="); ok && optionName().MatchString(name) && !LooksSecret(name) && v != "" {
		return `"` + name + "=" + strings.Trim(DescribeString(name, v), `"`) + `"`
	}
	switch {
	case s == "":
		return `""`
	case SecretKey(key) && !strings.HasPrefix(s, "/"):
		return describeSecret(s)
	}
	// A URL's userinfo is where its secret is: without it (and without its
	// query) the rest is shown.
	if u, ok := printableURL(s); ok {
		return fmt.Sprintf("%q", u)
	}
	if LooksSecret(s) {
		return describeSecret(s)
	}
	if plainString(s) || cronFields().MatchString(s) {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf("<string, %d characters>", utf8.RuneCountInString(s))
}

func describeSecret(s string) string {
	return fmt.Sprintf("<string, %d characters, looks secret>", utf8.RuneCountInString(s))
}

// optionName is an environment variable's name, as environment = [...]
// spells them (upper case), or an option's (MachineOptions' engine-label=…,
// lower case): never a mix of both cases, which is a secret's shape.
var optionName = lazyre.MustCompile(`^(?:[A-Z_][A-Z0-9_]*|[a-z_][a-z0-9_.-]*)$`)

// cronFields is a cron-like period ("* * 9-17 * * mon-fri *"): fields of
// digits, names and cron's punctuation, no secret's shape.
var cronFields = lazyre.MustCompile(`^` + cronField + `( ` + cronField + `){1,7}$`)

const cronField = `(?:[0-9]{1,4}|[0-9]{0,4}[*/,?-][0-9*/,?-]{0,16}|[A-Za-z]{3}(?:-[A-Za-z]{3})?)`

// plainString is a path, an image reference, a word or a short list of
// words: what config values that name things look like. Spaces, quotes
// and shell syntax (scripts, which can carry a secret anywhere) are not.
// 1 to 160 of [A-Za-z0-9_.,:/@+~%*-]: a loop, where the regular
// expression compiled to 160 copies of its class at every start.
func plainString(s string) bool {
	if len(s) == 0 || len(s) > 160 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("_.,:/@+~%*-", c) >= 0) {
			return false
		}
	}
	return true
}

// printableURL is s without userinfo, query or fragment when s is a URL
// with a host, saying what it dropped.
func printableURL(s string) (string, bool) {
	if !strings.Contains(s, "://") {
		return "", false
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || !plainString(u.Host) {
		return "", false
	}
	var dropped []string
	if u.User != nil {
		dropped = append(dropped, "userinfo")
	}
	if u.RawQuery != "" || u.ForceQuery {
		dropped = append(dropped, "query")
	}
	if u.Fragment != "" {
		dropped = append(dropped, "fragment")
	}
	out := u.Scheme + "://" + u.Host + u.EscapedPath()
	if LooksSecret(out) || !plainString(out) {
		return "", false
	}
	if len(dropped) > 0 {
		out += " (" + strings.Join(dropped, " and ") + " removed)"
	}
	return out, true
}

// LooksSecret reports whether a value has a secret's shape whatever its
// key: a GitLab token, a PEM block, a bearer token, URL userinfo, or a
// long run of mixed letters and digits (an access key, a password, a hex
// token). Names, paths and versions have separators and short runs.
func LooksSecret(s string) bool {
	if tokenShape().MatchString(s) || strings.Contains(s, "-----BEGIN") || urlUserinfo().MatchString(s) {
		return true
	}
	for _, run := range secretRun().FindAllString(s, -1) {
		classes := 0
		for _, class := range []string{"abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "0123456789"} {
			if strings.ContainsAny(run, class) {
				classes++
			}
		}
		if classes == 3 || len(run) >= 32 && classes >= 2 {
			return true
		}
	}
	return false
}

// secretRun is a run of the characters keys, tokens and base64 are made
// of, long enough to be one.
var secretRun = lazyre.MustCompile(`[A-Za-z0-9+/_]{16,}`)

// quotedPart is a quoted part of a parser's message, with what names it as
// a key: toml's "(last key \"runners.output_limit\")" and "Key 'x' has
// already been defined" quote keys; every other quote (expected value but
// found "hunter2" instead, invalid float: '…', time: invalid duration "…",
// no kind "…" is registered) can be the value it choked on.
var quotedPart = lazyre.MustCompile(`((?:last key|[Kk]ey|field) )?("(?:[^"\\]|\\.)*"|'[^']*'|` + "`[^`]*`" + `)`)

// quotedWord is a quoted value that is a short word (Config, v1, true):
// no secret has that shape.
var quotedWord = lazyre.MustCompile(`^[A-Za-z]?[a-z]{0,11}[0-9]?$`)

// DescribeQuoted is a parser's message (toml's, YAML's, client-go's) with
// the values it quotes replaced by their length: keys, single characters
// (found '=' instead) and short words stay.
func DescribeQuoted(msg string) string {
	return quotedPart().ReplaceAllStringFunc(msg, func(m string) string {
		sub := quotedPart().FindStringSubmatch(m)
		inner := sub[2][1 : len(sub[2])-1]
		if sub[1] != "" || utf8.RuneCountInString(inner) <= 2 || quotedWord().MatchString(inner) {
			return m
		}
		return sub[2][:1] + fmt.Sprintf("<%d characters>", utf8.RuneCountInString(inner)) + sub[2][len(sub[2])-1:]
	})
}

// quotesDescribed is an error whose text has its quoted values described
// (DescribeQuoted); errors.As and errors.Is still find what is under it
// (a toml.ParseError and its position).
type quotesDescribed struct{ err error }

func (e quotesDescribed) Error() string { return DescribeQuoted(e.err.Error()) }
func (e quotesDescribed) Unwrap() error { return e.err }

// QuotesDescribed wraps a parser's error so that its text never carries
// the input it quotes; nil stays nil.
func QuotesDescribed(err error) error {
	if err == nil {
		return nil
	}
	return quotesDescribed{err}
}

// RemoteText is text a server sent (a header, an error body client-go
// quotes in its error) made fit to print: one line without control
// characters (a terminal would obey an escape sequence), valid UTF-8, at
// most max runes, and redacted.
func RemoteText(s string, max int) string {
	// Redacted before the final cut, which drops any piece of a secret the
	// first, wider cut left at its end for the redactor not to know.
	if len(s) > 8*max+64 {
		s = s[:8*max+64]
	}
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(s, "?"))
	s = Text(strings.Join(strings.Fields(s), " "))
	if r := []rune(s); len(r) > max {
		s = string(r[:max]) + "…"
	}
	return s
}
