package checks_test

import (
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/internal/hostio"
)

func wantInvalid(t *testing.T, catalog []*checks.Check, msg string) {
	t.Helper()
	err := checks.Validate(catalog)
	if err == nil || !strings.Contains(err.Error(), msg) {
		t.Errorf("Validate: %v, want an error containing %q", err, msg)
	}
}

func TestValidateAcceptsAWellFormedCatalog(t *testing.T) {
	a := mk("a", ok)
	b := mk("b-two", ok, a)
	b.Explains = []string{"a"}
	if err := checks.Validate([]*checks.Check{a, b}); err != nil {
		t.Fatal(err)
	}
}

func TestValidateRejectsDuplicateIDs(t *testing.T) {
	wantInvalid(t, []*checks.Check{mk("a", ok), mk("a", ok)}, `check "a": duplicate ID`)
}

func TestValidateRejectsMissingDocs(t *testing.T) {
	for _, blank := range []func(*checks.Check){
		func(c *checks.Check) { c.Title = "" },
		func(c *checks.Check) { c.Doc.Cause = "" },
		func(c *checks.Check) { c.Doc.Symptom = "" },
		func(c *checks.Check) { c.Doc.Fix = nil },
		func(c *checks.Check) { c.Doc.Verify = nil },
	} {
		c := mk("a", ok)
		blank(c)
		wantInvalid(t, []*checks.Check{c}, "doc (cause, symptom, fix, verify) are required")
	}
}

func TestValidateRejectsBadIDSeverityAndRun(t *testing.T) {
	wantInvalid(t, []*checks.Check{mk("Not_Kebab", ok)}, "not kebab-case")
	c := mk("a", ok)
	c.Severity = checks.Default
	wantInvalid(t, []*checks.Check{c}, "default severity must be info..critical")
	wantInvalid(t, []*checks.Check{mk("a", nil)}, "no Run")
}

func TestValidateRejectsRequirementCycles(t *testing.T) {
	a := mk("a", ok)
	b := mk("b", ok, a)
	a.Requires = []checks.Node{b}
	wantInvalid(t, []*checks.Check{a, b}, "requirement cycle")

	// Through a fact too.
	c := mk("c", ok)
	f := &checks.Fact[int]{ID: "f", Requires: []checks.Node{c}}
	c.Requires = []checks.Node{f}
	wantInvalid(t, []*checks.Check{c}, "requirement cycle")
}

func TestValidateRejectsRequiredCheckOutsideCatalog(t *testing.T) {
	stray := mk("stray", ok)
	wantInvalid(t, []*checks.Check{mk("a", ok, stray)}, `requires check "stray", which is not in the catalog`)
}

func TestValidateRejectsARefOutsideCatalog(t *testing.T) {
	f := &checks.Fact[int]{ID: "f", Requires: []checks.Node{checks.Gate(checks.Ref("api-auth"))}}
	wantInvalid(t, []*checks.Check{mk("a", ok, f)}, `requires check "api-auth" by its ID, which is not in the catalog`)
}

// A setting is declared by every node that reads it, as one value: two of
// one name would be two flags of one name, or one flag with two defaults.
func TestValidateRejectsTwoSettingsOfOneName(t *testing.T) {
	dns := &checks.Setting{Name: "public-dns", Default: "1.1.1.1:53"}
	a, b := mk("a", ok), mk("b", ok)
	a.Settings, b.Settings = []*checks.Setting{dns}, []*checks.Setting{dns}
	if err := checks.Validate([]*checks.Check{a, b}); err != nil {
		t.Errorf("one setting on two checks: %v", err)
	}
	f := &checks.Fact[int]{ID: "f", Settings: []*checks.Setting{{Name: "public-dns", Default: "9.9.9.9:53"}}}
	wantInvalid(t, []*checks.Check{a, mk("c", ok, f)}, `setting "public-dns": two settings share the name`)
	b.Settings = []*checks.Setting{{Name: "Public DNS"}}
	wantInvalid(t, []*checks.Check{b}, `setting "Public DNS": its name is not kebab-case`)
}

// Settings lists each setting of a catalog once, a fact's before the
// check that requires it.
func TestSettingsListsEachOnce(t *testing.T) {
	res, img := &checks.Setting{Name: "resolver"}, &checks.Setting{Name: "probe-image"}
	f := &checks.Fact[int]{ID: "f", Settings: []*checks.Setting{res}}
	a, b := mk("a", ok, f), mk("b", ok, f)
	a.Settings, b.Settings = []*checks.Setting{img}, []*checks.Setting{res, img}
	got := checks.Settings([]*checks.Check{a, b})
	if len(got) != 2 || got[0] != res || got[1] != img {
		t.Errorf("Settings = %v, want [resolver probe-image]", got)
	}
}

