package fixcode

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Entry is one line of a unit file's section: a key and its value.
type Entry struct {
	key   string
	name  string // Environment=: the variable's name
	value string
	// bare is an UnsetEnvironment= entry without a value (the name alone);
	// reset is an empty assignment, which empties the key's list.
	bare, reset bool
}

// UnsetEnvironmentReset is "UnsetEnvironment=": it empties the list of
// variables the unit removes from the process's environment, as far as
// files applied before it built it (systemd.exec(5), UnsetEnvironment=:
// "the list of variables is reset if the empty string is assigned").
func UnsetEnvironmentReset() Entry { return Entry{key: "UnsetEnvironment", reset: true} }

// UnsetEnvironmentOf is an UnsetEnvironment= entry the unit already has,
// given back after a reset: the variable name alone, or NAME=VALUE when
// hasValue. The name is checked as systemd's env_name_is_valid does.
func UnsetEnvironmentOf(name, value string, hasValue bool) Entry {
	return Entry{key: "UnsetEnvironment", name: name, value: value, bare: !hasValue}
}

// Environment is an Environment= line setting name to value.
func Environment(name constText, value string) Entry {
	return Entry{key: "Environment", name: string(name), value: value}
}

// EnvironmentOf is Environment for a variable whose name is data (a
// variable the unit already sets, reset by a fix): the name is checked as
// systemd's env_name_is_valid does.
func EnvironmentOf(name, value string) Entry {
	return Entry{key: "Environment", name: name, value: value}
}

// UnitSection is one section of a unit file or drop-in and its lines:
// "[Service]" and an Environment= line, say.
func UnitSection(name constText, entries ...Entry) Doc {
	var b strings.Builder
	b.WriteString("[" + string(name) + "]")
	for _, e := range entries {
		line, err := e.render()
		if err != nil {
			return newDoc(LangSystemd, "", err)
		}
		b.WriteString("\n" + line)
	}
	return newDoc(LangSystemd, b.String(), nil)
}

func (e Entry) render() (string, error) {
	if e.reset {
		return e.key + "=", nil
	}
	if !identifier.MatchString(e.name) {
		return "", &Refusal{Why: fmt.Sprintf("%q is not an environment variable name systemd accepts", e.name)}
	}
	if e.bare {
		return e.key + "=" + e.name, nil
	}
	v, err := value(e.value)
	if err != nil {
		return "", err
	}
	word, err := systemdWord(e.name + "=" + v)
	if err != nil {
		return "", err
	}
	return e.key + "=" + word, nil
}

// systemdWord is s as one word of an Environment= line: systemd reads the
// line with extract_first_word(EXTRACT_CUNESCAPE|EXTRACT_UNQUOTE), then
// resolves specifiers (% doubled here), then keeps the assignment only
// when env_assignment_is_valid: UTF-8, and no control character but a
// newline or a tab (src/basic/env-util.c, systemd v252). A word of plain
// characters is written bare; any other in double quotes, with \, " and
// every character that is not printable C-escaped.
func systemdWord(s string) (string, error) {
	if !utf8.ValidString(s) {
		return "", &Refusal{Why: "it is not UTF-8, which systemd refuses in an environment"}
	}
	var b strings.Builder
	bare := true
	for _, r := range s {
		switch {
		case r == '%':
			b.WriteString("%%")
		case r == '\\', r == '"':
			b.WriteString(`\` + string(r))
			bare = false
		case r == '\n':
			b.WriteString(`\n`)
			bare = false
		case r == '\t':
			b.WriteString(`\t`)
			bare = false
		case r < 0x20 || r == 0x7f || (0x80 <= r && r < 0xa0):
			return "", &Refusal{Why: fmt.Sprintf("it holds the control character %U, which systemd refuses in an environment", r)}
		case !unicode.IsPrint(r):
			if r < 0x10000 {
				fmt.Fprintf(&b, `\u%04x`, r)
			} else {
				fmt.Fprintf(&b, `\U%08x`, r)
			}
			bare = false
		default:
			if r == ' ' || r == '\'' || r == ';' || r == '#' {
				bare = false
			}
			b.WriteRune(r)
		}
	}
	if bare {
		return b.String(), nil
	}
	return `"` + b.String() + `"`, nil
}
