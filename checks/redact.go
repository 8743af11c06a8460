package checks

import (
	"regexp"
	"strings"
)

// Redaction is made where evidence is made (checks describe certificates and
// tokens instead of quoting them). This is the net under that rule: every
// reported string passes through Redact, so a quoted config line or a
// parser's error that echoes input cannot carry a secret out. The three
// finders below (ReplaceURLPasswords, ReplaceTokens, ReplaceSecretValues)
// are also what a bundle's writer redacts files with, replacing by
// stand-ins where Redact writes <redacted>: one rule for both.
var secretPatterns = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`-----BEGIN [A-Z0-9 ]+-----[\s\S]*?(-----END [A-Z0-9 ]+-----|$)`), "<PEM block redacted>"},
	{regexp.MustCompile(`(?i)(bearer\s+)[A-Za-z0-9_\-\.=:/+]{8,}`), "${1}<redacted>"},
	// A bare "key" must start a word: topology_key (the guide's anti-affinity
	// term) and key_file name no secret.
	{regexp.MustCompile(`(?i)((?:token|password|secret|client-key-data|client-certificate-data|\b(?:private[_-]?)?key)\s*[:=]\s*"?)[^"\s,}]{6,}`), "${1}<redacted>"},
	{regexp.MustCompile(`[A-Za-z0-9+/]{64,}={0,2}`), "<base64 redacted>"},
}

// Redact removes PEM blocks, GitLab tokens, bearer tokens, URL passwords,
// the values of secret-named keys and variables (SecretKey: secret,
// password, passwd, token, key, credential, auth, in any case and with any
// separator, in `k = v`, `k: v`, `K=v` and `"k": "v"` forms) and long base64
// runs from s.
func Redact(s string) string {
	s = ReplaceURLPasswords(s, func(string) string { return "<redacted>" })
	s = ReplaceTokens(s, func(prefix, _ string) string { return prefix + "-<redacted>" })
	for _, p := range secretPatterns {
		s = p.re.ReplaceAllString(s, p.with)
	}
	return ReplaceSecretValues(s, func(string, string) string { return "<redacted>" }, true)
}

// urlPassword is the user:password@ of a URL: the user stays.
var urlPassword = regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.\-]*://)([^/\s@:"']+):([^/\s@"']+)@`)

// ReplaceURLPasswords replaces the password of every URL in s (the
// user:password@ part) with with(password); the user stays.
func ReplaceURLPasswords(s string, with func(password string) string) string {
	return urlPassword.ReplaceAllStringFunc(s, func(m string) string {
		sub := urlPassword.FindStringSubmatch(m)
		if sub[3] == "<redacted>" || strings.Contains(sub[3], standInMark) {
			return m
		}
		return sub[1] + sub[2] + ":" + with(sub[3]) + "@"
	})
}

// tokenPrefixes are GitLab's token prefixes, longest of a family first
// (doc/security/tokens): what StandIn keeps, and what ReplaceTokens finds.
var tokenPrefixes = []string{"glrtr-", "glrt-", "glpat-", "glcbt-", "gldt-", "glptt-", "glft-", "glimt-", "glagent-", "GR1348941"}

// tokenShape is a GitLab token anywhere; the dash may be missing, as
// GR1348941 registration tokens have none.
var tokenShape = func() *regexp.Regexp {
	names := make([]string, len(tokenPrefixes))
	for i, p := range tokenPrefixes {
		names[i] = regexp.QuoteMeta(strings.TrimSuffix(p, "-"))
	}
	return regexp.MustCompile(`\b(` + strings.Join(names, "|") + `)-?[A-Za-z0-9_\-.]{4,}`)
}()

// ReplaceTokens replaces every GitLab token in s with with(prefix, token),
// prefix being its kind without the dash ("glrt").
func ReplaceTokens(s string, with func(prefix, token string) string) string {
	return tokenShape.ReplaceAllStringFunc(s, func(m string) string {
		if strings.Contains(m, standInMark) {
			return m
		}
		return with(tokenShape.FindStringSubmatch(m)[1], m)
	})
}

// ReplaceSecretValues replaces the value of every secret-named key in s
// with with(value), the value as written (its quotes or brackets
// included). It finds `k = v`, `k: v`, `K=v`, `"k": "v"` and `k = [...]`,
// and inside the quoted or bracketed value of any other key it looks again
// (environment = ["AWS_SECRET_ACCESS_KEY=..."]). Kept whatever the key:
// booleans, numbers and durations, paths, empty values, values already
// replaced, and the kubeconfig's *-data (base64 of PEM, which Redact's PEM
// and base64 rules and a bundle's stand-ins handle). With prose, a bare
// lowercase word after a colon is text ("key: open /ssh/id: permission
// denied"), not a secret, which has digits, capitals or symbols.
func ReplaceSecretValues(s string, with func(key, value string) string, prose bool) string {
	return secretAssignment.ReplaceAllStringFunc(s, func(m string) string {
		sub := secretAssignment.FindStringSubmatch(m)
		lead, key, sep, val := sub[1], sub[2], sub[3], sub[4]
		quoted := strings.ContainsRune(`"'[`, rune(val[0]))
		if !SecretKey(key) || strings.HasSuffix(key, "-data") {
			if quoted && len(val) > 2 {
				return lead + key + sep + val[:1] + ReplaceSecretValues(val[1:], with, prose)
			}
			return m
		}
		inner := strings.Trim(val, `"'[] `)
		switch {
		case inner == "" || !quoted && plainValue.MatchString(val), strings.HasPrefix(inner, "/"),
			strings.Contains(val, "<redacted>"), strings.Contains(val, standInMark) && val[0] != '[':
			return m
		case prose && strings.Contains(sep, ":") && !quoted && lowerWord.MatchString(val):
			return m
		}
		return lead + key + sep + with(key, val)
	})
}

// secretAssignment is one key and its value: the value quoted, bracketed
// (a TOML array) or bare up to a separator.
var secretAssignment = regexp.MustCompile(`(^|[\s"'{,(\[])([A-Za-z_][A-Za-z0-9_.\-]*)("?\s*[:=]\s*)("[^"\n]*"|'[^'\n]*'|\[[^\]\n]*\]|[^\s"',}\]#]+)`)

// lowerWord is a bare word of small letters.
var lowerWord = regexp.MustCompile(`^[a-z]+$`)

// plainValue is a bare value that is no secret whatever its key: a
// boolean, a number or a duration.
var plainValue = regexp.MustCompile(`^(true|false|null|[+-]?[0-9][0-9_.:eE+-]*[smhd]?)$`)

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
