package redact

import (
	"strings"
	"testing"
)

// MaxStandInLen is what bounds on redacted input count per word: it must
// hold for every kind of token, the longest prefix included, and be
// reached (else it bounds nothing precisely).
func TestMaxStandInLenBoundsEveryStandIn(t *testing.T) {
	longest := 0
	for _, p := range append([]string{""}, tokenPrefixes...) {
		for _, v := range []string{p + "x", p + strings.Repeat("y", 200)} {
			got := StandIn(v)
			if len(got) > MaxStandInLen {
				t.Errorf("StandIn(%q) = %q, %d bytes > MaxStandInLen %d", v, got, len(got), MaxStandInLen)
			}
			longest = max(longest, len(got))
		}
	}
	if longest != MaxStandInLen {
		t.Errorf("longest stand-in is %d bytes, MaxStandInLen says %d", longest, MaxStandInLen)
	}
}
