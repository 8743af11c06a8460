package cli

import (
	"os"
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/checks/all"
)

const (
	catalogStart = "<!-- catalog:start (generated from the checks; go test ./internal/cli -run TestReadmeCatalog -update) -->\n"
	catalogEnd   = "<!-- catalog:end -->"
)

// TestReadmeCatalog keeps README.md's check catalog equal to the checks'
// own docs: every ID has its anchored section.
func TestReadmeCatalog(t *testing.T) {
	const path = "../../README.md"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i, j := strings.Index(s, catalogStart), strings.Index(s, catalogEnd)
	if i < 0 || j < i {
		t.Fatalf("README.md has no catalog markers %q ... %q", strings.TrimSpace(catalogStart), catalogEnd)
	}
	want := CatalogMarkdown(all.Checks())
	got := s[i+len(catalogStart) : j]
	if *update {
		if err := os.WriteFile(path, []byte(s[:i+len(catalogStart)]+want+s[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got != want {
		t.Errorf("README.md's catalog differs from the checks' docs; run go test ./internal/cli -run TestReadmeCatalog -update")
	}
	for _, c := range all.Checks() {
		if !strings.Contains(s, `<a id="`+c.ID+`"></a>`) {
			t.Errorf("README.md has no section for %s", c.ID)
		}
	}
}
