package keep

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/constant"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// The allow-list is derived from the code, and held to it both ways by
// type-checking every package of checks/ and internal/ (their non-test
// files) and collecting each field of an API type the code reads:
//
//   - every field read is kept (the allow-list is sufficient as written,
//     not only on the scenarios a test runs), or is one doctor only reads
//     on objects it builds itself;
//   - every field kept is read somewhere, or is read by a library or
//     through an interface (no field is kept "just in case").

// builtOnly are fields read only on objects doctor builds: the job pod of
// config.toml (runnerconfig/jobpod: namespace-quota and job-identity weigh
// it), a fix's manifest; never on an object of the cluster.
var builtOnly = map[string]string{
	"k8s.io/api/core/v1.Capabilities.Add":                  "jobpod",
	"k8s.io/api/core/v1.Capabilities.Drop":                 "jobpod",
	"k8s.io/api/core/v1.Container.SecurityContext":         "job-identity: the built pod's contexts, as evidence",
	"k8s.io/api/core/v1.PodSpec.SecurityContext":           "job-identity: the built pod's context, as evidence",
	"k8s.io/api/core/v1.PodSpec.ImagePullSecrets":          "jobpod",
	"k8s.io/api/core/v1.PodSecurityContext.SELinuxOptions": "jobpod",
	"k8s.io/api/core/v1.SecurityContext.SELinuxOptions":    "jobpod",
	"k8s.io/api/core/v1.SecurityContext.ProcMount":         "jobpod",
	"k8s.io/api/core/v1.SeccompProfile.LocalhostProfile":   "jobpod",
	"k8s.io/api/core/v1.AppArmorProfile.LocalhostProfile":  "jobpod",
	// job-admission's dry run names the pod it sent by its generateName
	// (cluster.WithoutGeneratedSuffix): the pod jobpod.AsCreated built.
	"k8s.io/apimachinery/pkg/apis/meta/v1.ObjectMeta.GenerateName": "jobpod.AsCreated's pod, sent as a dry run",
	// runner-rbac's fix builds the Role it prints (internal/fixcode renders
	// it), from the access reviews' answers; no PolicyRule of the cluster
	// is read.
	"k8s.io/api/rbac/v1.PolicyRule.APIGroups": "runner-rbac's fix",
	"k8s.io/api/rbac/v1.PolicyRule.Resources": "runner-rbac's fix",
	"k8s.io/api/rbac/v1.PolicyRule.Verbs":     "runner-rbac's fix",
}

