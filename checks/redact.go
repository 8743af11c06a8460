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

// Redact removes PEM blocks, GitLab tokens, bearer tokens, secret-looking
// assignments and long base64 runs from s.
func Redact(s string) string {
	for _, p := range secretPatterns {
		s = p.re.ReplaceAllString(s, p.with)
	}
	return s
}

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
