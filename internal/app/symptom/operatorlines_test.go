package symptom_test

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/all"
	"github.com/socialwebcomputer/doctor/internal/app/symptom"
)

// operatorLine is a row of testdata/operator-lines.tsv: a log line an
// operator posted in a GitLab Runner issue or forum thread (url), as the
// thread quotes it (a TAB written ␉), with the runner version it names, its
// cause as the thread settled it, and the check that owns it: an ID,
// several as a|b when the line alone cannot tell them apart, or none.
type operatorLine struct {
	n                         int // the row's line in the file
	line, url, version, cause string
	owners                    []string // nil: no check explains it
}

func operatorLines(t *testing.T) []operatorLine {
	t.Helper()
	data, err := os.ReadFile("testdata/operator-lines.tsv")
	if err != nil {
		t.Fatal(err)
	}
	var rows []operatorLine
	for i, l := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")[1:] {
		f := strings.Split(l, "\t")
		if len(f) != 5 {
			t.Fatalf("operator-lines.tsv:%d: %d fields, want 5", i+2, len(f))
		}
		r := operatorLine{n: i + 2, line: strings.ReplaceAll(f[0], "␉", "\t"), url: f[1], version: f[2], cause: f[3]}
		if f[4] != "none" {
			r.owners = strings.Split(f[4], "|")
		}
		rows = append(rows, r)
	}
	return rows
}

// verdictOf says how a line ended: "named" (exactly its owners, no doubt
// left), "one-of" (an ambiguous verdict whose causes hold every owner, and
// nothing named for sure beside them), "nothing", or "wrong". A check named
// beside an owner is no doubt when one of the two explains the other
// (Check.Explains): doctor ranks them as one cause and its consequence.
func verdictOf(v symptom.Verdict, owners []string) string {
	switch {
	case len(v.Checks) == 0 && len(v.OneOf) == 0:
		if owners == nil {
			return "nothing"
		}
		return "wrong"
	case owners == nil:
		return "wrong"
	}
	for _, o := range owners {
		if !slices.Contains(v.Checks, o) {
			return "wrong"
		}
	}
	if len(v.OneOf) == 0 {
		for _, c := range v.Checks {
			if !slices.Contains(owners, c) && !explainedWith(c, owners) {
				return "wrong"
			}
		}
		return "named"
	}
	inOneOf := map[string]bool{}
	for _, o := range v.OneOf {
		for _, c := range o.Causes {
			inOneOf[c] = true
		}
	}
	for _, c := range v.Checks {
		if !inOneOf[c] && !slices.Contains(owners, c) && !explainedWith(c, owners) {
			return "wrong"
		}
	}
	return "one-of"
}

// TestOperatorLinesEndRight: every line operators posted names its owning
// check (or, where the line alone cannot tell, a verdict listing its
// causes with what tells them apart), and every line no check explains
// names nothing.
func TestOperatorLinesEndRight(t *testing.T) {
	m := matcher(t)
	rows := operatorLines(t)
	if len(rows) < 70 {
		t.Fatalf("%d rows: the table holds the 73 lines research collected", len(rows))
	}
	count := map[string]int{}
	for _, r := range rows {
		v := m.Verdict(symptom.Clean(r.line))
		got := verdictOf(v, r.owners)
		count[got]++
		if got == "wrong" {
			t.Errorf("operator-lines.tsv:%d (%s): %q names %v (one of %v), want %v", r.n, r.url, r.line, v.Checks, v.OneOf, r.owners)
		}
	}
	t.Logf("%d lines: %d named, %d one-of, %d nothing, %d wrong", len(rows), count["named"], count["one-of"], count["nothing"], count["wrong"])
}

// explainedWith says whether check id explains one of owners or one of
// them explains it.
func explainedWith(id string, owners []string) bool {
	byID := map[string]*checks.Check{}
	for _, c := range all.Checks() {
		byID[c.ID] = c
	}
	for _, o := range owners {
		if byID[id] != nil && slices.Contains(byID[id].Explains, o) || byID[o] != nil && slices.Contains(byID[o].Explains, id) {
			return true
		}
	}
	return false
}
