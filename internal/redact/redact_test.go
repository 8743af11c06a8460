package redact_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/internal/redact"
)

const pemBlock = "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBnVJk5oDrs5VMc6dMgoAoGCCqGSM49\nAwEHoUQDQgAE\n-----END EC PRIVATE KEY-----"

func TestRedactRemovesSecrets(t *testing.T) {
	for _, tc := range []struct{ in, secret string }{
		{"key: " + pemBlock + " trailing", "MHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBnVJk5oDrs5VMc6dMgoAoGCCqGSM49"},
		{"-----BEGIN CERTIFICATE-----\nMIIBunterminated", "MIIBunterminated"},
		{`token = "glrt-t3_AbCdEfGhIjKlMnOp"`, "t3_AbCdEfGhIjKlMnOp"},
		{"url https://gitlab-ci-token:glrt-AbCdEfGh123@gitlab.example.invalid/x.git", "AbCdEfGh123"},
		{"glpat-0123456789abcdef", "0123456789abcdef"},
		{"Authorization: Bearer eyJhbGciOiJSUzI1NiJ9.payload.sig", "eyJhbGciOiJSUzI1NiJ9"},
		{"authorization: bearer abcdefgh12345678", "abcdefgh12345678"},
		{"password=hunter2hunter2", "hunter2hunter2"},
		{"client-key-data: LS0tLS1CRUdJTiBFQyBQUklWQVRFIEtFWS0tLS0t", "LS0tLS1CRUdJTiBFQyBQUklWQVRFIEtFWS0tLS0t"},
		{"blob " + strings.Repeat("QUJD", 20) + "==", strings.Repeat("QUJD", 20)},
		// URL passwords, keys of any spelling, environment variables, arrays.
		{"proxy http://alice:s3cretPassw0rd@proxy.example.invalid:3128", "s3cretPassw0rd"},
		{"DATABASE_URL=postgres://app:pgS3cretValue@db.example.invalid/app", "pgS3cretValue"},
		{`api_key = "ak_0123456789abcdef"`, "ak_0123456789abcdef"},
		{`SecretKey = "wJalrXUtnFEMIK7MDENG"`, "wJalrXUtnFEMIK7MDENG"},
		{`AccessKey: AKIAIOSFODNN7EXAMPLE`, "AKIAIOSFODNN7EXAMPLE"},
		{`environment = ["AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMIK7MDENGbPx"]`, "wJalrXUtnFEMIK7MDENGbPx"},
		{`credential = ["c0ffee-1234-5678"]`, "c0ffee-1234-5678"},
		{`{"auth": "dXNlcjpwYXNzd29yZA"}`, "dXNlcjpwYXNzd29yZA"},
		{`webhook = "https://hooks:xoxbTokenValue@chat.example.invalid/x"`, "xoxbTokenValue"},
		// An assignment inside another key's unquoted value, as a plugin's
		// stderr prints one.
		{"debug: AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMIK7MDENGbPx here", "wJalrXUtnFEMIK7MDENGbPx"},
		// An exec plugin's flags: in a block sequence, and as --flag=value.
		{"    args:\n    - get-token\n    - --token\n    - Zq8Lm2Tx9Wb4Kp7N\n", "Zq8Lm2Tx9Wb4Kp7N"},
		{"    args:\n    - \"--client-secret\"\n    - \"Zq8Lm2Tx9Wb4Kp7N\"\n", "Zq8Lm2Tx9Wb4Kp7N"},
		{"gitlab-runner register --token=glrtLm2Tx9Wb4Kp7NqZ8 --name x", "glrtLm2Tx9Wb4Kp7NqZ8"},
		{`args: ["--password=Zq8Lm2Tx9Wb4Kp7N"]`, "Zq8Lm2Tx9Wb4Kp7N"},
	} {
		out := redact.Text(tc.in)
		if strings.Contains(out, tc.secret) {
			t.Errorf("Text(%q) = %q: the secret survived", tc.in, out)
		}
	}
}

