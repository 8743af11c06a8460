package fixcode

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// Manifest renders Kubernetes objects (k8s.io/api types) as the YAML
// documents kubectl apply reads, one per object, each with the
// apiVersion and kind its Go type has (kinds). Names are
// checked first (NamespaceName, ObjectName); every string the objects
// hold is then data of the YAML encoder (sigs.k8s.io/yaml), which quotes
// what needs quoting, so no value adds a document, a key or an object.
func Manifest(objs ...runtime.Object) Doc {
	var docs []string
	for _, o := range objs {
		text, err := manifestDoc(o)
		if err != nil {
			return newDoc(LangManifest, "", err)
		}
		docs = append(docs, text)
	}
	return newDoc(LangManifest, strings.Join(docs, "---\n"), nil)
}

// kinds are the API groups a fix writes objects of: the runner's Role and
// RoleBinding, the pause pods' PriorityClass, a namespace or a service
// account. Its own scheme, not client-go's, which would link every group.
// Built at the first manifest, not at start: its 900 allocations cost
// every run 0.4 to 0.6 ms before main (GODEBUG=inittrace=1), and a healthy
// run prints no manifest.
var kinds = sync.OnceValue(func() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, rbacv1.AddToScheme, schedulingv1.AddToScheme} {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	return s
})

func manifestDoc(o runtime.Object) (string, error) {
	gvks, _, err := kinds().ObjectKinds(o)
	if err != nil || len(gvks) == 0 {
		return "", fmt.Errorf("fixcode: %T is not a kind a fix writes (core, rbac, scheduling)", o)
	}
	m, err := meta.Accessor(o)
	if err != nil {
		return "", err
	}
	if err := ObjectName(m.GetName()); err != nil {
		return "", err
	}
	if ns := m.GetNamespace(); ns != "" {
		if err := NamespaceName(ns); err != nil {
			return "", err
		}
	}
	o = o.DeepCopyObject()
	o.GetObjectKind().SetGroupVersionKind(gvks[0])
	if err := taintStrings(reflect.ValueOf(o), true); err != nil {
		return "", err
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
	if err != nil {
		return "", err
	}
	// Noise to a reader, nothing kubectl needs: the null creationTimestamp
	// and the empty status typed objects carry.
	unstructured.RemoveNestedField(u, "metadata", "creationTimestamp")
	if st, ok := u["status"].(map[string]any); ok && len(st) == 0 {
		delete(u, "status")
	}
	// YAML's emitter writes bidi and other format characters raw, in
	// block and quoted scalars alike (it deems them printable): a string
	// holding one is written as a double-quoted scalar of escapes.
	quoted := map[string]string{}
	u = quoteUnprintable(u, quoted).(map[string]any)
	b, err := yaml.Marshal(u)
	if err != nil {
		return "", &Refusal{Why: "the YAML encoder refused it: " + err.Error()}
	}
	text := string(b)
	for stand, q := range quoted {
		if strings.Count(text, stand) != 1 {
			// A value spells the stand-in: refused, never confused.
			return "", &Refusal{Why: "it holds text doctor uses while encoding a manifest"}
		}
		text = strings.Replace(text, stand, q, 1)
	}
	return text, nil
}

// quoteUnprintable replaces, in an object's unstructured form, every
// string a terminal would not show as it is (printable) with a stand-in
// the YAML encoder writes bare, and records the double-quoted scalar that
// replaces the stand-in in its output.
func quoteUnprintable(v any, quoted map[string]string) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = quoteUnprintable(e, quoted)
		}
	case []any:
		for i, e := range v {
			v[i] = quoteUnprintable(e, quoted)
		}
	case string:
		if printable(v, "\n") != nil {
			stand := fmt.Sprintf("fixcode-escaped-value-%06d-end", len(quoted))
			quoted[stand] = yamlQuoted(v)
			return stand
		}
	}
	return v
}

// yamlQuoted is s as a YAML double-quoted scalar on one line: \ and "
// escaped, every character that is not printable as \n, \uXXXX or
// \UXXXXXXXX (YAML 1.2, 5.7 Escaped Characters). s is UTF-8.
func yamlQuoted(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case unicode.IsPrint(r):
			b.WriteRune(r)
		case r <= 0xFFFF:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			fmt.Fprintf(&b, `\U%08X`, r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// taintStrings passes every string of v through value (the taint of the
// hostile-value tests and the secret guard), but the apiVersion and kind,
// which say what the object is.
func taintStrings(v reflect.Value, top bool) error {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			return taintStrings(v.Elem(), top)
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			f := v.Type().Field(i)
			if !f.IsExported() || (top && f.Name == "TypeMeta") {
				continue
			}
			if err := taintStrings(v.Field(i), false); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			if err := taintStrings(v.Index(i), false); err != nil {
				return err
			}
		}
	case reflect.Map:
		if v.Len() == 0 {
			return nil
		}
		out := reflect.MakeMapWithSize(v.Type(), v.Len())
		for _, k := range v.MapKeys() {
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(v.MapIndex(k))
			if err := taintStrings(e, false); err != nil {
				return err
			}
			out.SetMapIndex(k, e)
		}
		v.Set(out)
	case reflect.String:
		if !v.CanSet() || v.Len() == 0 {
			// An empty string holds no value; most are fields left out
			// (omitempty), which a taint would write.
			return nil
		}
		s, err := value(v.String())
		if err != nil {
			return err
		}
		if !utf8.ValidString(s) {
			// JSON would turn it into U+FFFD: another name than the one meant.
			return &Refusal{Why: "it is not UTF-8, which a manifest cannot hold"}
		}
		v.SetString(s)
	}
	return nil
}
