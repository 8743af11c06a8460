package redact

import (
	"regexp"
	"strings"
	"sync"

	"github.com/socialwebcomputer/doctor/internal/text/lazyre"
)

// Redaction is made where evidence is made (checks describe certificates and
// tokens instead of quoting them). This is the net under that rule: every
// reported string passes through Text, so a quoted config line or a
// parser's error that echoes input cannot carry a secret out. The three
// finders below (ReplaceURLPasswords, ReplaceTokens, ReplaceSecretValues)
// are also what a bundle's writer redacts files with, replacing by
// stand-ins where Text writes <redacted>: one rule for both.
var secretPatterns = sync.OnceValue(func() []secretPattern {
	return []secretPattern{
		{regexp.MustCompile(`-----BEGIN [A-Z0-9 ]+-----[\s\S]*?(-----END [A-Z0-9 ]+-----|$)`), "<PEM block redacted>"},
		{regexp.MustCompile(`(?i)(bearer\s+)[A-Za-z0-9_\-\.=:/+]{8,}`), "${1}<redacted>"},
		// A bare "key" must start a word: topology_key (the guide's anti-affinity
		// term) and key_file name no secret.
		{regexp.MustCompile(`(?i)((?:token|password|secret|client-key-data|client-certificate-data|\b(?:private[_-]?)?key)\s*[:=]\s*"?)[^"\s,}]{6,}`), "${1}<redacted>"},
		{regexp.MustCompile(`[A-Za-z0-9+/]{64,}={0,2}`), "<base64 redacted>"},
	}
})

type secretPattern struct {
	re   *regexp.Regexp
	with string
}

// Text removes PEM blocks, GitLab tokens, bearer tokens, URL userinfo,
// the values of secret-named keys and variables (SecretKey: secret,
// password, passwd, token, key, credential, auth, in any case and with any
// separator, in `k = v`, `k: v`, `K=v` and `"k": "v"` forms) and long base64
// runs from s.
func Text(s string) string {
	if !mayHoldSecret(s) {
		return s
	}
	return redactAll(s)
}

// redactAll is Text without its fast path: every rule, on any text.
func redactAll(s string) string {
	// URL userinfo first and whole: a user alone can be a token
	// (https://glpat-…@host, https://x-access-token@host), and taken later
	// "token:…@host/…" would read as one assignment swallowing the host.
	s = urlUserinfo().ReplaceAllString(s, "${1}<redacted>@")
	s = ReplaceTokens(s, func(prefix, _ string) string { return prefix + "-<redacted>" })
	for _, p := range secretPatterns() {
		s = p.re.ReplaceAllString(s, p.with)
	}
	return ReplaceSecretValues(s, func(string, string) string { return "<redacted>" }, true)
}

// urlUserinfo is the userinfo of a URL (user:password@, or user@), after
// its scheme.
var urlUserinfo = lazyre.MustCompile(`([a-zA-Z][a-zA-Z0-9+.\-]*://)[^/\s@"'<>]+@`)

// StripUserinfo is a URL as doctor prints it: without its userinfo, which
// Text would mark <redacted>. Text that is no URL is returned as it is.
func StripUserinfo(s string) string {
	return urlUserinfo().ReplaceAllString(s, "${1}")
}

// urlPassword is the user:password@ of a URL: the user stays.
var urlPassword = lazyre.MustCompile(`([a-zA-Z][a-zA-Z0-9+.\-]*://)([^/\s@:"']+):([^/\s@"']+)@`)

// ReplaceURLPasswords replaces the password of every URL in s (the
// user:password@ part) with with(password); the user stays.
func ReplaceURLPasswords(s string, with func(password string) string) string {
	return urlPassword().ReplaceAllStringFunc(s, func(m string) string {
		sub := urlPassword().FindStringSubmatch(m)
		if sub[3] == "<redacted>" || strings.Contains(sub[3], standInMark) {
			return m
		}
		return sub[1] + sub[2] + ":" + with(sub[3]) + "@"
	})
}

// urlUser is the user of a URL's userinfo, and the password after it.
var urlUser = lazyre.MustCompile(`([a-zA-Z][a-zA-Z0-9+.\-]*://)([^/\s@:"'<>]+)((?::[^/\s@"'<>]*)?@)`)

