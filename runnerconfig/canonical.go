package runnerconfig

import (
	"bytes"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/BurntSushi/toml"
)

// This file follows config.toml text the way BurntSushi/toml v1.6.0 decodes
// it into Config, to tell which key as written lands in which field:
//
//   - a key of a struct table selects the field whose toml name equals it,
//     else the first field whose name equals it case-insensitively
//     (decode.go, unifyStruct); a key that selects no field is undecoded;
//   - a key of a map (labels, feature_flags, ...) is kept as written;
//   - a type with its own UnmarshalTOML (the nfs volume, pull_policy) and an
//     `any` value (inside plugin_config) are opaque: nothing below them is
//     followed.
//
// The canonical path of a key is its path with every struct key replaced by
// the field's toml name, for example runners[0].executor for Executor in the
// first [[runners]]. Paths are written as Occurrence.Path writes them.

var (
	unmarshalerType = reflect.TypeFor[toml.Unmarshaler]()
	timeType        = reflect.TypeFor[time.Time]()
	durationType    = reflect.TypeFor[time.Duration]()
)

// tomlField is a struct field as BurntSushi/toml sees it.
type tomlField struct {
	name  string // the toml key: the tag's name, or the Go field name
	index int
	typ   reflect.Type
}

// fieldCache holds tomlFields by type: the walk asks for the same few
// dozen types at every key, and reflection is the cost of a cold run.
var fieldCache sync.Map // reflect.Type -> []tomlField

// tomlFields lists t's fields in declaration order. The types in this
// package have no embedded structs, so no promotion rules are needed.
func tomlFields(t reflect.Type) []tomlField {
	if v, ok := fieldCache.Load(t); ok {
		return v.([]tomlField)
	}
	out := fieldsOf(t)
	fieldCache.Store(t, out)
	return out
}

func fieldsOf(t reflect.Type) []tomlField {
	var out []tomlField
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name := strings.Split(f.Tag.Get("toml"), ",")[0]
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, tomlField{name: name, index: i, typ: f.Type})
	}
	return out
}

// resolveField picks the field key decodes into, exactly as unifyStruct
// does: an exact match wins, else the first case-insensitive match.
func resolveField(t reflect.Type, key string) (tomlField, bool) {
	var found tomlField
	ok := false
	for _, f := range tomlFields(t) {
		if f.name == key {
			return f, true
		}
		if !ok && strings.EqualFold(f.name, key) {
			found, ok = f, true
		}
	}
	return found, ok
}

// selfDecoding reports whether the decoder hands a value of type t to the
// type's own UnmarshalTOML, which sees the raw value and after which the
// library marks every key below it as decoded.
func selfDecoding(t reflect.Type) bool {
	return t.Implements(unmarshalerType) || reflect.PointerTo(t).Implements(unmarshalerType)
}

// opaque reports whether the decoder does not match the keys below a value
// of type t to fields: a self-decoding type, time.Time and time.Duration
// (scalars), and `any` (stored as parsed).
func opaque(t reflect.Type) bool {
	return selfDecoding(t) || t == timeType || t == durationType || t.Kind() == reflect.Interface
}

// keyDef is one key as written in the text, at one place.
type keyDef struct {
	key   toml.Key // as written, without indexes (what the scanner matches)
	path  []comp   // as written, with indexes
	canon []comp   // canonical, with indexes
	typ   reflect.Type
	value any
	line  int
}

func (d *keyDef) pathString() string  { return formatPath(d.path) }
func (d *keyDef) canonString() string { return formatPath(d.canon) }

// canonKey is the canonical key without indexes.
func (d *keyDef) canonKey() toml.Key {
	k := make(toml.Key, len(d.canon))
	for i, c := range d.canon {
		k[i] = c.name
	}
	return k
}

// walker collects every key of a parsed document that the decoder matches to
// a field, map entry or custom decoder, with its canonical path.
type walker struct {
	defs []*keyDef
	// opaqueDefs are the values handed to a custom decoder (UnmarshalTOML):
	// each nfs volume table, for instance.
	opaqueDefs []*keyDef
}

func appendComp(path []comp, c comp) []comp {
	return append(slices.Clip(path), c)
}

func withIndex(path []comp, i int) []comp {
	p := slices.Clone(path)
	p[len(p)-1].idx = i
	return p
}

