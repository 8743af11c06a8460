package keep

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// A node is what is kept of one message type: its allowed fields, by JSON
// name and by protobuf field number, each with what is kept below it.
type node struct {
	name   string       // the Go type, or the kind's path for schemaless ones
	goType reflect.Type // nil for a kind without Go types (a CRD read as unstructured)
	byJSON map[string]*field
	byNum  map[fieldNum]*field
}

// shape is how a kept field's value is encoded and walked.
type shape int

const (
	scalar  shape = iota // string, bool, number, []byte: one value
	opaque               // metav1.Time, resource.Quantity, ...: kept whole, one value
	message              // a struct: walked by its node
	mapping              // map[K]V with scalar or opaque V: kept whole
	anyJSON              // a schemaless kind's leaf: any JSON value, kept whole
)

// field is one allowed field of a node.
type field struct {
	json     string
	idx      int // its place among its node's fields, for counting
	num      fieldNum
	wire     wireType // the protobuf wire type of one value
	shape    shape
	repeated bool  // a slice (not []byte): one entry per element
	items    bool  // the items of a list, bounded by the request's limit
	keysOnly bool  // a mapping of which only the keys are kept
	child    *node // shape message
	// elemSize is what one kept element costs client-go in memory, beyond
	// the bytes of its strings: a slice slot, a pointed-to struct, a map
	// entry. Zero for a struct held by value (its parent's size holds it).
	elemSize int64
	// valOpaque says a mapping's values are messages kept whole
	// (resource.Quantity), not strings.
	valOpaque bool
	// transform, when set, replaces a kept string (cloud-init userData
	// becomes the users a check reads of it).
	transform func(string) string
	// keepValue, when set, says of a map's key whether its value is kept:
	// the others keep their key and an empty value (labels).
	keepValue func(key string) bool
	// budget, when set, is the run's count its elements go to (an event
	// list's items, any conditions).
	budget budget
}

// mapEntryOverhead is what a Go map spends on one entry beyond its key
// and value: its share of a bucket's tophash, overflow and load slack.
const mapEntryOverhead = 16

// compile builds the node of a Go type from the allowed paths, each a
// JSON path relative to the type ("spec.containers[].image").
func compile(t reflect.Type, paths []string) (*node, error) {
	root := &node{name: t.String(), goType: t}
	for _, p := range paths {
		if err := root.add(p, p); err != nil {
			return nil, err
		}
	}
	return root, nil
}

func newNode(t reflect.Type) *node {
	return &node{name: t.String(), goType: t, byJSON: map[string]*field{}, byNum: map[fieldNum]*field{}}
}

// add allows one path below n; whole is the path as declared, for errors.
func (n *node) add(path, whole string) error {
	if n.byJSON == nil {
		n.byJSON, n.byNum = map[string]*field{}, map[fieldNum]*field{}
	}
	head, rest, more := strings.Cut(path, ".")
	name, repeated := strings.CutSuffix(head, "[]")
	name, keysOnly := strings.CutSuffix(name, "{keys}")
	name, presence := strings.CutSuffix(name, "{}")
	if n.goType == nil {
		return n.addSchemaless(name, rest, more, repeated, whole)
	}
	sf, err := jsonField(n.goType, name)
	if err != nil {
		return fmt.Errorf("%s: %w", whole, err)
	}
	f := n.byJSON[name]
	if f == nil {
		if f, err = newField(sf, name); err != nil {
			return fmt.Errorf("%s: %w", whole, err)
		}
		f.idx = len(n.byJSON)
		n.byJSON[name] = f
		n.byNum[f.num] = f
	}
	if list := f.repeated && f.shape != mapping; list != repeated {
		if list {
			return fmt.Errorf("%s: %s is a list: write %s[]", whole, name, name)
		}
		return fmt.Errorf("%s: %s is not a list: write %s", whole, name, name)
	}
	if keysOnly {
		if f.shape != mapping {
			return fmt.Errorf("%s: {keys} applies to a map, and %s is not one", whole, name)
		}
		f.keysOnly = true
	}
	switch {
	case presence && (more || f.shape != message):
		return fmt.Errorf("%s: {} ends a path at a struct whose presence alone is read", whole)
	case presence:
		return nil // kept empty: its node has no fields
	case more && f.shape != message:
		return fmt.Errorf("%s: %s has no fields below it", whole, name)
	case more:
		return f.child.add(rest, whole)
	case f.shape == message:
		return fmt.Errorf("%s: %s is a struct: name the fields of it that are read, or write %s{} if only its presence is", whole, name, name)
	}
	return nil
}