func TestValidateRejectsFactIDClashes(t *testing.T) {
	f1 := &checks.Fact[int]{ID: "x"}
	f2 := &checks.Fact[string]{ID: "x"}
	wantInvalid(t, []*checks.Check{mk("a", ok, f1, f2)}, `fact "x": two facts share the ID`)
	f3 := &checks.Fact[int]{ID: "a"}
	wantInvalid(t, []*checks.Check{mk("a", ok, f3)}, `fact "a": shares its ID with a check`)
}

func TestValidateRejectsUnknownAndCyclicExplains(t *testing.T) {
	a := mk("a", ok)
	a.Explains = []string{"api-auth"}
	wantInvalid(t, []*checks.Check{a}, `check "a" explains unknown check "api-auth"`)

	x, y := mk("x", ok), mk("y", ok)
	x.Explains, y.Explains = []string{"y"}, []string{"x"}
	wantInvalid(t, []*checks.Check{x, y}, "explains cycle")
}

func TestRunRefusesAnInvalidCatalog(t *testing.T) {
	if _, err := checks.Run(t.Context(), &hostio.Env{}, []*checks.Check{mk("a", ok), mk("a", ok)}, checks.Options{}); err == nil {
		t.Error("Run accepted a catalog with duplicate IDs")
	}
}

func TestRequiredChecksWalksThroughFacts(t *testing.T) {
	a := mk("a", ok)
	f := &checks.Fact[int]{ID: "f", Requires: []checks.Node{a}}
	b := mk("b", ok, f, a)
	got := checks.RequiredChecks([]*checks.Check{a, b}, b)
	if len(got) != 1 || got[0] != a {
		t.Errorf("RequiredChecks(b) = %v, want [a] once", got)
	}
}

func TestValidateRequiresPatternsThatAreNotAllWildcard(t *testing.T) {
	c := mk("a", ok)
	c.Doc.Patterns = nil
	wantInvalid(t, []*checks.Check{c}, `check "a": doc has no patterns`)
	for _, bad := range []string{"*", "***", "* * *", "a*b", "ab * c", "two\nlines"} {
		c := mk("a", ok)
		c.Doc.Patterns = []string{"a fine pattern", bad}
		wantInvalid(t, []*checks.Check{c}, `check "a": pattern`)
	}
	// A run of part of a catalog needs no patterns, but a bad one is bad.
	c = mk("a", ok)
	c.Doc.Patterns = nil
	if _, err := checks.Run(t.Context(), &hostio.Env{}, []*checks.Check{c}, checks.Options{}); err != nil {
		t.Errorf("Run refused a check without patterns: %v", err)
	}
	c.Doc.Patterns = []string{"*"}
	if _, err := checks.Run(t.Context(), &hostio.Env{}, []*checks.Check{c}, checks.Options{}); err == nil {
		t.Error("Run accepted an all-wildcard pattern")
	}
}

// An ambiguous pattern names its other causes, each a check of the
// catalog or one no check probes in words, and what tells them apart; a
// check whose only patterns are ambiguous is found by doctor why.
func TestValidateAmbiguousPatterns(t *testing.T) {
	a, b := mk("a", ok), mk("b", ok)
	a.Doc.Patterns = nil
	a.Doc.Ambiguous = []checks.Ambiguous{{Pattern: "shared words", Or: []string{"b", checks.NotACheck + "the job's image"}, Tell: "b's probe"}}
	if err := checks.Validate([]*checks.Check{a, b}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		amb checks.Ambiguous
		msg string
	}{
		{checks.Ambiguous{Pattern: "*", Or: []string{"b"}, Tell: "t"}, `check "a": ambiguous pattern`},
		{checks.Ambiguous{Pattern: "shared words", Tell: "t"}, "needs its other causes (Or) and what tells them apart (Tell)"},
		{checks.Ambiguous{Pattern: "shared words", Or: []string{"b"}}, "needs its other causes (Or) and what tells them apart (Tell)"},
		{checks.Ambiguous{Pattern: "shared words", Or: []string{"c"}, Tell: "t"}, `"c" is neither a check nor`},
		{checks.Ambiguous{Pattern: "shared words", Or: []string{"a"}, Tell: "t"}, "names the check itself"},
		{checks.Ambiguous{Pattern: "shared words", Or: []string{checks.NotACheck}, Tell: "t"}, "names no cause"},
	} {
		a.Doc.Ambiguous = []checks.Ambiguous{tc.amb}
		wantInvalid(t, []*checks.Check{a, b}, tc.msg)
	}
}