func (w *walker) value(v any, t reflect.Type, path, canon []comp) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if opaque(t) {
		if selfDecoding(t) && len(path) > 0 {
			w.opaqueDefs = append(w.opaqueDefs, &keyDef{path: path, canon: canon, typ: t, value: v})
		}
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		for _, k := range sortedKeys(m) {
			f, ok := resolveField(t, k)
			if !ok {
				continue // undecoded: MetaData.Undecoded reports it
			}
			w.key(m[k], f.typ, appendComp(path, comp{name: k, idx: -1}), appendComp(canon, comp{name: f.name, idx: -1}))
		}
	case reflect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		for _, k := range sortedKeys(m) {
			c := comp{name: k, idx: -1}
			w.key(m[k], t.Elem(), appendComp(path, c), appendComp(canon, c))
		}
	case reflect.Slice, reflect.Array:
		if len(path) == 0 {
			return
		}
		elem := t.Elem()
		for elem.Kind() == reflect.Pointer {
			elem = elem.Elem()
		}
		switch s := v.(type) {
		case []map[string]any:
			for i, e := range s {
				w.value(e, elem, withIndex(path, i), withIndex(canon, i))
			}
		case []any:
			for i, e := range s {
				if _, isTable := e.(map[string]any); isTable || opaque(elem) {
					w.value(e, elem, withIndex(path, i), withIndex(canon, i))
				}
			}
		}
	}
}

func (w *walker) key(v any, t reflect.Type, path, canon []comp) {
	k := make(toml.Key, len(path))
	for i, c := range path {
		k[i] = c.name
	}
	w.defs = append(w.defs, &keyDef{key: k, path: path, canon: canon, typ: t, value: v})
	w.value(v, t, path, canon)
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// lineIndex finds the lines of keys by their Occurrence.Path.
type lineIndex map[string]int

// newLineIndex scans data once for every key in keys.
func newLineIndex(data []byte, keys []toml.Key) lineIndex {
	idx := lineIndex{}
	if len(keys) == 0 {
		return idx
	}
	m := newMatcher(keys, false)
	scan(data, m)
	for _, o := range m.out {
		if _, ok := idx[o.Path]; !ok {
			idx[o.Path] = o.Line
		}
	}
	return idx
}

// line returns the line of the key at path. The scanner gives a key whose
// value is an array of tables ([[k]]) the path of its first element, k[0].
func (li lineIndex) line(path string) int {
	if l, ok := li[path]; ok {
		return l
	}
	return li[path+"[0]"]
}

// parseGeneric parses data as the decoder does, into the library's generic
// form (the map it unifies with Config).
func parseGeneric(data []byte) (map[string]any, bool) {
	var m map[string]any
	if _, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&m); err != nil {
		return nil, false
	}
	return m, true
}

// walkDocument parses data and walks it against Config, filling in the line
// of every definition. It returns nil when data is not valid TOML.
func walkDocument(data []byte) *walker {
	m, ok := parseGeneric(data)
	if !ok {
		return nil
	}
	w := &walker{}
	w.value(m, reflect.TypeFor[Config](), nil, nil)
	keys := make([]toml.Key, 0, len(w.defs))
	for _, d := range w.defs {
		keys = append(keys, d.key)
	}
	li := newLineIndex(data, keys)
	for _, d := range w.defs {
		d.line = li.line(d.pathString())
	}
	return w
}

// LocatePath returns the line on which the key at the canonical path is
// defined in data, matching struct keys case-insensitively as the decoder
// does: LocatePath(data, "runners[1].machine.autoscaling[0].Periods") finds
// `periods = [...]` in the first [[runners.machine.autoscaling]] of the second
// [[runners]]. path is written as Occurrence.Path writes it, with the
// runner's own spelling of each field (Refusal.Path is such a path). A key
// that several spellings define (see CaseDuplicates) gives the first line.
// It returns 0 when the key is not in data or data is not valid TOML.
func LocatePath(data []byte, path string) int {
	w := walkDocument(data)
	if w == nil {
		return 0
	}
	line := 0
	for _, d := range w.defs {
		if d.line > 0 && d.canonString() == path && (line == 0 || d.line < line) {
			line = d.line
		}
	}
	return line
}
