package bundle

import (
	"bytes"
	"encoding/json"
	"path"
	"slices"
	"strings"

	"github.com/socialwebcomputer/doctor/internal/redact"
	"github.com/socialwebcomputer/doctor/internal/text/lazyre"
)

// The bundle is redacted where it is written, file by file: a secret is
// replaced by its stand-in (redact.StandIn: the token's kind prefix and a
// short hash keyed by the bundle's own key, never stored), a private key by a fresh key of the same type, a client
// certificate by one re-issued for that key with the same subject, issuer
// and validity. The checks never print those values, so analyze on the
// redacted bundle finds what the live run found.

// redactText redacts a text file line by line, keeping every line where it
// was (findings cite config.toml:9): checks' own finders, with stand-ins.
func redactText(b []byte) ([]byte, []string) {
	var what []string
	s := redact.ReplaceSecretValues(string(b), func(key, val string) string {
		what = append(what, key)
		return standInValue(val)
	}, false)
	// A secret under a key that does not say so (a token pasted into
	// output_limit) has a secret's shape: it becomes a stand-in, still a
	// string, so what decodes and what does not stays the same.
	s = redactFreeText(s)
	s = quotedString().ReplaceAllStringFunc(s, func(q string) string {
		if inner := q[1 : len(q)-1]; redact.LooksSecret(inner) && !strings.Contains(inner, "REDACTED-") {
			if !slices.Contains(what, "secret-looking strings") {
				what = append(what, "secret-looking strings")
			}
			return q[:1] + redact.StandIn(inner) + q[:1]
		}
		return q
	})
	return []byte(s), what
}

// quotedString is one string of a TOML array.
var quotedString = lazyre.MustCompile(`"[^"\n]*"|'[^'\n]*'`)

// accountName is a URL user that names an account: lowercase, short.
var accountName = lazyre.MustCompile(`^[a-z][a-z0-9_.-]{0,31}$`)

// inlineValue is one value of an inline table or flow mapping ({x: v}).
var inlineValue = lazyre.MustCompile(`([:=]\s*)("[^"\n]*"|'[^'\n]*'|[^\s,}]+)`)

// bareItem is one unquoted item of a YAML flow sequence ([a, b]).
var bareItem = lazyre.MustCompile(`[^\s\[\],"']+`)

// standInValue is a value with its secret replaced and its syntax kept: a
// quoted string stays a quoted string, an array an array of stand-ins.
func standInValue(val string) string {
	switch {
	case val[0] == '{':
		return inlineValue().ReplaceAllStringFunc(val, func(m string) string {
			sub := inlineValue().FindStringSubmatch(m)
			return sub[1] + standInValue(sub[2])
		})
	case val[0] == '[' && !quotedString().MatchString(val):
		return "[" + bareItem().ReplaceAllStringFunc(val[1:], redact.StandIn)
	case val[0] == '[':
		return quotedString().ReplaceAllStringFunc(val, func(q string) string {
			return q[:1] + redact.StandIn(q[1:len(q)-1]) + q[:1]
		})
	case len(val) >= 2 && (val[0] == '"' || val[0] == '\''):
		return val[:1] + redact.StandIn(val[1:len(val)-1]) + val[:1]
	}
	return redact.StandIn(val)
}

// redactFreeText strips what a secret looks like anywhere: URL userinfo
// and GitLab tokens.
func redactFreeText(s string) string {
	s = redact.ReplaceURLPasswords(s, redact.StandIn)
	s = redact.ReplaceURLUsers(s, func(user string) string {
		if accountName().MatchString(user) && !redact.LooksSecret(user) {
			return user // app, git, gitlab-ci-token: an account, which analyze may need
		}
		return redact.StandIn(user)
	})
	return redact.ReplaceTokens(s, func(_, token string) string { return redact.StandIn(token) })
}

// redactNulList redacts /proc environ (NAME=value\0...) and cmdline (an
// argv, kept by redact.Argv's allow-list: the values of the runner's own
// process options and nothing of a setting) without changing their shape.
func redactNulList(b []byte, argv bool) []byte {
	parts := bytes.Split(b, []byte{0})
	if argv {
		words := make([]string, len(parts))
		for i, p := range parts {
			words[i] = string(p)
		}
		// The kernel ends every argument with a NUL: the empty piece
		// after the last one is no argument.
		n := len(words)
		if n > 0 && words[n-1] == "" {
			n--
		}
		copy(words, redact.Argv(words[:n], redact.StandIn))
		for i, w := range words {
			parts[i] = []byte(redactFreeText(w))
		}
		return bytes.Join(parts, []byte{0})
	}
	for i, p := range parts {
		s := string(p)
		if k, v, ok := strings.Cut(s, "="); ok && redact.SecretKey(strings.TrimLeft(k, "-")) && !strings.HasPrefix(v, "/") {
			s = k + "=" + redact.StandIn(v)
		}
		parts[i] = []byte(redactFreeText(s))
	}
	return bytes.Join(parts, []byte{0})
}

// redactJSON walks a JSON document: values under secret-looking keys, env
// entries whose name is secret-looking, and the data of Secrets become
// stand-ins; URLs lose their passwords.
func redactJSON(b []byte) []byte {
	var v any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return []byte(redactFreeText(string(b)))
	}
	v = walkJSON(v, "")
	out, err := json.Marshal(v)
	if err != nil {
		return []byte(redactFreeText(string(b)))
	}
	return out
}

func walkJSON(v any, key string) any {
	switch x := v.(type) {
	case map[string]any:
		secretEnv := false
		if n, ok := x["name"].(string); ok && redact.SecretKey(n) {
			secretEnv = true
		}
		for k, e := range x {
			switch {
			case k == "value" && secretEnv:
				if s, ok := e.(string); ok {
					x[k] = redact.StandIn(s)
					continue
				}
			case (k == "data" || k == "stringData") && x["kind"] == "Secret":
				if m, ok := e.(map[string]any); ok {
					for dk, dv := range m {
						if s, ok := dv.(string); ok {
							m[dk] = redact.StandIn(s)
						}
					}
					continue
				}
			}
			x[k] = walkJSON(e, k)
		}
		return x
	case []any:
		for i := range x {
			x[i] = walkJSON(x[i], key)
		}
		return x
	case string:
		if key != "" && redact.SecretKey(key) && !strings.HasPrefix(x, "/") {
			return redact.StandIn(x)
		}
		return redactFreeText(x)
	}
	return v
}

// secretFile says a whole file is a secret: a service-account token, a
// token or password file.
func secretFile(p string) bool {
	base := path.Base(p)
	if base == "passwd" || base == "group" {
		return false // the account databases; shadow is never read
	}
	return redact.SecretKey(strings.TrimSuffix(base, path.Ext(base))) && !strings.HasSuffix(base, ".toml") &&
		!strings.HasSuffix(base, ".yaml") && !strings.HasSuffix(base, ".yml") && !strings.HasSuffix(base, ".conf")
}