// readElsewhere are kept fields no selector in doctor's code reads, by
// kind and path: a library reads them, or doctor through an interface or
// a method. Schemaless kinds (read as unstructured) are not checked here.
var readElsewhere = map[string]string{
	"Pod metadata.resourceVersion":   "trace, through meta.Accessor",
	"Node metadata.resourceVersion":  "trace, through meta.Accessor",
	"Event metadata.resourceVersion": "trace, through meta.Accessor",
	"Node spec.taints[].key":         "node-local-dns, through Taint.ToString",
	"Node spec.taints[].effect":      "node-local-dns, through Taint.ToString",
	"ValidatingWebhookConfiguration webhooks[].namespaceSelector.matchExpressions[].key":      "metav1.LabelSelectorAsSelector (cluster.Webhook.matches)",
	"ValidatingWebhookConfiguration webhooks[].namespaceSelector.matchExpressions[].operator": "metav1.LabelSelectorAsSelector (cluster.Webhook.matches)",
	"ValidatingWebhookConfiguration webhooks[].namespaceSelector.matchExpressions[].values[]": "metav1.LabelSelectorAsSelector (cluster.Webhook.matches)",
	"ValidatingWebhookConfiguration webhooks[].objectSelector.matchExpressions[].key":         "metav1.LabelSelectorAsSelector (cluster.Webhook.matches)",
	"ValidatingWebhookConfiguration webhooks[].objectSelector.matchExpressions[].operator":    "metav1.LabelSelectorAsSelector (cluster.Webhook.matches)",
	"ValidatingWebhookConfiguration webhooks[].objectSelector.matchExpressions[].values[]":    "metav1.LabelSelectorAsSelector (cluster.Webhook.matches)",
	"MutatingWebhookConfiguration webhooks[].namespaceSelector.matchExpressions[].key":        "metav1.LabelSelectorAsSelector (cluster.Webhook.matches)",
	"MutatingWebhookConfiguration webhooks[].namespaceSelector.matchExpressions[].operator":   "metav1.LabelSelectorAsSelector (cluster.Webhook.matches)",
	"MutatingWebhookConfiguration webhooks[].namespaceSelector.matchExpressions[].values[]":   "metav1.LabelSelectorAsSelector (cluster.Webhook.matches)",
	"MutatingWebhookConfiguration webhooks[].objectSelector.matchExpressions[].key":           "metav1.LabelSelectorAsSelector (cluster.Webhook.matches)",
	"MutatingWebhookConfiguration webhooks[].objectSelector.matchExpressions[].operator":      "metav1.LabelSelectorAsSelector (cluster.Webhook.matches)",
	"MutatingWebhookConfiguration webhooks[].objectSelector.matchExpressions[].values[]":      "metav1.LabelSelectorAsSelector (cluster.Webhook.matches)",
	"Status status":                    "client-go: a Status of Failure is an error",
	"Status message":                   "apierrors.StatusError.Error",
	"Status reason":                    "apierrors.IsNotFound, IsForbidden and the like",
	"Status details.name":              "apierrors",
	"Status details.group":             "apierrors",
	"Status details.kind":              "apierrors",
	"Status details.retryAfterSeconds": "client-go's retry (SuggestsClientDelay)",
}

type goPackage struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	Export     string
	DepOnly    bool
}

// readFields type-checks the packages and returns each field of a k8s.io
// API type they read, as "pkgpath.Type.Field", with where.
func readFields(t *testing.T, patterns ...string) map[string][]string {
	read, _ := readCode(t, patterns...)
	return read
}

