package cli

import (
	"sort"
	"strings"

	"github.com/socialwebcomputer/doctor/checks/all"
	"github.com/socialwebcomputer/doctor/internal/text/textdist"
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
		if textdist.Levenshtein(typed, lc) <= 2 || len(typed) >= 2 && strings.HasPrefix(lc, typed) {
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
