package checks

import (
	"regexp"
	"strings"
)

// Redaction is made where evidence is made (checks describe certificates and
// tokens instead of quoting them). This is the net under that rule: every
// reported string passes through Redact, so a quoted config line or a
// parser's error that echoes input cannot carry a secret out.
var secretPatterns = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`-----BEGIN [A-Z0-9 ]+-----[\s\S]*?(-----END [A-Z0-9 ]+-----|$)`), "<PEM block redacted>"},
	{regexp.MustCompile(`\b(glrt|glpat|glptt|gldt|glrtr|glcbt|GR1348941)-?[A-Za-z0-9_\-\.]{4,}`), "$1-<redacted>"},
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
	s = urlPassword.ReplaceAllString(s, "${1}${2}:<redacted>@")
	for _, p := range secretPatterns {
		s = p.re.ReplaceAllString(s, p.with)
	}
	return redactAssignments(s)
}

// redactAssignments replaces the values of secret-named keys; inside the
// quoted or bracketed value of another key (environment = ["K=v", ...])
// it looks again, one level in at a time.
func redactAssignments(s string) string {
	return secretAssignment.ReplaceAllStringFunc(s, func(m string) string {
		sub := secretAssignment.FindStringSubmatch(m)
		lead, key, sep, val := sub[1], sub[2], sub[3], sub[4]
		if !SecretKey(key) {
			if len(val) > 2 && strings.ContainsRune(`"'[`, rune(val[0])) {
				return lead + key + sep + val[:1] + redactAssignments(val[1:])
			}
			return m
		}
		if plainValue.MatchString(val) || strings.HasPrefix(strings.Trim(val, `"'[`), "/") || strings.Contains(val, "<redacted>") {
			return m
		}
		// Prose says "key: open /ssh/id: permission denied": after a colon a
		// bare lowercase word is text, not a secret, which has digits,
		// capitals or symbols.
		if strings.Contains(sep, ":") && !strings.ContainsRune(`"'[`, rune(val[0])) && lowerWord.MatchString(val) {
			return m
		}
		return lead + key + sep + "<redacted>"
	})
}

// urlPassword is the user:password@ of a URL: the user stays.
var urlPassword = regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.\-]*://)([^/\s@:"']+):[^/\s@"']+@`)

// secretAssignment is one key and its value: the value quoted, bracketed
// (a TOML array) or bare up to a separator.
var secretAssignment = regexp.MustCompile(`(^|[\s"'{,(\[])([A-Za-z_][A-Za-z0-9_.\-]*)("?\s*[:=]\s*)("[^"\n]*"|'[^'\n]*'|\[[^\]\n]*\]|[^\s"',}\]]+)`)

// lowerWord is a bare word of small letters.
var lowerWord = regexp.MustCompile(`^[a-z]+$`)

// plainValue is a value that is no secret whatever its key: a boolean, a
// number or a duration, empty, or a word doctor put in place of one.
var plainValue = regexp.MustCompile(`^("?)(true|false|null|[+-]?[0-9][0-9_.:eE+-]*[smhd]?|)("?)$`)

// SecretKey reports whether a key or variable name says its value is a
// secret: it contains secret, password, passwd, token, key, credential or
// auth, in any case and with any separator. Names of paths to secrets
// (key_path, tls-key-file, KUBECONFIG) and the few keys whose value is a
// word, not a secret (topology_key), are not.
func SecretKey(name string) bool {
	n := strings.ToLower(name)
	for _, suffix := range []string{"path", "file", "dir", "_name", "type", "topology_key", "kubeconfig"} {
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
