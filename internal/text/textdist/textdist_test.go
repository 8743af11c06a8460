package textdist

import "testing"

func TestLevenshtein(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"pull_polcy", "pull_policy", 1}, {"cert-expiri", "cert-expiry", 1},
		{"kitten", "sitting", 3}, {"", "abc", 3}, {"größe", "grosse", 3},
	} {
		if got := Levenshtein(tc.a, tc.b); got != tc.want {
			t.Errorf("Levenshtein(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
