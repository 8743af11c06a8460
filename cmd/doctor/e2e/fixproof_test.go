package e2e

import (
	"testing"

	"github.com/socialwebcomputer/doctor/checks/all"
	"github.com/socialwebcomputer/doctor/testkit/fixproof"
)

// Every check's catalog fix and verify (doctor explain, the docs) pastes:
// each block passes the tool of its kind (fixproof). The run-time fixes,
// with each scenario's facts, are proved by fixture.AssertWant.
func TestCatalogFixesPaste(t *testing.T) {
	for _, c := range all.Checks() {
		fixproof.Checker{}.Assert(t, c.ID+" Doc.Fix", c.Doc.Fix)
		fixproof.Checker{}.Assert(t, c.ID+" Doc.Verify", c.Doc.Verify)
	}
}
