package bundle

import (
	"reflect"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/socialwebcomputer/doctor/runnerconfig"
)

// configField is the runner's setting a config.toml key sets: the name of
// the Go field of runnerconfig's types (which mirror the runner's own) the
// decoder puts it in, found as BurntSushi/toml finds it (the toml tag,
// else the field's name, case-insensitively; embedded structs flattened).
// Under a map (node_selector, plugin_config) the rest of the key names map
// entries: the setting is the map's field. ok is false for a key the types
// do not have.
func configField(key toml.Key) (field string, ok bool) {
	t := reflect.TypeOf(runnerconfig.Config{})
	for _, name := range key {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return field, field != ""
		}
		f, found := tomlField(t, name)
		if !found {
			return "", false
		}
		field, t = f.Name, f.Type
	}
	return field, field != ""
}

// tomlField is the field of struct type t that key name decodes into.
func tomlField(t reflect.Type, name string) (reflect.StructField, bool) {
	var fold reflect.StructField
	folded := false
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
		if tag == "-" {
			continue
		}
		if f.Anonymous && tag == "" {
			inner := f.Type
			if inner.Kind() == reflect.Pointer {
				inner = inner.Elem()
			}
			if inner.Kind() == reflect.Struct {
				if g, ok := tomlField(inner, name); ok {
					return g, true
				}
			}
			continue
		}
		if !f.IsExported() {
			continue
		}
		key := tag
		if key == "" {
			key = f.Name
		}
		if key == name {
			return f, true
		}
		if !folded && strings.EqualFold(key, name) {
			fold, folded = f, true
		}
	}
	return fold, folded
}

// configFieldRead says a check reads the setting in field: its name is
// selected somewhere in the checks' or runnerconfig's code
// (TestConfigFieldsReadAreListed keeps the list in step with the source).
// A field no code selects is read by no check, and its strings become
// stand-ins described as the values were.
func configFieldRead(field string) bool { return configFieldsRead[field] }