// addSchemaless allows a path of a kind that has no Go type: every object
// level is a node, every leaf any JSON value.
func (n *node) addSchemaless(name, rest string, more, repeated bool, whole string) error {
	f := n.byJSON[name]
	if f == nil {
		f = &field{json: name, idx: len(n.byJSON), shape: anyJSON, repeated: repeated, elemSize: 16 + mapEntryOverhead}
		n.byJSON[name] = f
	}
	if f.repeated != repeated {
		return fmt.Errorf("%s: %s is declared both as a list and not", whole, name)
	}
	if !more {
		if f.shape == message {
			return fmt.Errorf("%s: %s is both a leaf and has fields", whole, name)
		}
		return nil
	}
	if f.child == nil {
		// A path through name: an object, not a leaf.
		f.shape, f.child = message, &node{name: n.name + "." + name}
	}
	return f.child.add(rest, whole)
}

// jsonField finds the struct field whose JSON name is name, looking into
// inline (embedded) structs as encoding/json does.
func jsonField(t reflect.Type, name string) (reflect.StructField, error) {
	for i := range t.NumField() {
		sf := t.Field(i)
		tag, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if tag == "-" {
			continue
		}
		if tag == "" && sf.Anonymous && strings.Contains(sf.Tag.Get("json"), "inline") {
			if inner, err := jsonField(sf.Type, name); err == nil {
				return inner, nil
			}
			continue
		}
		if tag == name {
			return sf, nil
		}
	}
	return reflect.StructField{}, fmt.Errorf("%s has no field %q", t, name)
}

// jsonUnmarshaler is what a Go type that decodes itself from JSON has:
// metav1.Time, resource.Quantity and their kind are kept whole.
var jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()

// newField reads a struct field's shape from its type and its protobuf
// tag ("bytes,3,rep,name=containers").
func newField(sf reflect.StructField, name string) (*field, error) {
	tag := sf.Tag.Get("protobuf")
	parts := strings.Split(tag, ",")
	if len(parts) < 3 {
		return nil, fmt.Errorf("%s has no protobuf tag", sf.Name)
	}
	num, err := strconv.Atoi(parts[1])
	if err != nil {
		return nil, fmt.Errorf("%s: protobuf tag %q: %v", sf.Name, tag, err)
	}
	// Only the number is read from the tag: its wire type and "rep" are
	// not always what the generated code writes (PodSpec.priority says
	// "bytes" and is a varint; SubjectRulesReviewStatus.incomplete says
	// "rep"). The Go type says it.
	f := &field{json: name, num: fieldNum(num)}
	t := sf.Type
	pointer := false
	if t.Kind() == reflect.Pointer {
		t, pointer = t.Elem(), true
	}
	switch {
	case t.Kind() == reflect.Slice && t.Elem().Kind() != reflect.Uint8:
		f.repeated = true
		elem := t.Elem()
		f.elemSize = int64(elem.Size())
		if err := f.setShape(elem, false); err != nil {
			return nil, fmt.Errorf("%s: %w", sf.Name, err)
		}
	case t.Kind() == reflect.Map:
		f.shape, f.repeated, f.wire = mapping, true, bytesType
		f.elemSize = int64(t.Key().Size()+t.Elem().Size()) + mapEntryOverhead
		val := t.Elem()
		f.valOpaque = val.Kind() == reflect.Struct
		if f.valOpaque && !reflect.PointerTo(val).Implements(jsonUnmarshaler) {
			return nil, fmt.Errorf("%s: a map of %s is not kept whole", sf.Name, val)
		}
	default:
		if pointer {
			f.elemSize = int64(t.Size())
		}
		if err := f.setShape(t, pointer); err != nil {
			return nil, fmt.Errorf("%s: %w", sf.Name, err)
		}
	}
	return f, nil
}

// setShape sets a field's shape from the type of one of its values.
func (f *field) setShape(t reflect.Type, pointer bool) error {
	switch {
	case reflect.PointerTo(t).Implements(jsonUnmarshaler):
		f.shape = opaque
	case t.Kind() == reflect.Struct:
		f.shape, f.child = message, newNode(t)
	case t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice && t.Elem().Kind() != reflect.Uint8 || t.Kind() == reflect.Map || t.Kind() == reflect.Interface:
		return fmt.Errorf("%s is not a field doctor keeps", t)
	default:
		f.shape = scalar
	}
	switch {
	case f.shape != scalar:
		f.wire = bytesType
	case t.Kind() == reflect.String || t.Kind() == reflect.Slice:
		f.wire = bytesType
	case t.Kind() == reflect.Float64:
		f.wire = fixed64Type
	case t.Kind() == reflect.Float32:
		f.wire = fixed32Type
	default:
		f.wire = varintType // bool and the integers: k8s has no zigzag fields
	}
	return nil
}
