package runnerconfig

import (
	"reflect"
	"slices"

	"github.com/BurntSushi/toml"
	"github.com/socialwebcomputer/doctor/runnerconfig/internal/common"
)

// Ignored returns every key of data that gitlab-runner drops without a word:
// the keys of md.Undecoded() (see Undecoded), and the keys inside
// [[runners.kubernetes.volumes.nfs]] tables that the nfs volume's own
// decoder does not take, which md.Undecoded() cannot report.
//
// The nfs volume decodes itself (common/config.go, v19.3.0,
// KubernetesNFS.UnmarshalTOML), and BurntSushi/toml then marks every key
// below the table as decoded. That decoder looks up exactly name,
// mount_path, sub_path, server and path, keeping each only when it is a
// string, and read_only, kept only when it is a boolean. So an nfs key is
// ignored when it is
//
//   - any other key, including a table and everything in it (bogus = 1,
//     [runners.kubernetes.volumes.nfs.extra]);
//   - one of those six spelt in another case (Name, ReadOnly): the lookup is
//     case-sensitive, unlike the struct fields everywhere else;
//   - one of them with a value of another type (read_only = "true",
//     server = 10): it is dropped, not a type error.
//
// When a dropped key is one of name, mount_path, server or path the decode
// then fails with "nfs volume: missing required fields: ..."; the key is
// listed all the same.
//
// The other volume tables (host_path, pvc, config_map, secret, empty_dir,
// csi) are plain structs: md.Undecoded() already reports their unknown keys.
//
// data is the text md was decoded from. The result is in file order, each
// place once; a key that cannot be located comes last with Line 0, as in
// Undecoded. When data is not valid TOML only md.Undecoded() is used. After
// a decode error md.Undecoded() also lists the keys the decoder had not
// reached; pass the zero toml.MetaData to get the nfs keys alone.
func Ignored(data []byte, md toml.MetaData) []Occurrence {
	out := Undecoded(data, md)
	extra := nfsIgnored(data)
	if len(extra) == 0 {
		return out
	}
	seen := map[string]bool{}
	for _, o := range out {
		seen[o.Path] = true
	}
	for _, o := range extra {
		if !seen[o.Path] {
			out = append(out, o)
		}
	}
	slices.SortStableFunc(out, func(a, b Occurrence) int {
		switch {
		case a.Line == b.Line:
			return 0
		case a.Line == 0:
			return 1
		case b.Line == 0:
			return -1
		case a.Line < b.Line:
			return -1
		}
		return 1
	})
	return out
}

// nfsKeys are the keys KubernetesNFS.UnmarshalTOML reads, with the kind of
// value it keeps (common/config.go, v19.3.0).
var nfsKeys = map[string]reflect.Kind{
	"name":       reflect.String,
	"mount_path": reflect.String,
	"sub_path":   reflect.String,
	"server":     reflect.String,
	"path":       reflect.String,
	"read_only":  reflect.Bool,
}

// nfsIgnored lists the keys inside nfs volumes that the nfs decoder drops.
func nfsIgnored(data []byte) []Occurrence {
	w := walkDocument(data)
	if w == nil {
		return nil
	}
	nfsType := reflect.TypeFor[common.KubernetesNFS]()
	type found struct {
		key  toml.Key
		path []comp
	}
	var dropped []found
	var add func(prefix []comp, m map[string]any, top bool)
	add = func(prefix []comp, m map[string]any, top bool) {
		for _, k := range sortedKeys(m) {
			v := m[k]
			p := appendComp(prefix, comp{name: k, idx: -1})
			if top {
				if kind, known := nfsKeys[k]; known && v != nil && reflect.TypeOf(v).Kind() == kind {
					continue // taken
				}
			}
			key := make(toml.Key, len(p))
			for i, c := range p {
				key[i] = c.name
			}
			dropped = append(dropped, found{key, p})
			switch sub := v.(type) {
			case map[string]any:
				add(p, sub, false)
			case []map[string]any:
				for i, e := range sub {
					add(withIndex(p, i), e, false)
				}
			case []any:
				for i, e := range sub {
					if t, ok := e.(map[string]any); ok {
						add(withIndex(p, i), t, false)
					}
				}
			}
		}
	}
	for _, d := range w.opaqueDefs {
		if d.typ != nfsType {
			continue
		}
		if m, ok := d.value.(map[string]any); ok {
			add(d.path, m, true)
		}
	}
	if len(dropped) == 0 {
		return nil
	}
	keys := make([]toml.Key, len(dropped))
	for i, f := range dropped {
		keys[i] = f.key
	}
	li := newLineIndex(data, keys)
	out := make([]Occurrence, 0, len(dropped))
	for _, f := range dropped {
		path := formatPath(f.path)
		out = append(out, Occurrence{Key: f.key, Line: li.line(path), Path: path})
	}
	return out
}
