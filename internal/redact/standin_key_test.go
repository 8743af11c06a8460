package redact_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/internal/redact"
)

// TestStandInsAreKeyed: a stand-in is the HMAC of the secret under a key of
// the process (of its one bundle), never stored: the same secret has the
// same stand-in within the bundle, and an unkeyed digest of a guess, as
// anyone holding a ticket could compute it, matches nothing. Under another
// key (another bundle) every stand-in of the same secrets is another.
func TestStandInsAreKeyed(t *testing.T) {
	const secret = "hunter2hunter2"
	token := "glrt-t3_AbCdEfGhIjKlMnOpQrStU"
	a, b := redact.StandIn(secret), redact.StandIn(secret)
	if a != b || redact.StandIn(a) != a {
		t.Fatalf("StandIn is not stable and idempotent in one bundle: %q %q %q", a, b, redact.StandIn(a))
	}
	tok := redact.StandIn(token)
	if !strings.HasPrefix(tok, "glrt-REDACTED-") {
		t.Errorf("a token's kind prefix is what a check reads of it, and must stay: %q", tok)
	}
	like := redact.StandInLike("password", "Pw9Qz2Lm5Tx8Wb3")
	// Offline, a ticket's holder computes digests of guesses: the unkeyed
	// digest (what doctor wrote before issue 29) and the scramble under
	// an all-zero key match nothing.
	for _, guess := range []string{"password", "hunter2", secret, "Pw9Qz2Lm5Tx8Wb3", token} {
		sum := sha256.Sum256([]byte(guess))
		for _, stood := range []string{a, tok, like} {
			if strings.Contains(stood, hex.EncodeToString(sum[:4])) {
				t.Errorf("the unkeyed digest of %q is in the stand-in %q: a guess can be tested", guess, stood)
			}
		}
	}
	var zero []string
	redact.WithStandInKey(make([]byte, 32), func() {
		zero = []string{redact.StandIn(secret), redact.StandIn(token), redact.StandInLike("password", "Pw9Qz2Lm5Tx8Wb3")}
	})
	for i, mine := range []string{a, tok, like} {
		if zero[i] == mine {
			t.Errorf("the stand-in %q is what a known key gives: it is not keyed by the bundle's own", mine)
		}
	}
	// Two bundles: two keys, no stand-in in common.
	seen := map[string]int{}
	for i := range 2 {
		k := bytes.Repeat([]byte{byte(i + 1)}, 32)
		redact.WithStandInKey(k, func() {
			for _, s := range []string{redact.StandIn(secret), redact.StandIn(token), redact.StandInLike("password", "Pw9Qz2Lm5Tx8Wb3")} {
				seen[s]++
			}
		})
	}
	for s, n := range seen {
		if n > 1 {
			t.Errorf("the stand-in %q is the same under two keys", s)
		}
	}
	// StandInLike keeps the shape a description needs, and only that.
	if len(like) != len("Pw9Qz2Lm5Tx8Wb3") || redact.DescribeString("password", like) != redact.DescribeString("password", "Pw9Qz2Lm5Tx8Wb3") {
		t.Errorf("StandInLike %q is not described as the value was", like)
	}
}
