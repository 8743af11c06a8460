package bundle

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/socialwebcomputer/doctor/checks/facts/hostfacts"
	"github.com/socialwebcomputer/doctor/internal/redact"
	"github.com/socialwebcomputer/doctor/runnerconfig"
)

// config.toml is redacted by its TOML keys, value by value, in place: the
// scanner that locates keys for findings (runnerconfig.Spans) says where
// each value and comment is written, whatever its form (basic, literal,
// and both multi-line forms), and each is rewritten on the lines it had, so
// config.toml:9 in a finding is line 9 of the bundle's copy.
//
// Which values stay is decided by what the checks read of them:
//   - a key the runner does not know (config-unknown-keys) is read only as
//     its description: its strings become stand-ins described the same
//     (redact.StandInLike: same length, as secret-looking, nothing of it);
//   - the job's environment keeps its names, and the values of the
//     variables a check reads (hostfacts.JobVariableRead); the others become
//     such stand-ins too;
//   - a secret-named key (token, SecretKey, password) is a credential:
//     its stand-in is redact.StandIn, which keeps a token's kind and which
//     the requests a bundle records are keyed by;
//   - a setting no check reads (a script, a description: its field of
//     runnerconfig's types is selected by no code, configfields.go) is
//     stood in the same way;
//   - a setting a check reads (an image, a namespace, a URL) stays,
//     through the pattern net (URL userinfo, GitLab tokens, secret-named
//     assignments inside the value);
//   - comments are read by nothing: each becomes dashes of its length.
//
// The text is decoded before (only a file that decodes is redacted this
// way; the others are described, see redactFile) and after: the copy must
// decode to the same keys, of the same types, with the values intended.

// redactConfigTOML rewrites config.toml text with its secrets replaced.
func redactConfigTOML(b []byte) ([]byte, []string, error) {
	var before map[string]any
	md, err := toml.Decode(string(b), &before)
	if err != nil {
		return nil, nil, fmt.Errorf("config.toml does not decode: %w", redact.QuotesDescribed(err))
	}
	known := knownKeys(b)
	var out []byte
	var what []string
	note := func(w string) {
		for _, have := range what {
			if have == w {
				return
			}
		}
		what = append(what, w)
	}
	last := 0
	for _, sp := range runnerconfig.Spans(b) {
		raw := string(b[sp.Start:sp.End])
		rewritten := raw
		switch {
		case sp.Kind == runnerconfig.Comment:
			rewritten = "#" + strings.Repeat("-", len([]rune(raw))-1)
			if rewritten != raw {
				note("comments")
			}
		case sp.Kind.IsString():
			v, err := tomlString(raw)
			if err != nil {
				return nil, nil, err
			}
			nv, why := tomlStandIn(sp.Key, known(sp.Key), v)
			if nv != v {
				rewritten = encodeTOMLString(nv, sp.Kind, strings.Count(raw, "\n"))
				note(why)
			}
		}
		out = append(append(out, b[last:sp.Start]...), rewritten...)
		last = sp.End
	}
	out = append(out, b[last:]...)
	if err := sameShape(b, out, md); err != nil {
		return nil, nil, err
	}
	return out, what, nil
}

// knownKeys says whether a key is one the runner decodes: not under any
// of the keys runnerconfig.Decode leaves undecoded.
func knownKeys(b []byte) func(toml.Key) bool {
	_, md, err := runnerconfig.Decode(b)
	if err != nil {
		// The runner refuses the file; nothing in it is read as a setting.
		return func(toml.Key) bool { return false }
	}
	undecoded := md.Undecoded()
	return func(k toml.Key) bool {
		for _, u := range undecoded {
			if len(u) <= len(k) && reflect.DeepEqual([]string(u), []string(k[:len(u)])) {
				return false
			}
		}
		return true
	}
}