// Base64 is not read as an assignment: a padded value whose random
// letters spell a secret word ("…authKEY…==") stays whole, or a kubeconfig's
// certificate would be broken in a bundle.
func TestRedactKeepsBase64WithSecretWordsInIt(t *testing.T) {
	for _, in := range []string{
		"    client-certificate-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJauthKEYtokenQ==",
		"    certificate-authority-data: QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVphYmNkZWZnaGlqa2xtbm9wcXJzdHV2d3h5ejAxMjM0NTY3ODkrLw==",
		"value: dGVzdGtleQ==",
		`{"client-key-data": "LS0tLS1CRUdJTiBFQyBQUklWQVRFauthKEYtokenQ=="}`,
	} {
		if out := redact.ReplaceSecretValues(in, func(string, string) string { return "<redacted>" }, true); out != in {
			t.Errorf("ReplaceSecretValues(%q) = %q: base64 must stay whole", in, out)
		}
	}
}

func TestRedactKeepsOrdinaryText(t *testing.T) {
	for _, s := range []string{
		"",
		"config.toml does not decode: toml: line 10 (last key \"runners.output_limit\"): expected value but found '=' instead",
		"/etc/gitlab-runner/tenant-ci/kubeconfig.yaml: no such file or directory",
		"client certificate ECDSA P-256, CN=did:plc:ewvi7nxzyoun6zhxrhs64oiz, groups=[socialweb.computer:cluster-owners], valid 2026-11-29T11:00Z to 2026-11-29T23:00Z",
		"https://kcp.socialweb.invalid/clusters/root:k3x9q2mf:tenant-ci:clusters",
		"pid 4242 (uid 999 gitlab-runner): /usr/bin/gitlab-runner run --config /etc/gitlab-runner/config.toml",
		"token not set", // a word, not an assignment
		"KUBECONFIG=/etc/gitlab-runner/tenant-ci/kubeconfig.yaml",
		`key_path = "/ssh/id_ed25519"`,
		"use_static_credentials = true",
		"unhealthy_requests_limit = 3",
		"https://gitlab.example.invalid/api/v4/runners/verify",
		"tls-key-file = /etc/gitlab-runner/certs/client.key",
		`image_pull_secrets = ["regcred"]`,
	} {
		if out := redact.Text(s); out != s {
			t.Errorf("Text changed ordinary text:\n in: %q\nout: %q", s, out)
		}
	}
}

// FuzzRedact embeds known secrets in arbitrary text: none may survive, the
// output stays within a small factor of the input, and nothing panics.
func FuzzRedact(f *testing.F) {
	f.Add("", "")
	f.Add("token = \"", "\"")
	f.Add("-----BEGIN X-----", "-----END X-----")
	f.Add("Authorization:", "\n")
	f.Add("key=", strings.Repeat("A", 70))
	const (
		glrt   = "glrtSECRETzq9x8c7v6b5n"
		bearer = "brSECRETqw8e7r6t5y4u3"
		pemMid = "PEMSECRETaz1sx2dc3fv4"
	)
	pemHeader := regexp.MustCompile(`-----BEGIN [A-Z0-9 ]+-----`)
	const (
		urlPass = "urlSECRETpw9q8w7e6r"
		keyVal  = "kvSECRETv1a2s3d4f5"
		envVal  = "envSECRETx9c8v7b6n5"
	)
	const (
		urlUser  = "usrSECRETq1w2e3r4t5"
		named    = "nmSECRETz0x9c8v7b6"
		namedEnv = "neSECRETm1n2b3v4c5"
	)
	f.Fuzz(func(t *testing.T, prefix, suffix string) {
		// The fuzzer's input also spells a secret-named key: which word,
		// in which case, with which separators, in which assignment form.
		key, assign := secretKeySpelling(prefix, suffix)
		in := prefix + " glrt-" + glrt + " Bearer " + bearer + " \n-----BEGIN CERTIFICATE-----\n" + pemMid + "\n-----END CERTIFICATE-----\n" +
			" https://u:" + urlPass + "@h.invalid/ " + "\napi_key = \"" + keyVal + "\"\n AWS_SECRET_ACCESS_KEY=" + envVal + "\n" +
			" git clone https://" + urlUser + "@h.invalid/x.git\n" + fmt.Sprintf(assign, key, named) + "\n" +
			" environment = [\"" + strings.ToUpper(strings.NewReplacer("-", "_", ".", "_").Replace(key)) + "=" + namedEnv + "\"]\n" + suffix
		out := redact.Text(in)
		for _, s := range []string{glrt, bearer, pemMid, urlPass, keyVal, envVal, urlUser, named, namedEnv} {
			if strings.Contains(out, s) {
				t.Fatalf("secret %q survived in %q", s, out)
			}
		}
		if len(out) > 2*len(in)+64 {
			t.Fatalf("output grew from %d to %d bytes", len(in), len(out))
		}
		if pemHeader.MatchString(out) {
			t.Fatalf("a PEM header survived: %q", out)
		}
		// Arbitrary input alone: no panic, bounded, and the fast path
		// changes nothing: it skips only text no rule matches.
		o := redact.Text(prefix)
		if len(o) > 2*len(prefix)+64 {
			t.Fatalf("output grew from %d to %d bytes", len(prefix), len(o))
		}
		if all := redact.RedactAll(prefix); o != all {
			t.Fatalf("Text(%q) = %q, every rule gives %q", prefix, o, all)
		}
	})
}

