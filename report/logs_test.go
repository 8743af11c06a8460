package report

import (
	"strings"
	"testing"
)

func TestRankFirstMovesWholeTreesThatHoldANamedCheck(t *testing.T) {
	by := func(s string) *string { return &s }
	rep := &Report{Findings: []Finding{
		{Check: "cert-expiry"}, {Check: "api-auth", CausedBy: by("cert-expiry")},
		{Check: "config-lint"},
		{Check: "namespace"}, {Check: "image-pull", CausedBy: by("namespace")},
	}}
	rep.RankFirst([]string{"image-pull", "config-lint"})
	var got []string
	for i, f := range rep.Findings {
		got = append(got, f.Check)
		if f.Rank != i+1 {
			t.Errorf("%s has rank %d at position %d", f.Check, f.Rank, i+1)
		}
	}
	// config-lint and namespace's tree (it holds image-pull) lead, in their
	// ranked order; the cause stays above what it explains.
	if want := "config-lint namespace image-pull cert-expiry api-auth"; strings.Join(got, " ") != want {
		t.Errorf("order %s, want %s", strings.Join(got, " "), want)
	}
}

// An empty list stays an empty list: JSON says [], never null.
func TestRankFirstKeepsNoFindingsAnEmptyList(t *testing.T) {
	for _, ids := range [][]string{nil, {"namespace"}} {
		rep := &Report{Findings: []Finding{}}
		rep.RankFirst(ids)
		if rep.Findings == nil {
			t.Errorf("RankFirst(%v) made the findings nil", ids)
		}
	}
}
