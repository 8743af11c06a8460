package keep

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
)

// kindKey names a kind on the wire: its apiVersion and kind.
type kindKey struct{ apiVersion, kind string }

// schemaSize is what a schemaless (unstructured) object level costs
// decoded: its map, before its entries.
const schemaSize = 48

// compiled are the nodes of every kind and list kind of Kinds, built on
// first use.
var compiled = sync.OnceValues(func() (map[kindKey]*node, error) {
	out := map[kindKey]*node{}
	for _, k := range Kinds {
		if err := compileKind(out, k); err != nil {
			return nil, fmt.Errorf("keep: %s %s: %w", k.APIVersion, k.Kind, err)
		}
	}
	return out, nil
})

func compileKind(out map[kindKey]*node, k Kind) error {
	one, list := kindKey{k.APIVersion, k.Kind}, kindKey{k.APIVersion, k.Kind + "List"}
	var err error
	if k.Go == nil {
		if out[one], err = compileSchemaless(k.Kind, k.Fields); err != nil {
			return err
		}
		if k.Listed {
			items := make([]string, 0, len(k.Fields)+len(listMeta))
			items = append(items, listMeta...)
			for _, f := range k.Fields {
				items = append(items, "items[]."+f)
			}
			if out[list], err = compileSchemaless(k.Kind+"List", items); err != nil {
				return err
			}
			out[list].byJSON["items"].items = true
		}
	} else {
		if out[one], err = compile(reflect.TypeOf(k.Go), k.Fields); err != nil {
			return err
		}
		if k.List != nil {
			items := append([]string{}, listMeta...)
			for _, f := range k.Fields {
				items = append(items, "items[]."+f)
			}
			if out[list], err = compile(reflect.TypeOf(k.List), items); err != nil {
				return err
			}
			out[list].byJSON["items"].items = true
		}
	}
	if k.Kind == "Event" && out[list] != nil {
		out[list].byJSON["items"].budget = eventsBudget
	}
	for _, key := range []kindKey{one, list} {
		if n := out[key]; n != nil {
			countConditions(n, 0)
		}
	}
	// atPath calls set with the field at path in the object's schema and
	// in its list's, where each is kept.
	atPath := func(path string, set func(*field) error) error {
		for _, key := range []kindKey{one, list} {
			n := out[key]
			if n == nil {
				continue
			}
			p := path
			if key == list {
				p = "items[]." + path
			}
			f, err := n.find(p)
			if err != nil {
				return err
			}
			if err := set(f); err != nil {
				return err
			}
		}
		return nil
	}
	for path, fn := range k.Values {
		err := atPath(path, func(f *field) error {
			if f.shape != mapping {
				return fmt.Errorf("%s: Values applies to a map", path)
			}
			f.keepValue = fn
			return nil
		})
		if err != nil {
			return err
		}
	}
	for path, fn := range k.Transforms {
		if err := atPath(path, func(f *field) error { f.transform = fn; return nil }); err != nil {
			return err
		}
	}
	return nil
}

// countConditions sets the conditions budget on every conditions field
// below n.
func countConditions(n *node, depth int) {
	if n == nil || depth > 20 {
		return
	}
	for name, f := range n.byJSON {
		if name == "conditions" && f.repeated {
			f.budget = conditionsBudget
		}
		countConditions(f.child, depth+1)
	}
}

func compileSchemaless(name string, paths []string) (*node, error) {
	n := &node{name: name}
	for _, p := range paths {
		if err := n.add(p, p); err != nil {
			return nil, err
		}
	}
	return n, nil
}

// find is the field at a declared path.
func (n *node) find(path string) (*field, error) {
	head, rest, more := strings.Cut(path, ".")
	name, _ := strings.CutSuffix(head, "[]")
	f := n.byJSON[name]
	switch {
	case f == nil:
		return nil, fmt.Errorf("%s: no field %s", path, name)
	case more && f.child == nil:
		return nil, fmt.Errorf("%s: %s has no fields", path, name)
	case more:
		return f.child.find(rest)
	}
	return f, nil
}

// kindNode is the node of a kind, nil when doctor does not read it.
func kindNode(apiVersion, kind string) *node {
	m, err := compiled()
	if err != nil {
		panic(err) // the declaration itself is wrong: TestKindsCompile fails first
	}
	return m[kindKey{apiVersion, kind}]
}

// size is what one object of n costs decoded, before its strings.
func (n *node) size() int64 {
	if n.goType == nil {
		return schemaSize
	}
	return int64(n.goType.Size())
}