func TestRedactLeavesKeyNamedSettings(t *testing.T) {
	// The guide's anti-affinity fix names topology_key; it is not a secret.
	s := `topology_key = "kubernetes.io/hostname"`
	if out := redact.Text(s); out != s {
		t.Errorf("Text(%q) = %q", s, out)
	}
	for _, s := range []string{"private_key: abcdefghij", "runner_token=abcdefghij", "key = abcdefghij"} {
		if out := redact.Text(s); strings.Contains(out, "abcdefghij") {
			t.Errorf("Text(%q) = %q", s, out)
		}
	}
}

// secretKeySpelling picks, from the fuzzer's input, a key containing one
// of the words that make a name secret (secret, password, passwd, token,
// key, credential, auth), in some case and with some separator, and the
// form it is assigned in (k = "v", k: v, K=v, "k": "v").
func secretKeySpelling(a, b string) (key, assign string) {
	words := []string{"secret", "password", "passwd", "token", "key", "credential", "auth"}
	seps := []string{"_", "-", ".", ""}
	forms := []string{`%s = "%s"`, `%s: %s`, `%s=%s`, `"%s": "%s"`, `%s = '%s'`}
	n := len(a)*31 + len(b)
	if len(a) > 0 {
		n += int(a[0])
	}
	w, sep := words[n%len(words)], seps[n/7%len(seps)]
	parts := []string{"my", w, "value"}
	switch n / 28 % 4 {
	case 0:
		w = strings.Join(parts, sep)
	case 1:
		w = strings.ToUpper(strings.Join(parts, sep))
	case 2: // CamelCase: MyTokenValue
		for i, p := range parts {
			parts[i] = strings.ToUpper(p[:1]) + p[1:]
		}
		w = strings.Join(parts, sep)
	default:
		w = strings.Join(parts[1:], sep)
	}
	return w, forms[n/112%len(forms)]
}

// Every spelling FuzzRedact can make is a key SecretKey knows, and Text
// takes its value away in every form.
func TestRedactEverySecretKeySpelling(t *testing.T) {
	for i := 0; i < 600; i++ {
		a, b := strings.Repeat("x", i/31), strings.Repeat("y", i%31)
		key, assign := secretKeySpelling(a, b)
		if !redact.SecretKey(key) {
			t.Errorf("SecretKey(%q) = false", key)
		}
		in := fmt.Sprintf(assign, key, "v4lSECRETk9j8h7")
		if out := redact.Text(in); strings.Contains(out, "v4lSECRETk9j8h7") {
			t.Errorf("Text(%q) = %q", in, out)
		}
	}
}

// What doctor wrote in place of a secret is kept whole: a description is
// no value to redact again.
func TestRedactKeepsDescriptions(t *testing.T) {
	for _, s := range []string{
		"api_key = <string, 22 characters, looks secret>",
		"Authorization: <36 bytes, not shown>",
		`environment = ["AWS_SECRET_ACCESS_KEY=<string, 40 characters, looks secret>"]`,
	} {
		if out := redact.Text(s); out != s {
			t.Errorf("Text(%q) = %q", s, out)
		}
	}
}
