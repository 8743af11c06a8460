package cli

import (
	"sort"
	"strings"

	"github.com/socialwebcomputer/doctor/checks/all"
)

// suggest is what cobra suggests for a misspelt command, for any name: the
// candidates within Levenshtein distance 2 of typed, or that start with it.
// (cobra's own works on commands only.)
func suggest(typed string, candidates []string) []string {
	typed = strings.ToLower(typed)
	var out []string
	for _, c := range candidates {
		lc := strings.ToLower(c)
		if lc == typed {
			continue
		}
		if levenshtein(typed, lc) <= 2 || len(typed) >= 2 && strings.HasPrefix(lc, typed) {
			out = append(out, c)
		}
	}
	sort.Strings(out)
	return out
}

// didYouMean formats suggestions as cobra does.
func didYouMean(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return "\n\nDid you mean this?\n\t" + strings.Join(s, "\n\t")
}

func levenshtein(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// checkIDs are the catalog's IDs, in catalog order.
func checkIDs() []string {
	var ids []string
	for _, c := range all.Checks() {
		ids = append(ids, c.ID)
	}
	return ids
}

// unknownCheck is the error for an ID no check has, with what it may have
// meant.
func unknownCheck(where, id string) error {
	return usageError("%s: no check %q (see doctor checks)%s", where, id, didYouMean(suggest(id, checkIDs())))
}

// validCheckIDs refuses IDs no check has, naming the flag.
func validCheckIDs(flag string, ids []string) error {
	known := map[string]bool{}
	for _, id := range checkIDs() {
		known[id] = true
	}
	for _, id := range ids {
		if !known[id] {
			return unknownCheck(flag, id)
		}
	}
	return nil
}
