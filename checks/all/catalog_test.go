package all

import (
	"testing"

	"github.com/socialwebcomputer/doctor/checks"
)

// docs/checks.md's per-check sections are kept equal to the checks' docs by
// cmd/doctor/cli's TestReadmeCatalog; here the catalog itself is checked.
func TestCatalogValidates(t *testing.T) {
	if err := checks.Validate(Checks()); err != nil {
		t.Fatal(err)
	}
}

// The registry's settings are the catalog's, each once: a setting a node
// declares is a flag, and a flag is a setting some node reads.
func TestSettingsAreTheCatalogs(t *testing.T) {
	listed := map[*checks.Setting]bool{}
	for _, s := range Settings() {
		if listed[s] {
			t.Errorf("setting %s is listed twice", s.Name)
		}
		listed[s] = true
	}
	declared := checks.Settings(Checks())
	for _, s := range declared {
		if !listed[s] {
			t.Errorf("setting %s is declared by a node but not listed in Settings", s.Name)
		}
		delete(listed, s)
	}
	for s := range listed {
		t.Errorf("setting %s is listed, but no node of the catalog declares it", s.Name)
	}
}
