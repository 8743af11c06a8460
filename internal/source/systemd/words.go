package systemd

import (
	"errors"
	"strings"
	"unicode/utf8"
)

// This file ports the word-level machinery systemd applies to setting
// values. Sources (systemd v256, read from the systemd-stable tree):
// src/basic/extract-word.c, src/basic/escape.c (cunescape_one),
// src/shared/specifier.c, src/core/unit-printf.c and src/basic/env-util.c
// (replace_env_full, replace_env_argv).

// whitespace is WHITESPACE from src/basic/string-util.h.
const whitespace = " \t\n\r"

func isSep(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// extractFlags mirrors the ExtractFlags that matter here
// (src/basic/extract-word.h).
type extractFlags uint

const (
	exRelax         extractFlags = 1 << iota // unbalanced quote and trailing backslash allowed
	exCUnescape                              // C escapes are decoded
	exUnescapeRelax                          // unknown escapes are kept verbatim
	exUnquote                                // quotes group and are removed
)

var (
	errBadEscape  = errors.New("invalid escape sequence")
	errBadQuoting = errors.New("unbalanced quoting")
)

// extractWord is extract_first_word() with whitespace separators: it
// returns the first word of p and what follows it (separators after the
// word already skipped, as the C code leaves *p). ok is false when p holds
// no word. Quotes may open anywhere in a word with exUnquote ("a"b c"" is
// one word `ab c`), which is what the code does even though
// systemd.syntax(7) describes quotes only at word starts.
func extractWord(p string, flags extractFlags) (word, rest string, ok bool, err error) {
	i := 0
	for i < len(p) && isSep(p[i]) {
		i++
	}
	if i == len(p) {
		return "", "", false, nil
	}
	s := make([]byte, 0, len(p)-i)
	var quote byte
	backslash := false
	for {
		switch {
		case backslash:
			if i == len(p) {
				// A trailing backslash: kept under UNESCAPE_RELAX (outside
				// quotes), dropped under RELAX, an error otherwise.
				if flags&exUnescapeRelax != 0 && (quote == 0 || flags&exRelax != 0) {
					return string(append(s, '\\')), "", true, nil
				}
				if flags&exRelax != 0 {
					return string(s), "", true, nil
				}
				return "", "", false, errBadEscape
			}
			c := p[i]
			if flags&exCUnescape != 0 {
				if out, n, valid := cunescapeOne(p[i:]); valid {
					s = append(s, out...)
					i += n
				} else if flags&exUnescapeRelax != 0 {
					s = append(s, '\\', c)
					i++
				} else {
					return "", "", false, errBadEscape
				}
			} else {
				// Without CUNESCAPE a backslash just makes the next
				// character literal.
				s = append(s, c)
				i++
			}
			backslash = false
		case quote != 0:
			for {
				if i == len(p) {
					if flags&exRelax != 0 {
						return string(s), "", true, nil
					}
					return "", "", false, errBadQuoting
				}
				c := p[i]
				i++
				if c == quote {
					quote = 0
					break
				}
				if c == '\\' {
					backslash = true
					break
				}
				s = append(s, c)
			}
		default:
			for {
				if i == len(p) {
					return string(s), "", true, nil
				}
				c := p[i]
				if (c == '\'' || c == '"') && flags&exUnquote != 0 {
					quote = c
					i++
					break
				}
				if c == '\\' {
					backslash = true
					i++
					break
				}
				if isSep(c) {
					for i < len(p) && isSep(p[i]) {
						i++
					}
					return string(s), p[i:], true, nil
				}
				s = append(s, c)
				i++
			}
		}
	}
}

// extractWordAndWarn is extract_first_word_and_warn(): an invalid escape is
// retried with UNESCAPE_RELAX (kept verbatim, with a warning); what still
// fails is unbalanced quoting.
func extractWordAndWarn(p string, flags extractFlags) (word, rest string, ok bool, warning string, err error) {
	word, rest, ok, err = extractWord(p, flags)
	if err == nil || flags&exUnescapeRelax != 0 {
		return word, rest, ok, "", err
	}
	word, rest, ok, err = extractWord(p, flags|exUnescapeRelax)
	if err == nil {
		return word, rest, ok, "ignoring unknown escape sequences: " + quoteForMessage(word), nil
	}
	return "", "", false, "", errBadQuoting
}

// splitWords splits a whole value into words, stopping at the first error
// the way the callers in load-fragment.c do (words before it are kept).
func splitWords(v string, flags extractFlags) ([]string, error) {
	var out []string
	for {
		w, rest, ok, err := extractWord(v, flags)
		if err != nil {
			return out, err
		}
		if !ok {
			return out, nil
		}
		out = append(out, w)
		v = rest
	}
}

// cunescapeOne decodes one escape (p starts after the backslash), as
// cunescape_one() in src/basic/escape.c with accept_nul=false. It returns
// the bytes to append and how many input bytes it used. The table is
// systemd.syntax(7) "Quoting".
func cunescapeOne(p string) (out []byte, n int, ok bool) {
	if p == "" {
		return nil, 0, false
	}
	switch p[0] {
	case 'a':
		return []byte{'\a'}, 1, true
	case 'b':
		return []byte{'\b'}, 1, true
	case 'f':
		return []byte{'\f'}, 1, true
	case 'n':
		return []byte{'\n'}, 1, true
	case 'r':
		return []byte{'\r'}, 1, true
	case 't':
		return []byte{'\t'}, 1, true
	case 'v':
		return []byte{'\v'}, 1, true
	case '\\', '"', '\'':
		return []byte{p[0]}, 1, true
	case 's': // an extension of the XDG syntax: a space
		return []byte{' '}, 1, true
	case 'x':
		if len(p) < 3 {
			return nil, 0, false
		}
		a, b := unhex(p[1]), unhex(p[2])
		if a < 0 || b < 0 || (a == 0 && b == 0) {
			return nil, 0, false
		}
		return []byte{byte(a<<4 | b)}, 3, true // a raw byte ("eight_bit")
	case 'u', 'U':
		digits := 4
		if p[0] == 'U' {
			digits = 8
		}
		if len(p) < 1+digits {
			return nil, 0, false
		}
		var c uint32
		for i := 1; i <= digits; i++ {
			d := unhex(p[i])
			if d < 0 {
				return nil, 0, false
			}
			c = c<<4 | uint32(d)
		}
		if c == 0 || (p[0] == 'U' && !unicharValid(c)) {
			return nil, 0, false
		}
		return encodeUnichar(c), 1 + digits, true
	case '0', '1', '2', '3', '4', '5', '6', '7':
		if len(p) < 3 {
			return nil, 0, false
		}
		a, b, c := unoct(p[0]), unoct(p[1]), unoct(p[2])
		if a < 0 || b < 0 || c < 0 || (a == 0 && b == 0 && c == 0) {
			return nil, 0, false
		}
		m := a<<6 | b<<3 | c
		if m > 255 {
			return nil, 0, false
		}
		return []byte{byte(m)}, 3, true
	}
	return nil, 0, false
}

func unhex(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

func unoct(c byte) int {
	if c >= '0' && c <= '7' {
		return int(c - '0')
	}
	return -1
}

// unicharValid is unichar_is_valid() (src/basic/utf8.c): no surrogates,
// no noncharacters, nothing past U+10FFFF.
func unicharValid(c uint32) bool {
	return c < 0x110000 && c&0xFFFFF800 != 0xD800 && !(c >= 0xFDD0 && c <= 0xFDEF) && c&0xFFFE != 0xFFFE
}

// encodeUnichar is utf8_encode_unichar(): plain UTF-8 bit packing, which
// (unlike utf8.EncodeRune) also encodes the surrogates \u can produce.
func encodeUnichar(g uint32) []byte {
	switch {
	case g < 1<<7:
		return []byte{byte(g)}
	case g < 1<<11:
		return []byte{0xc0 | byte(g>>6&0x1f), 0x80 | byte(g&0x3f)}
	case g < 1<<16:
		return []byte{0xe0 | byte(g>>12&0x0f), 0x80 | byte(g>>6&0x3f), 0x80 | byte(g&0x3f)}
	}
	return []byte{0xf0 | byte(g>>18&0x07), 0x80 | byte(g>>12&0x3f), 0x80 | byte(g>>6&0x3f), 0x80 | byte(g&0x3f)}
}

// utf8Valid is utf8_is_valid(): Go's decoder (no overlongs, no surrogates)
// plus systemd's refusal of noncharacters.
func utf8Valid(s string) bool {
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		if r == utf8.RuneError && n <= 1 {
			return false
		}
		if !unicharValid(uint32(r)) {
			return false
		}
		s = s[n:]
	}
	return true
}

// Specifiers ----------------------------------------------------------------

var errBadSpecifier = errors.New("unknown specifier")

// specifiers resolves %-specifiers as specifier_printf() does with the
// table of unit_full_printf() (src/core/unit-printf.c). Specifiers that
// depend only on the unit name, or are fixed for the system manager, are
// resolved; ones that depend on the live host (%H, %m, %b, %h, ...) are
// kept verbatim and named in hostSpecific so a caller can say so. An
// alphanumeric specifier systemd does not know is an error (-EBADSLT), and
// "%" before any other character is kept as is.
func (u *Unit) specifiers(s string) (out string, hostSpecific []string, err error) {
	if strings.IndexByte(s, '%') < 0 {
		return s, nil, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		if i+1 == len(s) { // a stray trailing % stays
			b.WriteByte('%')
			break
		}
		i++
		c = s[i]
		if c == '%' {
			b.WriteByte('%')
			continue
		}
		if v, known := u.specifier(c); known {
			b.WriteString(v)
			continue
		}
		if strings.IndexByte(hostSpecifiers, c) >= 0 {
			b.WriteByte('%')
			b.WriteByte(c)
			hostSpecific = append(hostSpecific, "%"+string(c))
			continue
		}
		if isAlnum(c) {
			return "", nil, errBadSpecifier
		}
		b.WriteByte('%')
		b.WriteByte(c)
	}
	return b.String(), hostSpecific, nil
}

// hostSpecifiers are in unit_full_printf()'s table but resolve from the
// running host (hostname, machine id, boot id, os-release, the manager's
// home, shell and credentials directory, cgroup paths).
const hostSpecifiers = "aAbBHlqmMovwWhscrRd"

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// specifier resolves the specifiers fixed by the unit name or by running
// as the system manager (systemd.unit(5), "Specifiers"; the system-scope
// values of %u %U %g %G are root's, specifier_user_name() uses uid 0).
func (u *Unit) specifier(c byte) (string, bool) {
	prefix, instance := unitPrefix(u.Name), unitInstance(u.Name)
	switch c {
	case 'n':
		return u.Name, true
	case 'N':
		return strings.TrimSuffix(u.Name, "."+unitType(u.Name)), true
	case 'p':
		return prefix, true
	case 'P':
		return unitNameUnescape(prefix), true
	case 'i':
		return instance, true
	case 'I':
		return unitNameUnescape(instance), true
	case 'j':
		return lastComponent(prefix), true
	case 'J':
		return unitNameUnescape(lastComponent(prefix)), true
	case 'f':
		if instance != "" {
			return unitNamePathUnescape(instance), true
		}
		return unitNamePathUnescape(prefix), true
	case 'y':
		return u.Path, u.Path != ""
	case 'Y':
		if u.Path == "" {
			return "", false
		}
		return dirOf(u.Path), true
	case 'u', 'g':
		return "root", true
	case 'U', 'G':
		return "0", true
	case 'C':
		return "/var/cache", true
	case 'D':
		return "/usr/share", true
	case 'E':
		return "/etc", true
	case 'L':
		return "/var/log", true
	case 'S':
		return "/var/lib", true
	case 't':
		return "/run", true
	case 'T':
		return "/tmp", true
	case 'V':
		return "/var/tmp", true
	}
	return "", false
}

// lastComponent is what specifier_last_component() gives: the part of the
// prefix after its last dash.
func lastComponent(prefix string) string {
	if i := strings.LastIndexByte(prefix, '-'); i >= 0 {
		return prefix[i+1:]
	}
	return prefix
}

// unitNameUnescape undoes systemd-escape: "-" is "/" and \xNN is a byte
// (unit_name_unescape() in src/basic/unit-name.c).
func unitNameUnescape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '-':
			b.WriteByte('/')
		case s[i] == '\\' && i+3 < len(s) && s[i+1] == 'x' && unhex(s[i+2]) >= 0 && unhex(s[i+3]) >= 0:
			b.WriteByte(byte(unhex(s[i+2])<<4 | unhex(s[i+3])))
			i += 3
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// unitNamePathUnescape is unit_name_path_unescape(): "-" alone is "/",
// anything else is unescaped and made absolute.
func unitNamePathUnescape(s string) string {
	if s == "-" || s == "" {
		return "/"
	}
	return "/" + unitNameUnescape(s)
}

// Environment variable expansion in command lines ----------------------------

// expandArgv is replace_env_argv() (src/basic/env-util.c), as exec-invoke.c
// calls it unless the command has the ":" prefix. systemd.service(5),
// "Command lines": "${FOO}" as part of a word or as a word of its own is
// replaced by the exact value, always one argument; "$FOO" as a separate
// word is replaced by the value split at whitespace, quotes respected and
// removed, giving zero or more arguments. "$$" is a literal "$".
// unset lists variables referenced but not set (they expand to nothing),
// bad lists invalid names (resolved like unset ones; a bad "$NAME" word is
// dropped altogether).
func expandArgv(argv []string, env map[string]string) (out, unset, bad []string) {
	for _, w := range argv {
		if len(w) > 0 && w[0] == '$' && (len(w) == 1 || (w[1] != '{' && w[1] != '$')) {
			name := w[1:]
			if !envNameValid(name) {
				bad = append(bad, name)
				continue
			}
			v, ok := env[name]
			if !ok {
				unset = append(unset, name)
				continue
			}
			// strv_split_full(WHITESPACE, EXTRACT_RELAX|EXTRACT_UNQUOTE):
			// no C unescaping, a backslash only makes the next byte literal.
			words, _ := splitWords(v, exRelax|exUnquote)
			out = append(out, words...)
			continue
		}
		s, u, b := replaceEnv(w, env)
		out = append(out, s)
		unset = append(unset, u...)
		bad = append(bad, b...)
	}
	return out, unset, bad
}

// replaceEnv is replace_env_full() with flags 0: only ${NAME} is replaced
// (no braceless $NAME inside a word, no ${NAME:-default}: a ':' makes the
// text stay as written), and "$$" becomes "$".
func replaceEnv(format string, env map[string]string) (string, []string, []string) {
	const (
		word = iota
		curly
		variable
	)
	var b strings.Builder
	var unset, bad []string
	state, start := word, 0
	for i := 0; i < len(format); i++ {
		c := format[i]
		switch state {
		case word:
			if c == '$' {
				state = curly
			}
		case curly:
			switch c {
			case '{':
				b.WriteString(format[start : i-1])
				start = i - 1
				state = variable
			case '$':
				b.WriteString(format[start:i])
				start = i + 1
				state = word
			default:
				state = word
			}
		case variable:
			if c == '}' {
				name := format[start+2 : i]
				if !envNameValid(name) {
					bad = append(bad, name)
				} else if v, ok := env[name]; ok {
					b.WriteString(v)
				} else {
					unset = append(unset, name)
				}
				start = i + 1
				state = word
			} else if c == ':' {
				state = word // unsupported syntax: no replacement
			}
		}
	}
	b.WriteString(format[start:])
	return b.String(), unset, bad
}

// envNameValid is env_name_is_valid(): letters, digits and '_', not
// starting with a digit (src/basic/env-util.c, VALID_BASH_ENV_NAME_CHARS).
func envNameValid(s string) bool {
	if s == "" || (s[0] >= '0' && s[0] <= '9') {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || isAlnum(c)) {
			return false
		}
	}
	return true
}

// quoteForMessage shows a value in a Problem without letting control
// bytes or invalid UTF-8 from a hostile file into a terminal.
func quoteForMessage(s string) string {
	const max = 200
	if len(s) > max {
		s = s[:max] + "..."
	}
	return strings.ToValidUTF8(strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return '?'
		}
		return r
	}, s), "?")
}
