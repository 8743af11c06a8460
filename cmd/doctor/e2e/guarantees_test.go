package e2e

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestReadmeGuaranteesNameRealTests keeps the Guarantees section (of
// docs/guarantees.md, which the README links) honest: every test it names beside a promise exists in the module, so a
// renamed or deleted test cannot leave a promise standing on nothing.
const guaranteesDoc = "../../../docs/guarantees.md"

func TestReadmeGuaranteesNameRealTests(t *testing.T) {
	b, err := os.ReadFile(guaranteesDoc)
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## Guarantees\n")
	if !ok {
		t.Fatal(guaranteesDoc + " has no ## Guarantees section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	named := regexp.MustCompile("`((?:Test|Fuzz)[A-Za-z0-9_]+)`").FindAllStringSubmatch(section, -1)
	if len(named) < 20 {
		t.Fatalf("the Guarantees section names %d tests; it lists every promise beside its test", len(named))
	}
	defined := map[string]bool{}
	decl := regexp.MustCompile(`(?m)^func ((?:Test|Fuzz)[A-Za-z0-9_]+)\(`)
	err = filepath.WalkDir("../../..", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "tools" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && p != "../../.." {
			return filepath.SkipDir
		}
		if !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range decl.FindAllStringSubmatch(string(src), -1) {
			defined[m[1]] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range named {
		if !defined[m[1]] {
			t.Errorf("%s names %s, which no test file defines", guaranteesDoc, m[1])
		}
	}
}
