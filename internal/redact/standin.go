package redact

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"
)

// A stand-in is keyed: it is made with HMAC-SHA256 under a key of 32
// random bytes drawn when this process makes its first stand-in, held in
// memory only, and never written anywhere (not in a bundle, its manifest,
// a report or a log). A process writes at most one bundle (doctor run
// --bundle), so the key is that bundle's: within it the same secret has
// the same stand-in everywhere (a unit's variable and the process's, a
// kubeconfig's token and the request key built of it, two runners with
// one token still compare equal), while nobody who holds the bundle can
// test a guess against a stand-in, nor compare stand-ins of two bundles.
// An unkeyed digest could be tested offline: a weak password was found
// from a ticket's stand-in in 6,400 guesses (issue 29).
//
// analyze never makes a stand-in of a secret: the bundle holds stand-ins
// only, and a stand-in of a stand-in is itself (StandIn, StandInLike).
var standInKey = sync.OnceValue(func() []byte {
	k := make([]byte, 32)
	if _, err := rand.Read(k); err != nil {
		// crypto/rand does not fail on Linux (getrandom); without it no
		// stand-in can be made safely.
		panic("redact: no randomness for the stand-in key: " + err.Error())
	}
	return k
})

// keyed is HMAC-SHA256 of s under the process's stand-in key.
func keyed(s string) []byte {
	m := hmac.New(sha256.New, standInKey())
	m.Write([]byte(s))
	return m.Sum(nil)
}

// StandInLike is a stand-in for s that evidence describes exactly as it
// describes s (DescribeString(key, ·) gives the same text), for a value no
// check reads but through its description (an unknown config.toml key, an
// environment entry of the job): the same number of characters, each ASCII
// letter a letter of the same case, each digit a digit, each other
// character kept, so that s's shape (secret-looking or not, its runs, its
// separators) stays and none of its letters or digits do. The shape is
// kept because a verdict reads it: the finding describes the value by its
// length and whether it looks secret, and analyze must describe the
// stand-in alike. That is all it tells: the letters and digits are drawn
// from the keyed digest (scramble), so the stand-in cannot be tested
// against a guess. Where the shape is not needed, StandIn keeps none. A GitLab token's
// kind prefix stays, as StandIn keeps it.
//
// What evidence quotes (a path, an image, a word) is no secret by
// evidence's own rule, and is in the report already: it stays as it is.
// A URL keeps what evidence shows of it (scheme, host, path) and its
// userinfo, query and fragment, which evidence drops, are stood in. The
// same s always gives the same stand-in, so two values compared (a unit's
// variable and the process's) stay equal or different.
//
// Where no such stand-in exists (a value all punctuation keeps every
// character) it is StandIn(s): nothing of s, described otherwise.
func StandInLike(key, s string) string {
	want := DescribeString(key, s)
	if want == fmt.Sprintf("%q", s) {
		return s
	}
	// What evidence shows of s is kept; its form says what that is.
	var out string
	if name, v, ok := strings.Cut(s, "="); ok && strings.HasPrefix(want, `"`+name+"=") {
		out = name + "=" + StandInLike(name, v)
	} else if _, ok := printableURL(s); ok && strings.HasPrefix(want, `"`) {
		out = urlLike(s)
	} else if out = scramble(s, keptSpans(s)); sharesPiece(s, out) {
		return StandIn(s)
	} else if marked := markStandIn(out, keptSpans(s)); DescribeString(key, marked) == want {
		out = marked
	}
	if DescribeString(key, out) != want {
		return StandIn(s)
	}
	return out
}

// urlLike stands in a URL's userinfo, query and fragment, keeping its
// scheme, host and path, which evidence shows.
func urlLike(s string) string {
	scheme, rest, _ := strings.Cut(s, "://")
	var keep [][2]int
	off := len(scheme) + 3
	keep = append(keep, [2]int{0, off})
	// The authority ends at the first '/', '?' or '#'; its userinfo at its
	// last '@'.
	end := len(rest)
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		end = i
	}
	host := 0
	if at := strings.LastIndexByte(rest[:end], '@'); at >= 0 {
		host = at
	}
	pathEnd := len(rest)
	if i := strings.IndexAny(rest[end:], "?#"); i >= 0 {
		pathEnd = end + i
	}
	keep = append(keep, [2]int{off + host, off + pathEnd})
	return scramble(s, keep)
}

