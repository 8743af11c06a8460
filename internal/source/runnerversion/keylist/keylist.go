// Package keylist reads gitlab-runner's Go source and lists every key path
// config.toml can reach, the way runnerconfig/testdata/gitlab-runner-*-keys.txt
// records them.
//
// It parses the source with go/parser and never compiles or runs it. The walk
// starts at the Config struct of the runner's package common and follows each
// field the way github.com/BurntSushi/toml decodes it:
//
//   - the key is the first element of the toml tag, or the field name when
//     the tag has none; toml:"-" and unexported fields are skipped;
//   - an embedded struct without a tag name is flattened into its parent, in
//     place;
//   - pointers, slices and maps are written as Go spells them ("*", "[]",
//     "map[K]"); a named non-struct type is reduced to its underlying kind,
//     except one that decodes itself (it has an UnmarshalTOML method, like
//     StringOrArray), which keeps its bare name because its kind says nothing
//     about what config.toml may hold;
//   - a struct is written "struct" plus its package-qualified type name
//     (common.KubernetesConfig) and its fields follow, one level deeper;
//   - time.Duration and time.Time keep their names; the few other types
//     from outside the runner's module that its structs use are spelt by
//     their underlying kind from the table External. Any other outside type
//     is an error, and so is anything the list format has no spelling for
//     (arrays, anonymous structs, generics, recursion) or two keys of one
//     table equal but for case (BurntSushi/toml falls back to matching keys
//     case-insensitively): the walk fails rather than guess.
//
// Files are read with the build constraints of linux/amd64, test files not
// at all.
package keylist

