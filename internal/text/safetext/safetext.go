// Package safetext makes text that came from outside doctor fit to print.
//
// doctor prints what it did not write: object names and messages of an
// apiserver, config.toml values, a bundle's manifest, a state file, log
// lines, a server's answers. Such text may hold bytes a terminal obeys (ESC
// opens a sequence that retitles the window, moves the cursor, rewrites
// what was printed or makes the terminal answer back; BEL, CR and BS
// rewrite too), characters that reorder what is shown (Unicode's bidi
// overrides and isolates, the trick of CVE-2021-42574) or are not shown
// at all (zero-width spaces and joiners, the soft hyphen, a byte order
// mark: every format character), or bytes that are not UTF-8. A renderer passes every such field through Line (or Lines,
// for text whose lines are its own, such as a fix) before its own layout
// is added, so that only the renderer's own bytes are raw: each of those
// characters is shown as its escape (\x1b, \u202e), never emitted.
//
// A backslash is kept as it is: the escapes are for a reader, who can tell
// them apart from a value that holds a backslash by the rest of it, and
// escaping every backslash would change every Windows path and regexp
// doctor quotes.
package safetext

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Unfit says whether r is one of the characters Line never emits: every
// character of Unicode's categories Cc (the C0 controls, newline and tab
// included, DEL and the C1 controls) and Cf (the format characters: the
// bidi controls U+202A-U+202E and U+2066-U+2069 and the marks U+200E,
// U+200F and U+061C, the zero-width space, joiners and word joiner U+200B,
// U+200C, U+200D and U+2060, the soft hyphen U+00AD, the byte order mark
// U+FEFF, the tag characters, and the rest), and the line and paragraph
// separators U+2028 and U+2029 (Zl, Zp), which some terminals and editors
// take for line breaks. A format character is invisible or reorders what
// is shown: text from outside that holds one can read as other text
// ("gitlab\u200b-runner" is not gitlab-runner), so one rule shows them
// all as escapes.
func Unfit(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, 0x80 <= r && r <= 0x9f:
		return true // Cc, the fast path
	case r < 0xad:
		return false
	case r == 0x2028, r == 0x2029:
		return true
	}
	return unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Cc, r)
}

// Line is s fit for one line of output: every Unfit character is shown as
// its escape (\n, \t and \r by those names, other C0 controls and DEL as
// \xHH, the others as \uHHHH, or \UHHHHHHHH past U+FFFF), every byte that
// is not UTF-8 as \xHH. Text with none of them is returned as it is,
// without a copy.
func Line(s string) string { return escape(s, false) }

// Lines is Line for text whose newlines and tabs are its own layout (a
// fix, a heredoc): it keeps them and escapes the rest.
func Lines(s string) string { return escape(s, true) }

// Bad is the offset of the first byte of s that Line would have escaped
// (a character in keep is allowed), or -1 when there is none: the property
// every renderer's test asserts of what it wrote.
func Bad(s, keep string) int {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || Unfit(r) && !strings.ContainsRune(keep, r) {
			return i
		}
		i += size
	}
	return -1
}

func escape(s string, layout bool) string {
	i := firstEscape(s, layout)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			hex(&b, `\x`, rune(s[i]), 2)
		case !Unfit(r) || layout && (r == '\n' || r == '\t'):
			b.WriteString(s[i : i+size])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x80:
			hex(&b, `\x`, r, 2)
		case r <= 0xffff:
			hex(&b, `\u`, r, 4)
		default:
			hex(&b, `\U`, r, 8) // a tag character: \U000e0041
		}
		i += size
	}
	return b.String()
}

// firstEscape is the offset of the first byte escape would change, or -1.
// ASCII text, nearly all of what doctor prints, is judged a byte at a time.
func firstEscape(s string, layout bool) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f {
			i++
			continue
		}
		if c < 0x80 {
			if layout && (c == '\n' || c == '\t') {
				i++
				continue
			}
			return i
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || Unfit(r) {
			return i
		}
		i += size
	}
	return -1
}

func hex(b *strings.Builder, prefix string, r rune, digits int) {
	const digit = "0123456789abcdef"
	b.WriteString(prefix)
	for shift := 4 * (digits - 1); shift >= 0; shift -= 4 {
		b.WriteByte(digit[r>>shift&0xf])
	}
}
