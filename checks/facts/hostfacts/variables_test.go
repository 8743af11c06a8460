package hostfacts

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// envName is a variable's name as checks spell the ones they look up.
var envName = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)

// Every variable a check looks up is one the bundle keeps the value of:
// the calls are found in the checks' source (Lookup and lookup of the
// process's environment, EnvironmentValue and environmentValue of the
// job's, an index into ParseEnviron's map), so a check that starts reading
// another variable fails here until it is listed, instead of finding a
// stand-in in doctor analyze.
func TestVariablesReadAreListed(t *testing.T) {
	fset := token.NewFileSet()
	found := 0
	err := filepath.WalkDir("..", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			name, job, ok := variableLookup(n)
			if !ok {
				return true
			}
			found++
			if job && !JobVariableRead(name) || !job && !ProcessVariableRead(name) {
				t.Errorf("%s: a check reads %s, which variables.go does not list: a bundle would keep a stand-in for it",
					fset.Position(n.Pos()), name)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found < 10 {
		t.Fatalf("found %d look-ups in the checks' source: the scan no longer sees them", found)
	}
}

// variableLookup recognises a look-up of a variable by a literal name.
func variableLookup(n ast.Node) (name string, job, ok bool) {
	lit := func(e ast.Expr) (string, bool) {
		bl, isLit := e.(*ast.BasicLit)
		if !isLit || bl.Kind != token.STRING {
			return "", false
		}
		s, err := strconv.Unquote(bl.Value)
		return s, err == nil && envName.MatchString(s)
	}
	funcName := func(e ast.Expr) string {
		switch f := e.(type) {
		case *ast.Ident:
			return f.Name
		case *ast.SelectorExpr:
			return f.Sel.Name
		}
		return ""
	}
	switch x := n.(type) {
	case *ast.CallExpr:
		switch fn := funcName(x.Fun); {
		case (fn == "Lookup" || fn == "lookup") && len(x.Args) == 1:
			name, ok = lit(x.Args[0])
			return name, false, ok
		case (fn == "EnvironmentValue" || fn == "environmentValue") && len(x.Args) == 2:
			name, ok = lit(x.Args[1])
			return name, true, ok
		}
	case *ast.IndexExpr:
		if c, isCall := x.X.(*ast.CallExpr); isCall && funcName(c.Fun) == "ParseEnviron" {
			name, ok = lit(x.Index)
			return name, false, ok
		}
		if id, isIdent := x.X.(*ast.Ident); isIdent && id.Name == "vars" {
			name, ok = lit(x.Index)
			return name, false, ok
		}
	}
	return "", false, false
}
