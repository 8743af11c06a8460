package configfacts

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/BurntSushi/toml"

	"github.com/socialwebcomputer/doctor/internal/redact"
	"github.com/socialwebcomputer/doctor/internal/text/lazyre"
)

// A config.toml line is evidence, and a line can hold a token, a password
// in a URL, or a secret pasted under the wrong key. So evidence never
// quotes one: describeLine rebuilds it from its key and its decoded value,
// each value shown only when it cannot be a secret (redact.DescribeString),
// and without the line's comment.

// maxValueLines is how far a value may run on (a multi-line array or
// string) before describeLine gives up decoding it.
const maxValueLines = 40

// describeLine is line n (1-based) of lines as evidence shows it.
func describeLine(lines []string, n int) string {
	t := strings.TrimSpace(lines[n-1])
	switch {
	case t == "":
		return ""
	case strings.HasPrefix(t, "#"):
		return fmt.Sprintf("<a comment, %d characters>", utf8.RuneCountInString(t))
	case strings.HasPrefix(t, "["):
		if m := tableHeader().FindString(t); m != "" {
			return m
		}
	}
	m := keyValue().FindStringSubmatch(t)
	if m == nil {
		return fmt.Sprintf("<%d characters that are no TOML key = value>", utf8.RuneCountInString(t))
	}
	key, rest := m[1], m[2]
	last := lastKey(key)
	if v, ok := decodeValue(rest, lines[n:]); ok {
		return key + " = " + describeValue(last, v, 0)
	}
	if unparsedPlain().MatchString(rest) {
		return key + " = " + rest // "= 51200": the doubled '=' is the error, and no letters are a secret's
	}
	return fmt.Sprintf("%s = <%d characters that do not parse as a TOML value>", key, utf8.RuneCountInString(rest))
}

// tableHeader is a [table] or [[array]] header, its comment left off.
var tableHeader = lazyre.MustCompile(`^\[\[?[^\[\]#]*\]\]?`)

// keyValue is a key (bare, quoted or dotted) and the rest of the line.
var keyValue = lazyre.MustCompile(`^((?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*')(?:\s*\.\s*(?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*'))*)\s*=\s*(.*)$`)

// unparsedPlain is a value that does not parse but holds nothing a secret
// is made of: digits, signs and brackets.
var unparsedPlain = lazyre.MustCompile(`^[0-9\s=.,+\-_\[\]{}"']{0,24}$`)

// lastKey is the last part of a dotted key, unquoted.
func lastKey(key string) string {
	if i := strings.LastIndexByte(key, '.'); i >= 0 && !strings.ContainsAny(key[i:], `"'`) {
		key = key[i+1:]
	}
	return strings.Trim(strings.TrimSpace(key), `"'`)
}

// decodeValue decodes the value that starts with rest and may run on into
// the lines after it.
func decodeValue(rest string, after []string) (any, bool) {
	doc := "v = " + rest
	for i := 0; ; i++ {
		var m map[string]any
		if _, err := toml.Decode(doc, &m); err == nil {
			v, ok := m["v"]
			return v, ok
		}
		if i >= len(after) || i >= maxValueLines {
			return nil, false
		}
		doc += "\n" + after[i]
	}
}

// describeValue shows a decoded value: numbers, booleans and dates as they
// are, strings through redact.DescribeString, arrays and tables element by
// element.
func describeValue(key string, v any, depth int) string {
	switch x := v.(type) {
	case string:
		return redact.DescribeString(key, x)
	case bool:
		return strconv.FormatBool(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case time.Time:
		return x.Format(time.RFC3339Nano)
	case []any:
		if depth > 3 {
			return fmt.Sprintf("<array of %d>", len(x))
		}
		parts := make([]string, 0, len(x))
		for i, e := range x {
			if i == 8 {
				parts = append(parts, fmt.Sprintf("… %d more", len(x)-i))
				break
			}
			parts = append(parts, describeValue(key, e, depth+1))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		if depth > 3 {
			return fmt.Sprintf("<table of %d keys>", len(x))
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, 0, len(keys))
		for _, k := range keys {
			parts = append(parts, k+" = "+describeValue(k, x[k], depth+1))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return fmt.Sprintf("<%T>", v)
}