// readCode is readFields, and each label key whose value the code reads
// by name: m[k] of a Labels or NodeSelector field of an API type, k a
// constant; "" stands for a key that is no constant.
func readCode(t *testing.T, patterns ...string) (map[string][]string, map[string][]string) {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-export", "-deps", "-json"}, patterns...)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	exports := map[string]string{}
	var targets []goPackage
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p goPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		exports[p.ImportPath] = p.Export
		if !p.DepOnly {
			targets = append(targets, p)
		}
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) { return os.Open(exports[path]) })
	read := map[string][]string{}
	labelKeys := map[string][]string{}
	for _, p := range targets {
		if strings.HasSuffix(p.ImportPath, "/checks/client/kube/keep") || strings.Contains(p.ImportPath, "/testkit/testenv") {
			continue // the allow-list itself; the test cluster's fixtures
		}
		var files []*ast.File
		for _, f := range p.GoFiles {
			af, err := parser.ParseFile(fset, filepath.Join(p.Dir, f), nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, af)
		}
		info := &types.Info{Selections: map[*ast.SelectorExpr]*types.Selection{}, Types: map[ast.Expr]types.TypeAndValue{}}
		if _, err := (&types.Config{Importer: imp}).Check(p.ImportPath, fset, files, info); err != nil {
			t.Fatalf("type-checking %s: %v", p.ImportPath, err)
		}
		written := map[*ast.SelectorExpr]bool{}
		for _, f := range files {
			ast.Inspect(f, func(n ast.Node) bool {
				if as, ok := n.(*ast.AssignStmt); ok {
					for _, l := range as.Lhs {
						if se, ok := l.(*ast.SelectorExpr); ok {
							written[se] = true
						}
					}
				}
				return true
			})
		}
		// _, ok := m[k] asks only whether the key is there: the key is
		// kept whatever its value.
		presence := map[*ast.IndexExpr]bool{}
		for _, f := range files {
			ast.Inspect(f, func(n ast.Node) bool {
				if as, ok := n.(*ast.AssignStmt); ok && len(as.Lhs) == 2 && len(as.Rhs) == 1 {
					if id, ok := as.Lhs[0].(*ast.Ident); ok && id.Name == "_" {
						if ix, ok := as.Rhs[0].(*ast.IndexExpr); ok {
							presence[ix] = true
						}
					}
				}
				return true
			})
		}
		for _, f := range files {
			ast.Inspect(f, func(n ast.Node) bool {
				ix, ok := n.(*ast.IndexExpr)
				if !ok || presence[ix] {
					return true
				}
				se, ok := ix.X.(*ast.SelectorExpr)
				if !ok || (se.Sel.Name != "Labels" && se.Sel.Name != "NodeSelector") {
					return true
				}
				sel := info.Selections[se]
				if sel == nil || sel.Kind() != types.FieldVal || sel.Obj().Pkg() == nil || !apiPackage(sel.Obj().Pkg().Path()) {
					return true
				}
				key := ""
				if tv, ok := info.Types[ix.Index]; ok && tv.Value != nil && tv.Value.Kind() == constant.String {
					key = constant.StringVal(tv.Value)
				}
				pos := fset.Position(ix.Pos())
				labelKeys[key] = append(labelKeys[key], fmt.Sprintf("%s:%d", filepath.Base(pos.Filename), pos.Line))
				return true
			})
		}
		for se, sel := range info.Selections {
			if sel.Kind() != types.FieldVal || written[se] {
				continue
			}
			typ := sel.Recv()
			for _, i := range sel.Index() {
				for {
					p, ok := typ.(*types.Pointer)
					if !ok {
						break
					}
					typ = p.Elem()
				}
				named, _ := typ.(*types.Named)
				st, ok := typ.Underlying().(*types.Struct)
				if !ok {
					break
				}
				f := st.Field(i)
				if named != nil && named.Obj().Pkg() != nil && apiPackage(named.Obj().Pkg().Path()) {
					k := named.Obj().Pkg().Path() + "." + named.Obj().Name() + "." + f.Name()
					pos := fset.Position(se.Sel.Pos())
					read[k] = append(read[k], fmt.Sprintf("%s:%d", filepath.Base(pos.Filename), pos.Line))
				}
				typ = f.Type()
			}
		}
	}
	return read, labelKeys
}

// apiPackage says a package holds API object types: the groups, and meta.
func apiPackage(path string) bool {
	return strings.HasPrefix(path, "k8s.io/api/") || path == "k8s.io/apimachinery/pkg/apis/meta/v1"
}

// notObjects are meta/v1 types that are requests or plumbing, not objects
// an answer carries.
var notObjects = map[string]bool{"ListOptions": true, "GetOptions": true, "CreateOptions": true, "DeleteOptions": true,
	"TypeMeta": true, "Time": true, "MicroTime": true}

// kept is every (type, field) some kind keeps, by "pkgpath.Type.Field",
// and every kept path of the declaration.
func kept(t *testing.T) map[string]bool {
	t.Helper()
	m, err := compiled()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	var walk func(n *node)
	walk = func(n *node) {
		if n.goType == nil {
			return
		}
		for name, f := range n.byJSON {
			owner, sf := fieldOwner(t, n.goType, name)
			out[owner.PkgPath()+"."+owner.Name()+"."+sf.Name] = true
			if f.child != nil {
				walk(f.child)
			}
		}
	}
	for _, n := range m {
		walk(n)
	}
	return out
}

