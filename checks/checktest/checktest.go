// Package checktest holds what check tests share: a check result as the
// text an operator reads, and assertions on it.
package checktest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/internal/hostio"
)

// Text is everything an operator reads of a check's result: status, and each
// finding's severity, cause, fix and evidence.
func Text(r checks.CheckResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "status %s %s\n", r.Status, r.Reason)
	for _, f := range r.Findings {
		fmt.Fprintf(&b, "[%s] %s\nfix: %s\n", f.Severity, f.Cause, f.Fix)
		for _, e := range f.Evidence {
			fmt.Fprintf(&b, "  %s: %s\n", e.Source, e.Detail)
		}
	}
	return b.String()
}

// WantSays fails unless the result has the status and its text contains
// every one of says.
func WantSays(t testing.TB, r checks.CheckResult, status checks.Status, says ...string) {
	t.Helper()
	got := Text(r)
	if r.Status != status {
		t.Errorf("%s: status %s, want %s\n%s", r.Check.ID, r.Status, status, got)
	}
	for _, s := range says {
		if !strings.Contains(got, s) {
			t.Errorf("%s does not say %q:\n%s", r.Check.ID, s, got)
		}
	}
}

// Run runs one check, and what it requires, against the root at dir.
func Run(t testing.TB, dir string, c *checks.Check) checks.CheckResult {
	t.Helper()
	res, err := checks.Run(context.Background(), &hostio.Env{Root: dir, Clock: time.Now()}, []*checks.Check{c}, checks.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return res.Checks[0]
}

// WantPatterns fails unless each line, as the runner prints it, matches
// one of the check's Doc.Patterns, read as checks.Doc says: a fragment
// found anywhere in the line, `*` any run of characters within it.
func WantPatterns(t testing.TB, c *checks.Check, lines ...string) {
	t.Helper()
	if len(c.Doc.Patterns) == 0 {
		t.Fatalf("%s has no Doc.Patterns", c.ID)
	}
	for _, line := range lines {
		if !Matches(c.Doc, line) {
			t.Errorf("%s: no pattern of %q matches %q", c.ID, c.Doc.Patterns, line)
		}
	}
}

// Matches reports whether one of doc's Patterns matches line, by the
// contract of checks.Doc.Patterns: a fragment anywhere in the line, `*`
// any run of characters within it. For the checks' own tests; doctor why
// has its matcher.
func Matches(doc checks.Doc, line string) bool {
	for _, p := range doc.Patterns {
		rest, ok := line, true
		for _, part := range strings.Split(p, "*") {
			j := strings.Index(rest, part)
			if j < 0 {
				ok = false
				break
			}
			rest = rest[j+len(part):]
		}
		if ok {
			return true
		}
	}
	return false
}
