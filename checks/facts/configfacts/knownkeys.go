package configfacts

import (
	"reflect"
	"strings"

	"github.com/socialwebcomputer/doctor/runnerconfig"
)

// KnownKeys lists the keys the runner reads in the table at path (e.g.
// runners.kubernetes), from the toml tags of the types that mirror its own.
func KnownKeys(path []string) []string {
	t := reflect.TypeOf(runnerconfig.Config{})
	for _, part := range path {
		t = elem(t)
		if t.Kind() != reflect.Struct {
			return nil
		}
		f, ok := fieldByKey(t, part)
		if !ok {
			return nil
		}
		t = f.Type
	}
	t = elem(t)
	if t.Kind() != reflect.Struct {
		return nil
	}
	var out []string
	for i := 0; i < t.NumField(); i++ {
		if k := tomlKey(t.Field(i)); k != "" {
			out = append(out, k)
		}
	}
	return out
}

func elem(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
		t = t.Elem()
	}
	return t
}

func fieldByKey(t reflect.Type, key string) (reflect.StructField, bool) {
	for i := 0; i < t.NumField(); i++ {
		if f := t.Field(i); strings.EqualFold(tomlKey(f), key) {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

func tomlKey(f reflect.StructField) string {
	if !f.IsExported() {
		return ""
	}
	tag, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
	if tag == "-" {
		return ""
	}
	if tag == "" {
		return f.Name
	}
	return tag
}