// ReplaceURLUsers replaces the user of every URL in s (the user of
// user:password@ or user@) with with(user): a user alone can be a token
// (https://glpat-…@host). The password is ReplaceURLPasswords'.
func ReplaceURLUsers(s string, with func(user string) string) string {
	return urlUser().ReplaceAllStringFunc(s, func(m string) string {
		sub := urlUser().FindStringSubmatch(m)
		if sub[2] == "<redacted>" || strings.Contains(sub[2], standInMark) {
			return m
		}
		return sub[1] + with(sub[2]) + sub[3]
	})
}

// tokenPrefixes are GitLab's token prefixes, longest of a family first
// (doc/security/tokens): what StandIn keeps, and what ReplaceTokens finds.
var tokenPrefixes = []string{"glrtr-", "glrt-", "glpat-", "glcbt-", "gldt-", "glptt-", "glft-", "glimt-", "glagent-", "GR1348941"}

// tokenShape is a GitLab token anywhere; the dash may be missing, as
// GR1348941 registration tokens have none. Anywhere means glued to what
// comes before it too: a proxy's status line "0glrt-…0" kept its token when
// the prefix had to start a word (FuzzReadAnswer found it).
var tokenShape = sync.OnceValue(func() *regexp.Regexp {
	names := make([]string, len(tokenPrefixes))
	for i, p := range tokenPrefixes {
		names[i] = regexp.QuoteMeta(strings.TrimSuffix(p, "-"))
	}
	return regexp.MustCompile(`(` + strings.Join(names, "|") + `)-?[A-Za-z0-9_\-.]{4,}`)
})

// ReplaceTokens replaces every GitLab token in s with with(prefix, token),
// prefix being its kind without the dash ("glrt").
func ReplaceTokens(s string, with func(prefix, token string) string) string {
	return tokenShape().ReplaceAllStringFunc(s, func(m string) string {
		if strings.Contains(m, standInMark) {
			return m
		}
		return with(tokenShape().FindStringSubmatch(m)[1], m)
	})
}

// ReplaceSecretValues replaces the value of every secret-named key in s
// with with(value), the value as written (its quotes or brackets
// included). It finds `k = v`, `k: v`, `K=v`, `"k": "v"` and `k = [...]`,
// and inside the quoted or bracketed value of any other key it looks again
// (environment = ["AWS_SECRET_ACCESS_KEY=..."]). Kept whatever the key:
// booleans, numbers and durations, paths, empty values, values already
// replaced or described (<string, 22 characters, looks secret>, <36
// bytes, not shown>), and the kubeconfig's *-data (base64 of PEM, which Text's PEM
// and base64 rules and a bundle's stand-ins handle). With prose, a bare
// lowercase word after a colon is text ("key: open /ssh/id: permission
// denied"), not a secret, which has digits, capitals or symbols.
func ReplaceSecretValues(s string, with func(key, value string) string, prose bool) string {
	s = replaceEnvPairs(s, with)
	s = replaceBlockFlagValues(s, with)
	s = replaceFlagAssignments(s, with)
	return secretAssignment().ReplaceAllStringFunc(s, func(m string) string {
		sub := secretAssignment().FindStringSubmatch(m)
		lead, key, sep, val := sub[1], sub[2], sub[3], sub[4]
		quoted := strings.ContainsRune(`"'[{`, rune(val[0]))
		if !SecretKey(key) || strings.HasSuffix(key, "-data") {
			if val[0] == '[' {
				val = replaceFlagValues(val, with)
			}
			if quoted && len(val) > 2 && !strings.HasSuffix(key, "-data") {
				return lead + key + sep + val[:1] + ReplaceSecretValues(val[1:], with, prose)
			}
			if !strings.HasSuffix(key, "-data") && nestedAssignment().MatchString(val) {
				// "debug: AWS_SECRET_ACCESS_KEY=…": the value is itself an
				// assignment, whose key may say secret. Not base64 (a
				// *-data value, a padded token): read as "<key>=<pad>" its
				// random letters could spell "key" or "auth".
				return lead + key + sep + ReplaceSecretValues(val, with, prose)
			}
			return lead + key + sep + val
		}
		inner := strings.Trim(val, `"'[] `)
		switch {
		case inner == "" || !quoted && plainValue().MatchString(val), strings.HasPrefix(inner, "/"), strings.HasPrefix(val, "<"),
			strings.Contains(val, "<redacted>"), strings.Contains(val, standInMark) && val[0] != '[':
			return m
		case prose && strings.Contains(sep, ":") && !quoted && lowerWord().MatchString(val):
			return m
		}
		return lead + key + sep + with(key, val)
	})
}