// keptSpans are the parts of s a stand-in keeps so that it looks as
// secret as s: GitLab token prefixes (tokenShape) and PEM armour.
func keptSpans(s string) [][2]int {
	var keep [][2]int
	for _, m := range tokenShape().FindAllStringSubmatchIndex(s, -1) {
		keep = append(keep, [2]int{m[2], m[3]})
	}
	for _, w := range []string{"-----BEGIN", "-----END"} {
		for i := 0; ; {
			j := strings.Index(s[i:], w)
			if j < 0 {
				break
			}
			keep = append(keep, [2]int{i + j, i + j + len(w)})
			i += j + len(w)
		}
	}
	return keep
}

// scramble replaces every ASCII letter and digit of s outside keep by one
// of the same class, and every other non-ASCII character by another, drawn
// from the keyed digest of s (a stream of HMAC-SHA256 blocks under the
// stand-in key).
func scramble(s string, keep [][2]int) string {
	seed := keyed(s)
	var block [sha256.Size]byte
	n := 0
	next := func() uint32 {
		if n%8 == 0 {
			var ctr [4]byte
			binary.BigEndian.PutUint32(ctr[:], uint32(n/8))
			m := hmac.New(sha256.New, standInKey())
			m.Write(seed)
			m.Write(ctr[:])
			copy(block[:], m.Sum(nil))
		}
		v := binary.BigEndian.Uint32(block[(n%8)*4:])
		n++
		return v
	}
	kept := func(i int) bool {
		for _, k := range keep {
			if k[0] <= i && i < k[1] {
				return true
			}
		}
		return false
	}
	var b strings.Builder
	b.Grow(len(s))
	for i, r := range s {
		switch {
		case kept(i):
			b.WriteRune(r)
		case 'a' <= r && r <= 'z':
			b.WriteByte(byte('a' + next()%26))
		case 'A' <= r && r <= 'Z':
			b.WriteByte(byte('A' + next()%26))
		case '0' <= r && r <= '9':
			b.WriteByte(byte('0' + next()%10))
		case r >= utf8.RuneSelf:
			b.WriteRune('ø')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// markStandIn writes standInMark's word over the first 8 letters and
// digits in a row of a scrambled stand-in, outside what it kept, so that a
// reader of the bundle (and its tests) sees it is one.
func markStandIn(s string, keep [][2]int) string {
	mark := strings.TrimSuffix(standInMark, "-")
	run := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
		for _, k := range keep {
			if k[0] <= i && i < k[1] {
				alnum = false
			}
		}
		if !alnum {
			run = 0
			continue
		}
		if run++; run == len(mark) {
			return s[:i+1-len(mark)] + mark + s[i+1:]
		}
	}
	return s
}

// sharesPiece says out keeps s, or a 12-character piece of it.
func sharesPiece(s, out string) bool {
	if len(s) < 12 {
		return s == out && s != ""
	}
	for i := 0; i+12 <= len(s); i++ {
		if strings.Contains(out, s[i:i+12]) {
			return true
		}
	}
	return false
}

// StandIn replaces a secret value in what a bundle keeps: the well-known
// prefix that says what kind of token it is stays (checks describe a token
// by it: a verdict needs it), the rest becomes 8 hex digits of the keyed
// digest (HMAC-SHA256 under the bundle's key, standInKey), so two
// different secrets stay different and the same one stays the same within
// the bundle, and no guess can be tested against it. No length or shape
// of the secret stays. It is idempotent, so a key built from a stand-in on
// replay equals the one built from the secret.
func StandIn(v string) string {
	if v == "" || strings.Contains(v, standInMark) {
		return v
	}
	prefix := ""
	for _, p := range tokenPrefixes {
		if strings.HasPrefix(v, p) {
			prefix = p
			break
		}
	}
	return prefix + standInMark + hex.EncodeToString(keyed(v)[:4])
}

const standInMark = "REDACTED-"

// MaxStandInLen is the longest word StandIn returns: the longest token
// prefix, the mark and 8 hex digits. A short secret's stand-in is longer
// than the secret, so what a replaced word may grow by is this, not zero:
// bounds on redacted input (a command line, a bundle) count it per word.
var MaxStandInLen = func() int {
	n := 0
	for _, p := range tokenPrefixes {
		n = max(n, len(p))
	}
	return n + len(standInMark) + 8
}()

// StandInJSON is body with the string values of secret-looking keys
// replaced by their stand-ins; a body that is not a JSON object is kept.
func StandInJSON(body []byte) []byte {
	var m map[string]any
	if len(body) == 0 || json.Unmarshal(body, &m) != nil {
		return body
	}
	changed := false
	for k, v := range m {
		if s, ok := v.(string); ok && SecretKey(k) {
			m[k], changed = StandIn(s), true
		}
	}
	if !changed {
		return body
	}
	out, err := json.Marshal(m)
	if err != nil {
		return body
	}
	return out
}
