// Package docshape says what a document a fix prints is, as the tool that
// reads it reads it: a manifest's objects (kubectl's YAML decoder), a
// drop-in's directives (systemd's word splitting and C unescaping), a TOML
// fragment's keys (the runner's TOML decoder). Each is returned as one
// canonical text, every string passed through a function first (a test
// strips its hostile marker with it), so that two renderings of one fix
// compare equal exactly when they mean the same.
package docshape

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// Manifest is the objects of a multi-document YAML manifest: their count,
// and each object whole (kind, names, every field).
func Manifest(text string, f func(string) string) (string, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(text), 4096)
	var docs []any
	for {
		var obj map[string]any
		if err := dec.Decode(&obj); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return "", err
		}
		if obj != nil {
			docs = append(docs, mapStrings(obj, f))
		}
	}
	b, err := json.Marshal(docs)
	return fmt.Sprintf("%d objects: %s", len(docs), b), err
}

// Objects are the objects of a multi-document YAML manifest as kubectl's
// decoder reads them, empty documents left out.
func Objects(text string) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(text), 4096)
	var out []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, err
		}
		if len(u.Object) > 0 {
			out = append(out, u)
		}
	}
}

// TOML is the keys and values of a fragment of config.toml.
func TOML(text string, f func(string) string) (string, error) {
	var v map[string]any
	if _, err := toml.Decode(text, &v); err != nil {
		return "", err
	}
	b, err := json.Marshal(mapStrings(v, f))
	return string(b), err
}

// Unit is a unit file's sections and directives: each "Section.Key" and
// the words of its value as systemd reads an Environment=-like line.
func Unit(text string, f func(string) string) (string, error) {
	var out []string
	section := ""
	for i, line := range strings.Split(text, "\n") {
		t := strings.TrimSpace(line)
		switch {
		case t == "" || strings.HasPrefix(t, "#") || strings.HasPrefix(t, ";"):
			continue
		case strings.HasPrefix(t, "[") && strings.HasSuffix(t, "]"):
			section = t[1 : len(t)-1]
			continue
		case strings.HasSuffix(t, `\`):
			return "", fmt.Errorf("line %d continues onto the next", i+1)
		}
		key, value, ok := strings.Cut(t, "=")
		if !ok {
			return "", fmt.Errorf("line %d is no assignment: %q", i+1, t)
		}
		words, err := SystemdWords(value)
		if err != nil {
			return "", fmt.Errorf("line %d: %v", i+1, err)
		}
		for j := range words {
			words[j] = f(words[j])
		}
		b, _ := json.Marshal(words)
		out = append(out, section+"."+strings.TrimSpace(key)+"="+string(b))
	}
	return strings.Join(out, "\n"), nil
}

// SystemdWords splits a value as extract_first_word(EXTRACT_CUNESCAPE|
// EXTRACT_UNQUOTE) does (src/basic/extract-word.c, systemd v252), then
// resolves %% as unit_env_printf does; any other specifier is an error
// (a fix never writes one).
func SystemdWords(s string) ([]string, error) {
	var words []string
	for {
		s = strings.TrimLeft(s, " \t\n")
		if s == "" {
			return words, nil
		}
		var b strings.Builder
		quote := byte(0)
		for len(s) > 0 {
			c := s[0]
			if quote == 0 && strings.IndexByte(" \t\n", c) >= 0 {
				break
			}
			s = s[1:]
			switch {
			case c == '\\':
				if s == "" {
					return nil, errors.New("a trailing backslash")
				}
				e := s[0]
				s = s[1:]
				switch e {
				case 'n':
					b.WriteByte('\n')
				case 't':
					b.WriteByte('\t')
				case '\\', '"', '\'', ' ':
					b.WriteByte(e)
				case 'u', 'U':
					n := 4
					if e == 'U' {
						n = 8
					}
					if len(s) < n {
						return nil, errors.New("a short \\u escape")
					}
					var r rune
					for i := 0; i < n; i++ {
						d := strings.IndexByte("0123456789abcdef", s[i]|0x20)
						if d < 0 {
							return nil, errors.New("a bad \\u escape")
						}
						r = r*16 + rune(d)
					}
					s = s[n:]
					b.WriteRune(r)
				default:
					return nil, errors.New("an escape this reading does not know: \\" + string(e))
				}
			case quote == 0 && (c == '"' || c == '\''):
				quote = c
			case quote != 0 && c == quote:
				quote = 0
			case c == '%':
				if s == "" || s[0] != '%' {
					return nil, errors.New("a specifier")
				}
				s = s[1:]
				b.WriteByte('%')
			default:
				b.WriteByte(c)
			}
		}
		if quote != 0 {
			return nil, errors.New("an unclosed quote")
		}
		words = append(words, b.String())
	}
}

// mapStrings is v with every string (and map key) passed through f, maps
// turned into sorted key/value lists so the JSON is canonical.
func mapStrings(v any, f func(string) string) any {
	switch v := v.(type) {
	case string:
		return f(v)
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		out := make([]any, 0, 2*len(keys))
		for _, k := range keys {
			out = append(out, f(k), mapStrings(v[k], f))
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = mapStrings(e, f)
		}
		return out
	case []map[string]any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = mapStrings(e, f)
		}
		return out
	}
	return v
}