// envPair is a Kubernetes-style environment entry, name then value, in a
// flow mapping ({name: K, value: v}) or on two lines of a block one.
var envPair = lazyre.MustCompile(`(\bname["']?\s*:\s*["']?([A-Za-z_][A-Za-z0-9_]*)["']?\s*[,\n][\s-]*["']?value["']?\s*:\s*)("[^"\n]*"|'[^'\n]*'|[^\s,}\]"']+)`)

// replaceEnvPairs replaces the value of every secret-named entry of an
// env list: the name is on one key, the secret on the next.
func replaceEnvPairs(s string, with func(key, value string) string) string {
	return envPair().ReplaceAllStringFunc(s, func(m string) string {
		sub := envPair().FindStringSubmatch(m)
		v := strings.Trim(sub[3], `"'`)
		if !SecretKey(sub[2]) || v == "" || strings.HasPrefix(v, "/") || strings.Contains(v, "<redacted>") || strings.Contains(v, standInMark) {
			return m
		}
		return sub[1] + with(sub[2], sub[3])
	})
}

// secretFlag is a secret-named flag and the argument after it in an
// argv array (an exec plugin's args: ["--token", "…"]).
var secretFlag = lazyre.MustCompile(`(["']?-{1,2}([A-Za-z][A-Za-z0-9_-]*)["']?\s*,\s*)("[^"\n]*"|'[^'\n]*'|[^\s,\]"']+)`)

// replaceFlagValues replaces the argument of every secret-named flag in
// an array.
func replaceFlagValues(arr string, with func(key, value string) string) string {
	return secretFlag().ReplaceAllStringFunc(arr, func(m string) string {
		sub := secretFlag().FindStringSubmatch(m)
		if !SecretKey(sub[2]) || strings.Contains(sub[3], "<redacted>") || strings.Contains(sub[3], standInMark) {
			return m
		}
		return sub[1] + with(sub[2], sub[3])
	})
}

