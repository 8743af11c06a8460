package redact

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
)

var updateFlags = flag.Bool("update-flags", false, "rewrite runnerflags.go from the runner's sources")

// runnerSources are the trimmed copies of gitlab-runner's config structs
// that runnerconfig's fidelity tests read (runnerconfig/testdata/src):
// their long:"", short:"" and namespace:"" tags are the runner's own, byte
// for byte.
const runnerSources = "../../runnerconfig/testdata/src"

// setting is one flag the runner derives from a config struct field.
type setting struct {
	flag  string // "kubernetes-bearer_token"
	toml  string // "runners.kubernetes.bearer_token"
	value bool   // takes a value: every kind but bool and *bool
}

// runnerSettings walks common.RunnerConfig of one version's sources as
// gitlab.com/ayufan/golang-cli-helpers builds its flags (the run-single and
// register commands embed RunnerConfig, commands/single.go and
// commands/register.go, v19.3.0): a field with a long:"" tag is a flag,
// named by the namespace:"" tags of the structs above it joined with "-";
// an embedded struct adds its fields in place; a nested struct is walked
// under its namespace (with none, under its parent's). A top-level field's
// short:"" tag is a flag too.
func runnerSettings(t *testing.T, dir string) []setting {
	t.Helper()
	types := map[string]*ast.StructType{} // "common.RunnerConfig"
	imports := map[string]map[string]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") {
			return err
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			return err
		}
		pkg := f.Name.Name
		for _, im := range f.Imports {
			path, _ := strconv.Unquote(im.Path.Value)
			name := filepath.Base(path)
			if im.Name != nil {
				name = im.Name.Name
			}
			if imports[p] == nil {
				imports[p] = map[string]string{}
			}
			imports[p][name] = filepath.Base(path)
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok {
				continue
			}
			for _, spec := range gd.Specs {
				if ts, ok := spec.(*ast.TypeSpec); ok {
					if st, ok := ts.Type.(*ast.StructType); ok {
						types[pkg+"."+ts.Name.Name] = st
						imports[pkg+"."+ts.Name.Name] = imports[p]
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var out []setting
	var walk func(typ, prefix, tomlPrefix string, top bool, depth int)
	walk = func(typ, prefix, tomlPrefix string, top bool, depth int) {
		st := types[typ]
		if st == nil || depth > 12 {
			return
		}
		pkg := typ[:strings.IndexByte(typ, '.')]
		for _, f := range st.Fields.List {
			tag := reflect.StructTag("")
			if f.Tag != nil {
				s, _ := strconv.Unquote(f.Tag.Value)
				tag = reflect.StructTag(s)
			}
			tomlKey, _, _ := strings.Cut(tag.Get("toml"), ",")
			if tomlKey == "-" {
				continue
			}
			inner, isBool := structOf(f.Type, pkg, imports[typ])
			if len(f.Names) == 0 { // embedded: its fields in place
				walk(inner, prefix, tomlPrefix, top, depth+1)
				continue
			}
			name := f.Names[0].Name
			if !ast.IsExported(name) {
				continue
			}
			if tomlKey == "" {
				tomlKey = name
			}
			if long := tag.Get("long"); long != "" {
				out = append(out, setting{flag: prefix + long, toml: tomlPrefix + tomlKey, value: !isBool})
				if short := tag.Get("short"); short != "" && top {
					out = append(out, setting{flag: short, toml: tomlPrefix + tomlKey, value: !isBool})
				}
			}
			if inner != "" {
				p := prefix
				if ns := tag.Get("namespace"); ns != "" {
					p = prefix + ns + "-"
				}
				walk(inner, p, tomlPrefix+tomlKey+".", false, depth+1)
			}
		}
	}
	walk("common.RunnerConfig", "", "runners.", true, 0)
	return out
}

// structOf is the runner struct a field's type names (through pointers
// and slices), "" for another type; isBool says the type is bool or *bool.
func structOf(e ast.Expr, pkg string, imports map[string]string) (string, bool) {
	switch x := e.(type) {
	case *ast.StarExpr:
		s, b := structOf(x.X, pkg, imports)
		return s, b
	case *ast.ArrayType:
		s, _ := structOf(x.Elt, pkg, imports)
		return s, false
	case *ast.Ident:
		if x.Name == "bool" {
			return "", true
		}
		return pkg + "." + x.Name, false
	case *ast.SelectorExpr:
		if id, ok := x.X.(*ast.Ident); ok {
			return imports[id.Name] + "." + x.Sel.Name, false
		}
	}
	return "", false
}

// allSettings is every version's settings, by flag; a flag that takes a
// value in any version takes one.
func allSettings(t *testing.T) map[string]setting {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(runnerSources, "v*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no runner sources under %s: %v", runnerSources, err)
	}
	out := map[string]setting{}
	for _, d := range dirs {
		for _, s := range runnerSettings(t, d) {
			if old, ok := out[s.flag]; ok && old.value {
				continue
			}
			out[s.flag] = s
		}
	}
	return out
}

// TestRunnerFlagsFromSource: settingFlags (runnerflags.go) is what the
// runner's own config structs define, every version of the sources;
// -update-flags rewrites it.
func TestRunnerFlagsFromSource(t *testing.T) {
	all := allSettings(t)
	if len(all) < 300 {
		t.Fatalf("only %d setting flags derived: the walk is broken", len(all))
	}
	names := make([]string, 0, len(all))
	for n := range all {
		names = append(names, n)
	}
	sort.Strings(names)
	var b bytes.Buffer
	b.WriteString("// Code generated by TestRunnerFlagsFromSource -update-flags; DO NOT EDIT.\n\npackage redact\n\n")
	b.WriteString("// settingFlags are the flags gitlab-runner derives from its config structs\n")
	b.WriteString("// (common.RunnerConfig, as run-single and register take it; the sources of\n")
	b.WriteString("// runnerconfig/testdata/src, v19.2.1 to v19.4.0), and whether each takes a\n")
	b.WriteString("// value (every kind but bool). Each is a setting of config.toml: Argv keeps\n")
	b.WriteString("// the value of none of them.\n")
	b.WriteString("var settingFlags = map[string]bool{\n")
	for _, n := range names {
		fmt.Fprintf(&b, "\t%q: %v, // %s\n", n, all[n].value, all[n].toml)
	}
	b.WriteString("}\n")
	src, err := format.Source(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if *updateFlags {
		if err := os.WriteFile("runnerflags.go", src, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	have, err := os.ReadFile("runnerflags.go")
	if err != nil || !bytes.Equal(have, src) {
		t.Errorf("runnerflags.go is not what the runner's sources define: go test ./internal/redact -run TestRunnerFlagsFromSource -update-flags")
	}
}
