package fixcode

import (
	"bytes"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/BurntSushi/toml"
)

// KV is one key of a TOML table and its value: a string, a bool or an
// integer.
type KV struct {
	Key   string
	Value any
}

// Table is a TOML table of config.toml: its name as the runner's config
// spells it ("runners.kubernetes"; "" for the top level) and its keys.
type Table struct {
	name string
	kvs  []KV
}

// TOMLTable is the table name with kvs.
func TOMLTable(name constText, kvs ...KV) Table { return Table{string(name), kvs} }

// TOML renders tables as lines of config.toml: each table's header, then
// its keys, every key and value encoded by BurntSushi/toml (the runner's
// own TOML library), characters that are not printable written as \u
// escapes.
func TOML(tables ...Table) Doc {
	var b strings.Builder
	for i, t := range tables {
		if i > 0 {
			b.WriteByte('\n')
		}
		if t.name != "" {
			b.WriteString("[" + t.name + "]")
		}
		for j, kv := range t.kvs {
			if j > 0 || t.name != "" {
				b.WriteByte('\n')
			}
			line, err := tomlLine(kv)
			if err != nil {
				return newDoc(LangTOML, "", err)
			}
			b.WriteString(line)
		}
	}
	return newDoc(LangTOML, b.String(), nil)
}

func tomlLine(kv KV) (string, error) {
	v := kv.Value
	if s, ok := v.(string); ok {
		var err error
		if v, err = value(s); err != nil {
			return "", err
		}
		if !utf8.ValidString(v.(string)) {
			return "", &Refusal{Why: "it is not UTF-8, which TOML cannot hold"}
		}
	}
	if !utf8.ValidString(kv.Key) {
		return "", &Refusal{Why: "a key is not UTF-8, which TOML cannot hold"}
	}
	var buf bytes.Buffer
	if err := toml.NewEncoder(&buf).Encode(map[string]any{kv.Key: v}); err != nil {
		return "", &Refusal{Why: "the TOML encoder refused it: " + err.Error()}
	}
	return escapeUnprintable(strings.TrimSuffix(buf.String(), "\n")), nil
}

// escapeUnprintable writes every character that is not printable as a
// TOML \u escape. BurntSushi/toml escapes the control characters; the
// format and bidi characters it writes as they are, and they can only be
// inside a quoted key or string, where a \u escape means the same.
func escapeUnprintable(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case unicode.IsPrint(r) || r == '\n':
			b.WriteRune(r)
		case r < 0x10000:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			fmt.Fprintf(&b, `\U%08X`, r)
		}
	}
	return b.String()
}
