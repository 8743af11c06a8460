package fixcode

import (
	"fmt"
	"strings"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"github.com/socialwebcomputer/doctor/internal/redact"
)

// Quote is s as one word of bash, pasted into an interactive shell:
//
//   - left bare when every byte is a letter, a digit or one of -_./:,+@%
//     (and =, except in a command's name, where it would make an
//     assignment);
//   - else in single quotes, a ' written '\” (nothing is special inside
//     them, ! included: history expansion stops at a single quote);
//   - else, when s holds a character that is not printable (a control, a
//     bidi or other format character, a byte that is not UTF-8), in $'…'
//     with every such character, ', \ and ! as \xHH escapes of its bytes
//     (in every locale: bash reads \u as a character only in a UTF-8
//     one), so that the terminal shows what bash runs.
//
// s must not hold a NUL, which no shell word can carry.
func Quote(s string) string { return quote(s, false) }

func quote(s string, first bool) string {
	if s == "" {
		return "''"
	}
	bare, plain := true, true
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1, !unicode.IsPrint(r):
			plain, bare = false, false
		case r < utf8.RuneSelf && safeByte(byte(r), first):
		default:
			bare = false
		}
		i += size
	}
	if first && keywords[s] {
		bare = false
	}
	switch {
	case bare:
		return s
	case plain:
		return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	var b strings.Builder
	b.WriteString("$'")
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1, r < 0x20, r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\'', r == '\\', r == '!':
			fmt.Fprintf(&b, `\x%02x`, r)
		case unicode.IsPrint(r):
			b.WriteRune(r)
		default:
			// Its UTF-8 bytes: bash turns \u into a character only in a
			// UTF-8 locale, and leaves "\u202E" in the C locale.
			for _, c := range []byte(s[i : i+size]) {
				fmt.Fprintf(&b, `\x%02x`, c)
			}
		}
		i += size
	}
	b.WriteString("'")
	return b.String()
}

func safeByte(c byte, first bool) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	case c == '=':
		return !first
	}
	return strings.IndexByte("-_./:,+@%", c) >= 0
}

// keywords are bash's reserved words: as a command's name each means
// syntax, quoted a program.
var keywords = map[string]bool{
	"if": true, "then": true, "else": true, "elif": true, "fi": true, "case": true, "esac": true,
	"for": true, "select": true, "while": true, "until": true, "do": true, "done": true,
	"in": true, "function": true, "time": true, "coproc": true,
}

// taint, when set (by the hostile-value tests, SetTaint), replaces every
// value an encoder is given before it is encoded: the tests render every
// fix twice and compare the structure.
var taint atomic.Pointer[func(string) string]

// SetTaint makes every encoder encode f(v) for each value v, until the
// returned function restores the plain encoding. Tests only: it proves
// that whatever a value holds, it stays data.
func SetTaint(f func(string) string) (restore func()) {
	old := taint.Swap(&f)
	return func() { taint.Store(old) }
}

// value is v as an encoder encodes it, or why it may not be printed.
func value(v string) (string, error) {
	if f := taint.Load(); f != nil && *f != nil {
		v = (*f)(v)
	}
	if strings.IndexByte(v, 0) >= 0 {
		return "", &Refusal{Why: "it holds a NUL byte, which no command can carry"}
	}
	if redact.Secretlike(v) {
		return "", &Refusal{Why: "it looks like it holds a secret, and a fix names files, never secrets"}
	}
	return v, nil
}

// Refusal is an encoder's refusal of a value: the block is not printed.
// It never holds the value, which may be a secret.
type Refusal struct{ Why string }

func (r *Refusal) Error() string {
	return "a value cannot be printed in a command (" + r.Why + ")"
}

// printable is nil when every rune of s is printable or in keep, else
// which one is not: a rendered block never carries one raw.
func printable(s, keep string) error {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || (!unicode.IsPrint(r) && !strings.ContainsRune(keep, r)) {
			return &Refusal{Why: fmt.Sprintf("it holds %U, which a terminal would not show as it runs", r)}
		}
		i += size
	}
	return nil
}
