package all

import (
	"os"
	"regexp"
	"testing"

	"github.com/socialwebcomputer/doctor/checks"
)

// Every finding links README.md#<id> (checks.DocsAnchor), so every check in
// the catalog needs a README section with that anchor: an explicit
// <a id="ID"></a> or a "### ID" heading, whose GitHub slug is the ID.
func TestREADMEHasASectionPerCheck(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatalf("README.md at the repo root: %v (every check's findings link to it)", err)
	}
	for _, c := range Checks() {
		anchor := regexp.MustCompile(`<a id="` + regexp.QuoteMeta(c.ID) + `"></a>|(?m)^###\s+` + regexp.QuoteMeta(c.ID) + `\s*$`)
		if !anchor.Match(b) {
			t.Errorf("README.md has no section for %s (want <a id=%q></a> or ### %s; findings link %s)",
				c.ID, c.ID, c.ID, checks.DocsAnchor(c.ID))
		}
	}
}

func TestCatalogValidates(t *testing.T) {
	if err := checks.Validate(Checks()); err != nil {
		t.Fatal(err)
	}
}