// tomlStandIn is what stands in for v, a string under key, and why.
func tomlStandIn(key toml.Key, known bool, v string) (string, string) {
	name := ""
	if len(key) > 0 {
		name = key[len(key)-1]
	}
	switch {
	case !known:
		return redact.StandInLike(name, v), "values of keys the runner does not know"
	case key.String() == "runners.environment":
		// The job's variables: names stay, and the values the checks read
		// (feature flags, the job's KUBECONFIG).
		if n, _, ok := strings.Cut(v, "="); !ok || !hostfacts.JobVariableRead(n) {
			return redact.StandInLike(name, v), "values of job variables no check reads"
		}
	case redact.SecretKey(name) && v != "" && !strings.HasPrefix(v, "/"):
		return redact.StandIn(v), "the value of " + key.String()
	}
	if f, ok := configField(key); !ok || !configFieldRead(f) {
		return redact.StandInLike(name, v), "values of settings no check reads"
	}
	kept := redact.ReplaceSecretValues(v, func(_, val string) string { return standInValue(val) }, false)
	return redactFreeText(kept), "secrets inside the value of " + key.String()
}

// tomlString decodes one string as it is written, with the TOML library.
func tomlString(raw string) (string, error) {
	var m map[string]any
	if _, err := toml.Decode("v = "+raw, &m); err != nil {
		return "", fmt.Errorf("a config.toml string does not decode: %w", redact.QuotesDescribed(err))
	}
	s, ok := m["v"].(string)
	if !ok {
		return "", errors.New("a config.toml string decodes to another type")
	}
	return s, nil
}

// encodeTOMLString writes s as a basic string: on one line for a one-line
// form, and for a multi-line form over exactly lines+1 lines, padding with
// a line-ending backslash (which the decoder drops with the newlines after
// it) so that the lines below stay where they were.
func encodeTOMLString(s string, kind runnerconfig.SpanKind, lines int) string {
	if kind == runnerconfig.BasicString || kind == runnerconfig.LiteralString {
		return `"` + escapeTOML(s) + `"`
	}
	body, raw := escapeTOMLMultiline(s, lines)
	pad := ""
	if rest := lines - raw; rest > 0 {
		pad = `\` + strings.Repeat("\n", rest)
	}
	return `"""` + body + pad + `"""`
}

// escapeTOML escapes s for a basic string.
func escapeTOML(s string) string {
	var b strings.Builder
	for _, r := range s {
		b.WriteString(escapeRune(r))
	}
	return b.String()
}

// escapeTOMLMultiline escapes s for a multi-line basic string, writing up
// to lines of its newlines as newlines (not the first character: a newline
// right after the opening quotes is dropped) and the rest escaped; raw is
// how many it wrote as newlines.
func escapeTOMLMultiline(s string, lines int) (string, int) {
	var b strings.Builder
	raw := 0
	for i, r := range s {
		if r == '\n' && i > 0 && raw < lines {
			b.WriteByte('\n')
			raw++
			continue
		}
		b.WriteString(escapeRune(r))
	}
	return b.String(), raw
}

func escapeRune(r rune) string {
	switch r {
	case '"':
		return `\"`
	case '\\':
		return `\\`
	case '\n':
		return `\n`
	case '\r':
		return `\r`
	case '\t':
		return `\t`
	}
	if r < 0x20 || r == 0x7f {
		return fmt.Sprintf(`\u%04X`, r)
	}
	return string(r)
}

// sameShape checks the rewrite: the same number of lines, and the same
// keys of the same types as the original decoded to.
func sameShape(before, after []byte, md toml.MetaData) error {
	if strings.Count(string(before), "\n") != strings.Count(string(after), "\n") {
		return errors.New("redacting config.toml moved its lines")
	}
	var m map[string]any
	md2, err := toml.Decode(string(after), &m)
	if err != nil {
		return fmt.Errorf("config.toml redacted does not decode: %w", redact.QuotesDescribed(err))
	}
	k1, k2 := md.Keys(), md2.Keys()
	if len(k1) != len(k2) {
		return errors.New("config.toml redacted has other keys")
	}
	for i := range k1 {
		if k1[i].String() != k2[i].String() || md.Type(k1[i]...) != md2.Type(k2[i]...) {
			return fmt.Errorf("config.toml redacted differs at %s", k1[i])
		}
	}
	return nil
}