import (
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// DefaultModule is gitlab-runner's module path.
const DefaultModule = "gitlab.com/gitlab-org/gitlab-runner"

// Line is one key of the list.
type Line struct {
	Path   string // dotted key path, "runners.kubernetes.pull_policy"
	Kind   string // "string", "*bool", "[]*struct", "map[string]any", ...
	Struct string // for struct kinds the runner's type, "common.KubernetesConfig"
}

// String is the line as the list file holds it: tab-separated fields.
func (l Line) String() string {
	if l.Struct == "" {
		return l.Path + "\t" + l.Kind
	}
	return l.Path + "\t" + l.Kind + "\t" + l.Struct
}

// Result is the walk's output: the lines in struct field order, and what
// the walk read, so that Trim can keep exactly that.
type Result struct {
	Lines []Line

	g *walker
}

// Generate walks the runner's source tree at root (a checkout or an
// extracted `git archive` of gitlab-runner), whose Go module path is module.
// Only the packages the walk reaches are parsed, with the build constraints
// of linux/amd64; test files are ignored.
func Generate(root, module string) (*Result, error) {
	g := &walker{
		root:   root,
		module: module,
		fset:   token.NewFileSet(),
		pkgs:   map[string]*pkg{},
		active: map[*typeDecl]bool{},
	}
	common, err := g.load(module + "/common")
	if err != nil {
		return nil, err
	}
	td := common.types["Config"]
	if td == nil {
		return nil, fmt.Errorf("%s: no type Config", common.dir)
	}
	if _, ok := td.spec.Type.(*ast.StructType); !ok {
		return nil, fmt.Errorf("%s: Config is not a struct", g.pos(td.spec))
	}
	td.used()
	if err := g.walk(td, "", map[string]bool{}); err != nil {
		return nil, err
	}
	return &Result{Lines: g.lines, g: g}, nil
}

// Format renders the lines, each followed by a newline, after header, whose
// lines are written as "# " comments (an empty header writes none).
func (r *Result) Format(header string) []byte {
	var b bytes.Buffer
	if header != "" {
		for _, l := range strings.Split(strings.TrimRight(header, "\n"), "\n") {
			b.WriteString(strings.TrimRight("# "+l, " ") + "\n")
		}
	}
	for _, l := range r.Lines {
		b.WriteString(l.String() + "\n")
	}
	return b.Bytes()
}

// Files lists, relative to root and slash-separated, the source files that
// hold a declaration the walk used.
func (r *Result) Files() []string {
	var out []string
	for _, f := range r.g.usedFiles() {
		out = append(out, f.rel)
	}
	return out
}

// Trim writes under dir a copy of each file in Files holding only its
// package clause, its imports and, byte for byte with their doc comments,
// the type declarations the walk used and the UnmarshalTOML methods of
// those types. note is put first in every file as a // comment. Generate
// on dir gives the same lines as on the full tree.
func (r *Result) Trim(dir, note string) error {
	for _, f := range r.g.usedFiles() {
		var b bytes.Buffer
		for _, l := range strings.Split(strings.TrimRight(note, "\n"), "\n") {
			b.WriteString(strings.TrimRight("// "+l, " ") + "\n")
		}
		b.WriteString("\npackage " + f.ast.Name.Name + "\n")
		for _, d := range f.ast.Decls {
			if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.IMPORT {
				b.WriteString("\n" + f.text(gd.Doc, gd) + "\n")
			}
		}
		for _, d := range f.ast.Decls {
			if !f.keep[d] {
				continue
			}
			var doc *ast.CommentGroup
			switch d := d.(type) {
			case *ast.GenDecl:
				doc = d.Doc
			case *ast.FuncDecl:
				doc = d.Doc
			}
			b.WriteString("\n" + f.text(doc, d) + "\n")
		}
		out := filepath.Join(dir, filepath.FromSlash(f.rel))
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(out, b.Bytes(), 0o644); err != nil {
			return err
		}
	}
	return nil
}

type walker struct {
	root, module string
	fset         *token.FileSet
	pkgs         map[string]*pkg // by import path; nil while loading
	order        []*pkg
	active       map[*typeDecl]bool // structs on the current path
	lines        []Line
}

type pkg struct {
	path, dir, name string
	files           []*file
	types           map[string]*typeDecl
	unmarshalers    map[string]*ast.FuncDecl // UnmarshalTOML by receiver type
	unmarshalerFile map[string]*file
}

type file struct {
	rel  string
	src  []byte
	ast  *ast.File
	fset *token.FileSet
	keep map[ast.Decl]bool
}

type typeDecl struct {
	pkg  *pkg
	file *file
	gen  *ast.GenDecl
	spec *ast.TypeSpec
}

func (td *typeDecl) used() { td.file.keep[td.gen] = true }

func (f *file) text(doc *ast.CommentGroup, n ast.Node) string {
	start := n.Pos()
	if doc != nil {
		start = doc.Pos()
	}
	return string(f.src[f.fset.Position(start).Offset:f.fset.Position(n.End()).Offset])
}

func (g *walker) pos(n ast.Node) string {
	p := g.fset.Position(n.Pos())
	if rel, err := filepath.Rel(g.root, p.Filename); err == nil {
		p.Filename = filepath.ToSlash(rel)
	}
	return p.String()
}

func (g *walker) usedFiles() []*file {
	var out []*file
	for _, p := range g.order {
		for _, f := range p.files {
			if len(f.keep) > 0 {
				out = append(out, f)
			}
		}
	}
	return out
}

// load parses the package at import path ip, which must be inside the
// runner's module.
func (g *walker) load(ip string) (*pkg, error) {
	if p, ok := g.pkgs[ip]; ok {
		if p == nil {
			return nil, fmt.Errorf("import cycle through %s", ip)
		}
		return p, nil
	}
	rel, ok := strings.CutPrefix(ip, g.module+"/")
	if !ok {
		return nil, fmt.Errorf("%s is outside module %s", ip, g.module)
	}
	g.pkgs[ip] = nil
	p := &pkg{
		path:            ip,
		dir:             filepath.Join(g.root, filepath.FromSlash(rel)),
		types:           map[string]*typeDecl{},
		unmarshalers:    map[string]*ast.FuncDecl{},
		unmarshalerFile: map[string]*file{},
	}
	ents, err := os.ReadDir(p.dir)
	if err != nil {
		return nil, err
	}
	ctx := build.Default
	ctx.GOOS, ctx.GOARCH, ctx.CgoEnabled = "linux", "amd64", false
	for _, e := range ents {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		if ok, err := ctx.MatchFile(p.dir, name); err != nil || !ok {
			continue
		}
		full := filepath.Join(p.dir, name)
		src, err := os.ReadFile(full)
		if err != nil {
			return nil, err
		}
		af, err := parser.ParseFile(g.fset, full, src, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		if p.name == "" {
			p.name = af.Name.Name
		} else if p.name != af.Name.Name {
			return nil, fmt.Errorf("%s: package %s and %s", p.dir, p.name, af.Name.Name)
		}
		f := &file{rel: path.Join(rel, name), src: src, ast: af, fset: g.fset, keep: map[ast.Decl]bool{}}
		p.files = append(p.files, f)
		for _, d := range af.Decls {
			switch d := d.(type) {
			case *ast.GenDecl:
				if d.Tok != token.TYPE {
					continue
				}
				for _, s := range d.Specs {
					ts := s.(*ast.TypeSpec)
					if old := p.types[ts.Name.Name]; old != nil {
						return nil, fmt.Errorf("%s: %s redeclared (also %s)", g.pos(ts), ts.Name.Name, g.pos(old.spec))
					}
					p.types[ts.Name.Name] = &typeDecl{pkg: p, file: f, gen: d, spec: ts}
				}
			case *ast.FuncDecl:
				if d.Name.Name != "UnmarshalTOML" || d.Recv == nil || len(d.Recv.List) != 1 {
					continue
				}
				if recv := recvName(d.Recv.List[0].Type); recv != "" {
					p.unmarshalers[recv] = d
					p.unmarshalerFile[recv] = f
				}
			}
		}
	}
	if p.name == "" {
		return nil, fmt.Errorf("%s: no Go files", p.dir)
	}
	g.pkgs[ip] = p
	g.order = append(g.order, p)
	return p, nil
}

func recvName(e ast.Expr) string {
	if s, ok := e.(*ast.StarExpr); ok {
		e = s.X
	}
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// walk lists the fields of struct td under prefix.
func (g *walker) walk(td *typeDecl, prefix string, seen map[string]bool) error {
	if g.active[td] {
		return fmt.Errorf("%s: %s.%s contains itself", g.pos(td.spec), td.pkg.name, td.spec.Name.Name)
	}
	g.active[td] = true
	defer delete(g.active, td)
	st := td.spec.Type.(*ast.StructType)
	for _, fld := range st.Fields.List {
		tag := ""
		if fld.Tag != nil {
			s, err := strconv.Unquote(fld.Tag.Value)
			if err != nil {
				return fmt.Errorf("%s: tag: %v", g.pos(fld), err)
			}
			tag = reflect.StructTag(s).Get("toml")
		}
		key, _, _ := strings.Cut(tag, ",")
		if key == "-" {
			continue
		}
		names := fld.Names
		if len(names) == 0 { // embedded
			typ := fld.Type
			if s, ok := typ.(*ast.StarExpr); ok {
				typ = s.X
			}
			if key == "" {
				if inner, err := g.named(td.file, td.pkg, typ); err != nil {
					return err
				} else if inner != nil && isStruct(inner) {
					inner.used()
					if err := g.walk(inner, prefix, seen); err != nil {
						return err
					}
					continue
				}
			}
			var id *ast.Ident
			switch t := typ.(type) {
			case *ast.Ident:
				id = t
			case *ast.SelectorExpr:
				id = t.Sel
			default:
				return fmt.Errorf("%s: unsupported embedded field", g.pos(fld))
			}
			names = []*ast.Ident{id}
		}
		for _, n := range names {
			if !n.IsExported() {
				continue
			}
			name := key
			if name == "" {
				name = n.Name
			}
			if seen[strings.ToLower(name)] {
				return fmt.Errorf("%s: key %s%s appears twice", g.pos(n), prefix, name)
			}
			seen[strings.ToLower(name)] = true
			kind, inner, err := g.kind(td.file, td.pkg, fld.Type)
			if err != nil {
				return fmt.Errorf("%s%s: %w", prefix, name, err)
			}
			l := Line{Path: prefix + name, Kind: kind}
			if inner != nil {
				l.Struct = inner.pkg.name + "." + inner.spec.Name.Name
			}
			g.lines = append(g.lines, l)
			if inner != nil {
				if err := g.walk(inner, prefix+name+".", map[string]bool{}); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func isStruct(td *typeDecl) bool {
	_, ok := td.spec.Type.(*ast.StructType)
	return ok
}

// External holds the named types from outside the runner's module that its
// config structs use, each with the kind the list spells it as (its
// underlying kind). A type missing here stops the walk.
var External = map[string]string{
	// k8s.io/api/core/v1/types.go: type Capability string
	"k8s.io/api/core/v1.Capability": "string",
	// k8s.io/api/core/v1/types.go: type ProcMountType string
	"k8s.io/api/core/v1.ProcMountType": "string",
}

type externalError struct{ name, pos string }

func (e *externalError) Error() string {
	return e.pos + ": type " + e.name + " is from outside the runner's module and not in keylist.External"
}

var basic = map[string]string{
	"bool": "bool", "string": "string",
	"int": "int", "int8": "int8", "int16": "int16", "int32": "int32", "int64": "int64",
	"uint": "uint", "uint8": "uint8", "uint16": "uint16", "uint32": "uint32", "uint64": "uint64",
	"uintptr": "uintptr", "float32": "float32", "float64": "float64",
	"complex64": "complex64", "complex128": "complex128",
	"byte": "uint8", "rune": "int32", "any": "any", "error": "any",
}

// kind spells the type expression e, found in file f of package p; for a
// struct (possibly behind pointers, slices and map values) it also returns
// the struct's declaration.
func (g *walker) kind(f *file, p *pkg, e ast.Expr) (string, *typeDecl, error) {
	switch t := e.(type) {
	case *ast.ParenExpr:
		return g.kind(f, p, t.X)
	case *ast.StarExpr:
		k, td, err := g.kind(f, p, t.X)
		return "*" + k, td, err
	case *ast.ArrayType:
		if t.Len != nil {
			return "", nil, fmt.Errorf("%s: arrays are not supported", g.pos(t))
		}
		k, td, err := g.kind(f, p, t.Elt)
		return "[]" + k, td, err
	case *ast.MapType:
		kk, ktd, err := g.kind(f, p, t.Key)
		if err != nil {
			return "", nil, err
		}
		if ktd != nil || strings.ContainsAny(kk, "*[]") {
			return "", nil, fmt.Errorf("%s: map key %s is not a basic kind", g.pos(t), kk)
		}
		vk, td, err := g.kind(f, p, t.Value)
		return "map[" + kk + "]" + vk, td, err
	case *ast.InterfaceType:
		return "any", nil, nil
	case *ast.Ident, *ast.SelectorExpr:
		if sel, ok := t.(*ast.SelectorExpr); ok {
			if x, ok := sel.X.(*ast.Ident); ok {
				if ip, _ := g.importPath(f, x.Name); ip == "time" && (sel.Sel.Name == "Duration" || sel.Sel.Name == "Time") {
					return "time." + sel.Sel.Name, nil, nil
				}
			}
		}
		td, err := g.named(f, p, t)
		var ext *externalError
		if errors.As(err, &ext) {
			if k, ok := External[ext.name]; ok {
				return k, nil, nil
			}
		}
		if err != nil {
			return "", nil, err
		}
		if td == nil {
			id := t.(*ast.Ident) // named returns nil only for predeclared identifiers
			return basic[id.Name], nil, nil
		}
		td.used()
		switch {
		case td.spec.TypeParams != nil:
			return "", nil, fmt.Errorf("%s: generic types are not supported", g.pos(td.spec))
		case td.spec.Assign.IsValid(): // alias
			return g.kind(td.file, td.pkg, td.spec.Type)
		case isStruct(td):
			return "struct", td, nil
		}
		if m := td.pkg.unmarshalers[td.spec.Name.Name]; m != nil {
			td.pkg.unmarshalerFile[td.spec.Name.Name].keep[m] = true
			return td.spec.Name.Name, nil, nil
		}
		k, inner, err := g.kind(td.file, td.pkg, td.spec.Type)
		if err == nil && k == "struct" {
			err = fmt.Errorf("%s: defined type over another struct type is not supported", g.pos(td.spec))
		}
		return k, inner, err
	case *ast.StructType:
		return "", nil, fmt.Errorf("%s: anonymous structs are not supported", g.pos(t))
	}
	return "", nil, fmt.Errorf("%s: unsupported type expression %T", g.pos(e), e)
}

// named resolves an identifier or pkg.Name selector to the runner's type
// declaration; nil, nil for a predeclared type.
func (g *walker) named(f *file, p *pkg, e ast.Expr) (*typeDecl, error) {
	switch t := e.(type) {
	case *ast.Ident:
		if td := p.types[t.Name]; td != nil {
			return td, nil
		}
		if _, ok := basic[t.Name]; ok {
			return nil, nil
		}
		return nil, fmt.Errorf("%s: undefined type %s", g.pos(t), t.Name)
	case *ast.SelectorExpr:
		x, ok := t.X.(*ast.Ident)
		if !ok {
			return nil, fmt.Errorf("%s: unsupported selector", g.pos(t))
		}
		ip, err := g.importPath(f, x.Name)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", g.pos(t), err)
		}
		if !strings.HasPrefix(ip, g.module+"/") {
			return nil, &externalError{ip + "." + t.Sel.Name, g.pos(t)}
		}
		q, err := g.load(ip)
		if err != nil {
			return nil, err
		}
		if td := q.types[t.Sel.Name]; td != nil {
			return td, nil
		}
		return nil, fmt.Errorf("%s: %s has no type %s", g.pos(t), ip, t.Sel.Name)
	}
	return nil, fmt.Errorf("%s: not a type name", g.pos(e))
}

// importPath finds the import of file f that the name x refers to.
func (g *walker) importPath(f *file, x string) (string, error) {
	var unnamed []string
	for _, im := range f.ast.Imports {
		ip, err := strconv.Unquote(im.Path.Value)
		if err != nil {
			return "", err
		}
		if im.Name != nil {
			if im.Name.Name == x {
				return ip, nil
			}
			continue
		}
		if guessName(ip) == x {
			return ip, nil
		}
		unnamed = append(unnamed, ip)
	}
	// A package whose name differs from its last path element: look.
	sort.Strings(unnamed)
	for _, ip := range unnamed {
		if !strings.HasPrefix(ip, g.module+"/") {
			continue
		}
		if q, err := g.load(ip); err == nil && q.name == x {
			return ip, nil
		}
	}
	return "", errors.New("no import for " + x)
}

// guessName is the conventional package name of an import path.
func guessName(ip string) string {
	elem := path.Base(ip)
	if len(elem) > 1 && elem[0] == 'v' && strings.Trim(elem[1:], "0123456789") == "" && path.Dir(ip) != "." {
		elem = path.Base(path.Dir(ip))
	}
	if i := strings.Index(elem, ".v"); i > 0 && strings.HasPrefix(ip, "gopkg.in/") {
		elem = elem[:i]
	}
	return strings.TrimPrefix(elem, "go-")
}
