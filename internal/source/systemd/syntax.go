package systemd

import (
	"bytes"
	"fmt"
	"strings"
)

// longLineMax is LONG_LINE_MAX (src/basic/fileio.h): a longer line, or
// continued line, makes config_parse() give up on the file.
const longLineMax = 1 << 20

// readLine delimits the next line of data at i as read_line_full()
// (src/basic/fileio.c) does: "\n", "\r", "\0" and the pairs "\r\n",
// "\n\r" (optionally followed by "\0") each end one line. tooLong is
// -ENOBUFS: the line reached longLineMax characters.
func readLine(data []byte, i int) (line []byte, next int, tooLong bool) {
	const (
		eolLF  = 1
		eolCR  = 2
		eolNUL = 4
	)
	start, n := i, 0
	var prev byte
	for {
		if n >= longLineMax {
			return nil, i, true
		}
		if i >= len(data) {
			break
		}
		var eol byte
		switch data[i] {
		case '\n':
			eol = eolLF
		case '\r':
			eol = eolCR
		case 0:
			eol = eolNUL
		}
		if prev&eolNUL != 0 || (eol == 0 && prev != 0) || (eol != 0 && prev&eol != 0) {
			break
		}
		i++
		if eol != 0 {
			prev |= eol
			continue
		}
		n++
	}
	return data[start : start+n], i, false
}

// parseConfig reads data the way config_parse() in src/shared/conf-parser.c
// does, calls apply for each assignment in one of sections and report for
// each syntax problem (Fatal when parsing stops). It returns
// false when systemd's config_parse() would have returned an error and
// stopped reading the file (for a unit fragment, the unit then fails to
// load; for a drop-in the error is ignored but the rest of that file is
// not read). apply returns false to stop the same way (a setting parser
// returning -ENOEXEC).
//
// systemd.syntax(7): whitespace around "=" and at both ends is ignored;
// lines starting with "#" or ";" (after leading whitespace, in the code)
// are comments; a line ending in a backslash is joined with the next, the
// backslash replaced by a space, and comment lines inside such a
// continuation are skipped. Keys and section names are case-sensitive.
func parseConfig(file string, data []byte, sections []string, apply func(section, key, value string, src Source) bool, report func(Problem)) bool {
	return parseConfigLines(file, data, sections, func(section, key, value string, src Source, _ int) bool {
		return apply(section, key, value, src)
	}, report)
}

// parseConfigLines is parseConfig telling apply also the last physical
// line of each assignment (its first is src.Line; they differ when it is
// continued over lines with backslashes).
func parseConfigLines(file string, data []byte, sections []string, apply func(section, key, value string, src Source, last int) bool, report func(Problem)) bool {
	var (
		section        string
		sectionIgnored bool
		cont           []byte
		inCont         bool
		contLine       int
		bomSeen        bool
		line           int
	)
	fail := func(l int, format string, args ...any) bool {
		report(Problem{Source: Source{file, l}, Message: fmt.Sprintf(format, args...), Fatal: true})
		return false
	}
	warn := func(l int, format string, args ...any) {
		report(Problem{Source: Source{file, l}, Message: fmt.Sprintf(format, args...)})
	}
	parseLine := func(l []byte, lineNo int) bool {
		s := strings.Trim(string(l), whitespace)
		if s == "" {
			return true
		}
		if !utf8Valid(s) {
			// log_syntax_invalid_utf8() returns -EINVAL: parsing stops.
			return fail(lineNo, "line is not UTF-8 clean; systemd stops reading the file here")
		}
		if s[0] == '[' {
			if s[len(s)-1] != ']' {
				return fail(lineNo, "invalid section header %s; systemd stops reading the file here", quoteForMessage(s))
			}
			n := s[1 : len(s)-1]
			if !stringSafe(n) {
				return fail(lineNo, "bad characters in section header %s; systemd stops reading the file here", quoteForMessage(s))
			}
			if !contains(sections, n) {
				if !strings.HasPrefix(n, "X-") {
					warn(lineNo, "unknown section [%s]; its assignments are ignored", quoteForMessage(n))
				}
				section, sectionIgnored = "", true
				return true
			}
			section, sectionIgnored = n, false
			return true
		}
		if section == "" {
			if !sectionIgnored {
				warn(lineNo, "assignment outside of a section, ignored")
			}
			return true
		}
		eq := strings.IndexByte(s, '=')
		if eq < 0 {
			warn(lineNo, "missing '=', line ignored: %s", quoteForMessage(s))
			return true
		}
		if eq == 0 {
			warn(lineNo, "missing key name before '=', line ignored")
			return true
		}
		key := strings.Trim(s[:eq], whitespace)
		value := strings.Trim(s[eq+1:], whitespace)
		return apply(section, key, value, Source{file, lineNo}, line)
	}

	for i := 0; i < len(data); {
		raw, next, tooLong := readLine(data, i)
		if tooLong {
			return fail(line+1, "line longer than %d bytes; systemd stops reading the file here", longLineMax)
		}
		i = next
		line++

		if t := bytes.TrimLeft(raw, whitespace); len(t) > 0 && (t[0] == '#' || t[0] == ';') {
			continue // a comment, also inside a continuation
		}
		l := raw
		if !bomSeen && bytes.HasPrefix(l, []byte("\xef\xbb\xbf")) {
			l, bomSeen = l[3:], true
		}
		if inCont {
			if len(cont)+len(l) > longLineMax {
				return fail(line, "continuation line longer than %d bytes; systemd stops reading the file here", longLineMax)
			}
			cont = append(cont, l...)
		}
		// The C code rescans the whole joined line for a trailing
		// unescaped backslash; scanning only the new part is the same,
		// since the joined part ended in the space that replaced one.
		escaped := false
		for _, c := range l {
			escaped = !escaped && c == '\\'
		}
		if escaped {
			if !inCont {
				cont, inCont, contLine = append([]byte(nil), l...), true, line
			}
			cont[len(cont)-1] = ' '
			continue
		}
		p, at := l, line
		if inCont {
			p, at = cont, contLine
		}
		if !parseLine(p, at) {
			return false
		}
		cont, inCont = nil, false
	}
	if inCont {
		return parseLine(cont, contLine)
	}
	return true
}

// stringSafe is string_is_safe(): no control characters, quotes,
// backslashes or DEL.
func stringSafe(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < ' ' || c == '"' || c == '\'' || c == '\\' || c == 0x7f {
			return false
		}
	}
	return true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
