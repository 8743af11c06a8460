package all

import (
	"testing"

	"github.com/socialwebcomputer/doctor/checks"
)

// README.md's per-check sections are kept equal to the checks' docs by
// internal/cli's TestReadmeCatalog; here the catalog itself is checked.
func TestCatalogValidates(t *testing.T) {
	if err := checks.Validate(Checks()); err != nil {
		t.Fatal(err)
	}
}
