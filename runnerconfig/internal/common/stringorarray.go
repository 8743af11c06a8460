package common

import (
	"fmt"
	"reflect"
)

// StringOrArray is the type of pull_policy in [runners.docker] and
// [runners.kubernetes]: config.toml may give a single string or an array of
// strings. It decodes exactly as gitlab-runner's type of the same name:
//
//   - a string becomes a one-element list;
//   - an array of strings is appended element by element;
//   - anything else, including a non-string element, fails with
//     "cannot load value of type T into a StringOrArray", where T is the Go
//     type BurntSushi/toml produced (int64, bool, float64, time.Time,
//     map[string]interface {}, []map[string]interface {}, ...).
//
// BurntSushi/toml wraps that error as
// `toml: line N (last key "runners.kubernetes.pull_policy"): cannot load ...`.
type StringOrArray []string

// UnmarshalTOML implements toml.Unmarshaler.
func (p *StringOrArray) UnmarshalTOML(data any) error {
	switch v := data.(type) {
	case string:
		*p = StringOrArray{v}
	case []any:
		for _, item := range v {
			s, ok := item.(string)
			if !ok {
				return fmt.Errorf("cannot load value of type %s into a StringOrArray", typeName(item))
			}
			*p = append(*p, s)
		}
	default:
		return fmt.Errorf("cannot load value of type %s into a StringOrArray", typeName(v))
	}
	return nil
}

// typeName is reflect.TypeOf(v).String(), which is what the runner prints,
// made safe for a nil interface (which BurntSushi/toml never passes).
func typeName(v any) string {
	t := reflect.TypeOf(v)
	if t == nil {
		return "<nil>"
	}
	return t.String()
}
