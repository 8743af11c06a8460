package systemd

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
)

// ErrEnvFileUTF8 is why systemd refuses a whole environment file: a key or
// value that is not valid UTF-8 makes load_env_file() fail.
var ErrEnvFileUTF8 = errors.New("invalid UTF-8; systemd rejects the whole file")

// shellNeedEscape is SHELL_NEED_ESCAPE (src/basic/escape.h): inside double
// quotes a backslash before one of these is removed, before anything else
// it is kept.
const shellNeedEscape = "\"\\`$"

// ParseEnvFile parses an EnvironmentFile= file exactly as
// parse_env_file_internal() in src/basic/env-file.c (v256) does, and then
// drops what exec_context_load_environment() (src/core/execute.c) drops
// through strv_env_clean(): assignments whose name is not a valid
// environment variable name. It returns the valid assignments in file
// order (a later one of the same name wins, as strv_env_replace_consume()
// makes it), a Problem for each dropped one, and ErrEnvFileUTF8 when
// systemd would reject the file.
//
// The format, from that state machine:
//   - "#" or ";" starts a comment where a key could start (leading
//     whitespace and blank lines are skipped). Since v254 a backslash at the
//     end of a comment does not continue the comment onto the next line.
//   - KEY=VALUE; whitespace before the "=" is trimmed; a line without "="
//     is ignored.
//   - there is no "export" keyword: "export FOO=1" has the key
//     "export FOO", which is not a valid name, so systemd ignores the line
//     with a warning ("Ignoring invalid environment assignment").
//   - an unquoted value has trailing whitespace removed, "\" makes the next
//     character literal and "\" before a newline joins the next line; quote
//     characters inside an unquoted value are literal.
//   - a value (or the rest of one) starting with ' runs to the next ', all
//     literal, newlines included.
//   - one starting with " runs to the next unescaped "; "\" before one of
//     " \ ` $ is removed, before a newline both vanish, before anything else
//     it is kept ("\n" stays backslash-n).
//   - quoted and unquoted pieces concatenate: A="x"'y'z is "xyz". An
//     unterminated quote runs to the end of the file.
//   - a NUL byte ends the file (the parser walks a C string).
func ParseEnvFile(file string, data []byte) ([]Assignment, []Problem, error) {
	if i := bytes.IndexByte(data, 0); i >= 0 {
		data = data[:i]
	}
	const (
		preKey = iota
		inKey
		preValue
		value
		valueEscape
		singleQuote
		doubleQuote
		doubleQuoteEscape
		comment
		commentEscape
	)
	var (
		vars        []Assignment
		probs       []Problem
		badUTF8     bool
		key, val    []byte
		haveValue   bool
		keyTrail    = -1 // last_key_whitespace
		valTrail    = -1 // last_value_whitespace
		state       = preKey
		line        = 1 // physical line of data[i]
		keyLine     = 1
		isNewline   = func(c byte) bool { return c == '\n' || c == '\r' }
		isSpace     = isSep
		isComment   = func(c byte) bool { return c == '#' || c == ';' }
		appendValue = func(c ...byte) { val = append(val, c...); haveValue = true }
	)
	push := func(chompValue bool) {
		if chompValue && valTrail >= 0 {
			val = val[:valTrail]
		}
		if keyTrail >= 0 {
			key = key[:keyTrail]
		}
		k, v := string(key), string(val)
		src := Source{file, keyLine}
		switch {
		case !utf8Valid(k) || (haveValue && !utf8Valid(v)):
			badUTF8 = true
			probs = append(probs, Problem{Source: src, Message: "invalid UTF-8 in an assignment; systemd rejects the whole file"})
		case !envNameValid(k):
			probs = append(probs, Problem{Source: src, Message: fmt.Sprintf("invalid environment assignment %s=..., systemd ignores it", quoteForMessage(k))})
		default:
			vars = append(vars, Assignment{Name: k, Value: v, Source: src})
		}
		key, val, haveValue = key[:0], nil, false
	}
	for i := 0; i < len(data); i++ {
		c := data[i]
		switch state {
		case preKey:
			if isComment(c) {
				state = comment
			} else if !isSpace(c) {
				state, keyTrail, keyLine = inKey, -1, line
				key = append(key[:0], c)
			}
		case inKey:
			if isNewline(c) {
				state = preKey // a key without "=": ignored
				key = key[:0]
			} else if c == '=' {
				state, valTrail = preValue, -1
			} else {
				if !isSpace(c) {
					keyTrail = -1
				} else if keyTrail < 0 {
					keyTrail = len(key)
				}
				key = append(key, c)
			}
		case preValue:
			switch {
			case isNewline(c):
				state = preKey
				push(false)
			case c == '\'':
				state = singleQuote
			case c == '"':
				state = doubleQuote
			case c == '\\':
				state = valueEscape
			case !isSpace(c):
				state = value
				appendValue(c)
			}
		case value:
			switch {
			case isNewline(c):
				state = preKey
				push(true)
			case c == '\\':
				state, valTrail = valueEscape, -1
			default:
				if !isSpace(c) {
					valTrail = -1
				} else if valTrail < 0 {
					valTrail = len(val)
				}
				appendValue(c)
			}
		case valueEscape:
			state = value
			if !isNewline(c) { // an escaped newline is eaten whole
				appendValue(c)
			}
		case singleQuote:
			if c == '\'' {
				state = preValue
			} else {
				appendValue(c)
			}
		case doubleQuote:
			if c == '"' {
				state = preValue
			} else if c == '\\' {
				state = doubleQuoteEscape
			} else {
				appendValue(c)
			}
		case doubleQuoteEscape:
			state = doubleQuote
			if strings.IndexByte(shellNeedEscape, c) >= 0 {
				appendValue(c)
			} else if c != '\n' {
				appendValue('\\', c)
			}
		case comment:
			if c == '\\' {
				state = commentEscape
			} else if isNewline(c) {
				state = preKey
			}
		case commentEscape:
			if isNewline(c) {
				state = preKey
			} else {
				state = comment
			}
		}
		if c == '\n' {
			line++
		}
	}
	switch state {
	case preValue, value, valueEscape, singleQuote, doubleQuote, doubleQuoteEscape:
		push(state == value)
	}
	if badUTF8 {
		return nil, probs, ErrEnvFileUTF8
	}
	return vars, probs, nil
}
