package keep

import (
	"bytes"
	"encoding/base64"
	"net/http"
	"strings"

	"github.com/socialwebcomputer/doctor/internal/redact"
)

// Secrets are the credential a request presented, in every form an answer
// could hold it: a server (or a proxy on the way) that reflects the
// request's Authorization header in its body or headers would otherwise
// put it where the checks and the bundle read. They are replaced by their
// stand-in (redact.StandIn) wherever they appear, byte for byte: no
// pattern decides what is secret, the request does.
type Secrets struct {
	find [][]byte // longest first, so a value is replaced before a part of it
	with [][]byte
}

// minSecret is the shortest value replaced on its own: a basic-auth
// password of a few letters ("admin") is in every other answer as a word,
// and replacing it there would change what the checks read. The header
// value that carries it, and its base64, are replaced whatever its length.
const minSecret = 8

// RequestSecrets are the credentials r carries: its Authorization header
// whole, a bearer token, and basic auth's base64 and password.
func RequestSecrets(r *http.Request) *Secrets {
	var vals []string
	for _, h := range r.Header.Values("Authorization") {
		vals = append(vals, h)
		scheme, cred, ok := strings.Cut(h, " ")
		if !ok {
			continue
		}
		cred = strings.TrimSpace(cred)
		vals = append(vals, cred)
		if strings.EqualFold(scheme, "Basic") {
			if raw, err := base64.StdEncoding.DecodeString(cred); err == nil {
				if _, pass, ok := strings.Cut(string(raw), ":"); ok && len(pass) >= minSecret {
					vals = append(vals, pass)
				}
				vals = append(vals, string(raw))
			}
		}
	}
	return NewSecrets(vals...)
}

// NewSecrets are the given values, each also as JSON would escape it.
func NewSecrets(vals ...string) *Secrets {
	s := &Secrets{}
	seen := map[string]bool{}
	add := func(v string) {
		if v == "" || seen[v] {
			return
		}
		seen[v] = true
		s.find = append(s.find, []byte(v))
	}
	for _, v := range vals {
		if len(v) < minSecret && !strings.Contains(v, " ") && !isBase64Cred(v) {
			continue
		}
		add(v)
		enc := appendJSONString(nil, []byte(v))
		add(string(enc[1 : len(enc)-1]))
	}
	// Longest first: "Bearer tok" before "tok".
	for i := 1; i < len(s.find); i++ {
		for j := i; j > 0 && len(s.find[j]) > len(s.find[j-1]); j-- {
			s.find[j], s.find[j-1] = s.find[j-1], s.find[j]
		}
	}
	for _, f := range s.find {
		s.with = append(s.with, []byte(redact.StandIn(string(f))))
	}
	return s
}

// isBase64Cred tells a basic credential's base64, replaced whatever its
// length (it is the header's own bytes).
func isBase64Cred(v string) bool {
	raw, err := base64.StdEncoding.DecodeString(v)
	return err == nil && bytes.IndexByte(raw, ':') >= 0
}

// None says there is nothing to replace.
func (s *Secrets) None() bool { return s == nil || len(s.find) == 0 }

// In says whether b holds any of the secrets.
func (s *Secrets) In(b []byte) bool {
	if s.None() {
		return false
	}
	for _, f := range s.find {
		if bytes.Contains(b, f) {
			return true
		}
	}
	return false
}

// Replace is b with every secret replaced by its stand-in; b itself when
// it holds none.
func (s *Secrets) Replace(b []byte) []byte {
	if !s.In(b) {
		return b
	}
	for i, f := range s.find {
		b = bytes.ReplaceAll(b, f, s.with[i])
	}
	return b
}

// ReplaceString is Replace for a string.
func (s *Secrets) ReplaceString(v string) string {
	if !s.In([]byte(v)) {
		return v
	}
	return string(s.Replace([]byte(v)))
}

// Header replaces the secrets in every value of h, in place.
func (s *Secrets) Header(h http.Header) {
	if s.None() {
		return
	}
	for k, vs := range h {
		for i, v := range vs {
			vs[i] = s.ReplaceString(v)
		}
		h[k] = vs
	}
}