func TestEveryReadFieldIsKept(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks checks/ and internal/")
	}
	read := readFields(t, "github.com/socialwebcomputer/doctor/checks/...", "github.com/socialwebcomputer/doctor/internal/...", "github.com/socialwebcomputer/doctor/cmd/...", "github.com/socialwebcomputer/doctor/testkit/...")
	keptFields := kept(t)
	var missing []string
	for k, where := range read {
		typ := k[strings.LastIndex(k[:strings.LastIndex(k, ".")], ".")+1 : strings.LastIndex(k, ".")]
		// A list's items and metadata: every list keeps both.
		list := strings.HasSuffix(k, ".Items") || strings.HasSuffix(k, ".ListMeta")
		if keptFields[k] || builtOnly[k] != "" || notObjects[typ] || list {
			continue
		}
		missing = append(missing, k+" (read at "+strings.Join(uniq(where), ", ")+")")
	}
	sort.Strings(missing)
	for _, m := range missing {
		t.Errorf("read but not kept: %s", m)
	}
	// And the other way: a kept path that nothing reads is dead weight
	// in every bundle.
	for _, k := range Kinds {
		if k.Go == nil {
			continue
		}
		for _, path := range k.Fields {
			if readElsewhere[k.Kind+" "+path] != "" {
				continue
			}
			if !pathRead(t, k, path, read) {
				t.Errorf("%s %s: %s is kept but nothing reads it", k.APIVersion, k.Kind, path)
			}
		}
	}
}

// pathRead says whether the field a path ends at is read by the code.
func pathRead(t *testing.T, k Kind, path string, read map[string][]string) bool {
	typ := reflect.TypeOf(k.Go)
	var key string
	for _, seg := range strings.Split(path, ".") {
		name := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(seg, "[]"), "{keys}"), "{}")
		owner, sf := fieldOwner(t, typ, name)
		key = owner.PkgPath() + "." + owner.Name() + "." + sf.Name
		typ = sf.Type
		for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice {
			typ = typ.Elem()
		}
	}
	return len(read[key]) > 0
}

// fieldOwner is the struct type that declares the field JSON names name,
// looking into inline structs, and the field.
func fieldOwner(t *testing.T, typ reflect.Type, name string) (reflect.Type, reflect.StructField) {
	t.Helper()
	for i := range typ.NumField() {
		sf := typ.Field(i)
		tag, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if tag == "" && sf.Anonymous {
			if _, err := jsonField(sf.Type, name); err == nil {
				return fieldOwner(t, sf.Type, name)
			}
			continue
		}
		if tag == name {
			return typ, sf
		}
	}
	t.Fatalf("%s has no field %s", typ, name)
	return nil, reflect.StructField{}
}

func uniq(s []string) []string {
	sort.Strings(s)
	var out []string
	for i, x := range s {
		if i == 0 || s[i-1] != x {
			out = append(out, x)
		}
	}
	return out
}

// TestLabelValuesReadAreKept: every label whose value the code reads by a
// constant key (m[k] of a Labels or NodeSelector field) keeps its value in
// the cut, and every key the allow-list names is read; a key that is no
// constant is a runner's node_selector (ReadLabelKeys), read by node-arch
// and helper-image alone.
func TestLabelValuesReadAreKept(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks checks/ and internal/")
	}
	_, keys := readCode(t, "github.com/socialwebcomputer/doctor/checks/...", "github.com/socialwebcomputer/doctor/internal/...", "github.com/socialwebcomputer/doctor/cmd/...", "github.com/socialwebcomputer/doctor/testkit/...")
	for k, where := range keys {
		switch {
		case k == "":
			for _, w := range where {
				if !strings.HasPrefix(w, "check.go:") {
					t.Errorf("a label read by a key that is no constant at %s: only a runner's node_selector is (ReadLabelKeys)", w)
				}
			}
		case labelValuesRead[k] == "":
			t.Errorf("the value of label %q is read (%s) but not kept", k, strings.Join(uniq(where), ", "))
		}
	}
	for k := range labelValuesRead {
		if len(keys[k]) == 0 && !strings.HasPrefix(k, "pod-security.kubernetes.io/") {
			t.Errorf("label %q keeps its value but nothing reads it", k)
		}
	}
}