// nestedAssignment is a value that begins as an assignment of its own: a
// short name, then = or :, then something other than base64 padding.
var nestedAssignment = lazyre.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}[=:][^=:]`)

// blockFlag is a secret-named flag as one item of a YAML block sequence
// and its argument as the next (an exec plugin's args, as kubectl writes
// them):
//
//	args:
//	- --token
//	- …
var blockFlag = lazyre.MustCompile(`(?m)(^[ \t]*-[ \t]+["']?-{1,2}([A-Za-z][A-Za-z0-9_-]*)["']?[ \t]*\n[ \t]*-[ \t]+)("[^"\n]*"|'[^'\n]*'|[^\s#]+)`)

// replaceBlockFlagValues replaces the argument after every secret-named
// flag of a block sequence.
func replaceBlockFlagValues(s string, with func(key, value string) string) string {
	return blockFlag().ReplaceAllStringFunc(s, func(m string) string {
		sub := blockFlag().FindStringSubmatch(m)
		if !SecretKey(sub[2]) || strings.HasPrefix(strings.Trim(sub[3], `"'`), "-") || strings.Contains(sub[3], "<redacted>") || strings.Contains(sub[3], standInMark) {
			return m
		}
		return sub[1] + with(sub[2], sub[3])
	})
}

// flagAssignment is a secret-named flag with its argument after `=`
// (--token=…, -password=…), anywhere: a command line, an args item.
var flagAssignment = lazyre.MustCompile(`((?:^|[\s"'\[,])-{1,2}([A-Za-z][A-Za-z0-9_-]*)=)("[^"\n]*"|'[^'\n]*'|[^\s"',\]]+)`)

// replaceFlagAssignments replaces the argument of every secret-named
// --flag=value.
func replaceFlagAssignments(s string, with func(key, value string) string) string {
	return flagAssignment().ReplaceAllStringFunc(s, func(m string) string {
		sub := flagAssignment().FindStringSubmatch(m)
		v := strings.Trim(sub[3], `"'`)
		if !SecretKey(sub[2]) || v == "" || strings.HasPrefix(v, "/") || plainValue().MatchString(v) || strings.Contains(v, "<redacted>") || strings.Contains(v, standInMark) {
			return m
		}
		return sub[1] + with(sub[2], sub[3])
	})
}

// secretAssignment is one key and its value on its line: the value
// quoted, bracketed (a TOML array), braced (an inline table) or bare up to
// a separator. A key that ends its line (YAML's "user:") has no value
// there, and must not take the next line's key for one.
var secretAssignment = lazyre.MustCompile(`(^|[\s"'{,(\[])([A-Za-z_][A-Za-z0-9_.\-]*)("?[ \t]*[:=][ \t]*)("[^"\n]*"|'[^'\n]*'|\[[^\]\n]*\]|\{[^}\n]*\}|[^\s"',}\]#]+)`)

// lowerWord is a bare word of small letters.
var lowerWord = lazyre.MustCompile(`^[a-z]+$`)

// plainValue is a bare value that is no secret whatever its key: a
// boolean, a number or a duration.
var plainValue = lazyre.MustCompile(`^(true|false|null|[+-]?[0-9][0-9_.:eE+-]*[smhd]?)$`)

// SecretKey reports whether a key or variable name says its value is a
// secret: it contains secret, password, passwd, token, key, credential or
// auth, in any case and with any separator. Names of paths to secrets
// (key_path, tls-key-file, KUBECONFIG) and the few keys whose value is a
// word, not a secret (topology_key), are not.
func SecretKey(name string) bool {
	n := strings.ToLower(name)
	// image_pull_secrets lists Secrets by name: names, not secrets.
	for _, suffix := range []string{"path", "file", "dir", "_name", "type", "topology_key", "kubeconfig", "pull_secrets"} {
		if strings.HasSuffix(n, suffix) {
			return false
		}
	}
	for _, w := range []string{"secret", "password", "passwd", "token", "key", "credential", "auth"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// secretWords are the words every rule of Text but three needs before
// it can match: SecretKey's words, and "bearer". The three are found by
// their own marks: URL userinfo by "@", GitLab tokens by their prefixes
// (all begin "gl" or "GR"), PEM blocks by "-----BEGIN", and long base64 by
// its run.
var secretWords = []string{"secret", "password", "passwd", "token", "key", "credential", "auth", "bearer"}

// mayHoldSecret is Text's fast path: false only when no rule of
// redactAll can match s. Most reported text (a check's cause, a pod's
// name, a count) holds none of the marks, and the rules' regular
// expressions cost a healthy run a third of its CPU when run on all of it
// (the small-cluster profile, bench/RESULTS.md). FuzzRedact holds the two
// equal on every input.
func mayHoldSecret(s string) bool {
	if strings.IndexByte(s, '@') >= 0 || strings.Contains(s, "-----BEGIN") ||
		strings.Contains(s, "gl") || strings.Contains(s, "GR") || hasBase64Run(s, 64) {
		return true
	}
	lower := strings.ToLower(s)
	for _, w := range secretWords {
		if strings.Contains(lower, w) {
			return true
		}
	}
	return false
}

// hasBase64Run reports whether s has n base64 letters in a row.
func hasBase64Run(s string, n int) bool {
	run := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '+' || c == '/' {
			if run++; run >= n {
				return true
			}
		} else {
			run = 0
		}
	}
	return false
}

// Secretlike reports whether the net would take something out of v, a
// single value (a path, a name, a URL) that a fix is about to print as
// code: then no fix prints it, since redacting rendered code changes what
// it does. The long-base64 rule does not judge an absolute path: a path is
// no secret, and a test's temporary directory (/tmp/TestAVeryLongName…)
// is a run of 64 letters.
func Secretlike(v string) bool {
	if !mayHoldSecret(v) {
		return false
	}
	if urlUserinfo().MatchString(v) || tokenShape().MatchString(v) {
		return true
	}
	pats := secretPatterns()
	for _, p := range pats[:len(pats)-1] {
		if p.re.MatchString(v) {
			return true
		}
	}
	if !strings.HasPrefix(v, "/") && pats[len(pats)-1].re.MatchString(v) {
		return true
	}
	return ReplaceSecretValues(v, func(string, string) string { return "<redacted>" }, true) != v
}
