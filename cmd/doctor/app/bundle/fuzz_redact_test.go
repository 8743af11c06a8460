package bundle

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	"go.yaml.in/yaml/v3"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/socialwebcomputer/doctor/checks/facts/hostfacts"
	"github.com/socialwebcomputer/doctor/internal/redact"
)

// The decoding redactors, fuzzed with the property the bundle promises: no
// secret survives, and what the checks read decodes the same.

// hiddenPieces fails when out keeps a 12-character piece of what evidence
// hides of v, a string set under key (hiddenSegments).
func hiddenPieces(t *testing.T, what, key, v, out string) {
	t.Helper()
	shown := redact.DescribeString(key, v)
	var segs []string
	for _, seg := range hiddenSegments(key, v) {
		// A token's kind and PEM armour are kept by design: no secret.
		segs = append(segs, keptWords.Split(seg, -1)...)
	}
	for _, seg := range segs {
		for i := 0; i+12 <= len(seg); i++ {
			// A piece evidence shows elsewhere in v is no leak.
			if w := seg[i : i+12]; strings.Contains(out, w) && !strings.Contains(shown, w) {
				t.Fatalf("%s: %q of %q survives, though evidence shows it as %s", what, w, v, redact.DescribeString(key, v))
			}
		}
	}
}

// keptWords are what a stand-in keeps of a secret to look like one.
var keptWords = regexp.MustCompile(`-----BEGIN|-----END|glrtr|glrt|glpat|glcbt|gldt|glptt|glft|glimt|glagent|GR1348941`)

// hiddenSegments are the parts of v that evidence (redact.DescribeString)
// does not show: all of it, or of NAME=value the value's, or of a URL its
// userinfo, query and fragment; none of what it quotes.
func hiddenSegments(key, v string) []string {
	d := redact.DescribeString(key, v)
	if d == fmt.Sprintf("%q", v) {
		return nil
	}
	if name, val, ok := strings.Cut(v, "="); ok && strings.HasPrefix(d, `"`+name+"=") {
		return hiddenSegments(name, val)
	}
	if scheme, rest, ok := strings.Cut(v, "://"); ok && strings.HasPrefix(d, `"`+strings.ToLower(scheme)+"://") {
		end := len(rest)
		if i := strings.IndexAny(rest, "/?#"); i >= 0 {
			end = i
		}
		var segs []string
		if at := strings.LastIndexByte(rest[:end], '@'); at >= 0 {
			segs = append(segs, rest[:at])
		}
		if i := strings.IndexAny(rest[end:], "?#"); i >= 0 {
			segs = append(segs, rest[end+i:])
		}
		return segs
	}
	return []string{v}
}

// FuzzRedactConfigTOML: a config.toml that decodes is rewritten on the
// lines it had, to the same keys of the same types; every string of a key
// the runner does not know or a setting no check reads is described as it
// was, and keeps nothing its description hides.
func FuzzRedactConfigTOML(f *testing.F) {
	f.Add(plantedTOML)
	f.Add("a = '''\nx\n'''\nb = \"\"\"\\\n\n y\"\"\"\n")
	f.Add("[[runners]]\n  name = \"x\"\n  api_key = \"ak_Zq81PlnTdApiKey5520x\" # c\n  environment = [\"A=b\", 'C=d']\n")
	f.Fuzz(func(t *testing.T, data string) {
		var before map[string]any
		md, err := toml.Decode(data, &before)
		if err != nil {
			return
		}
		out, _, err := redactConfigTOML([]byte(data))
		if err != nil {
			return // described in the bundle, not copied
		}
		if strings.Count(string(out), "\n") != strings.Count(data, "\n") {
			t.Fatalf("lines moved:\n%q\n%q", data, out)
		}
		var after map[string]any
		if _, err := toml.Decode(string(out), &after); err != nil {
			t.Fatalf("the rewrite does not decode: %v\n%q", err, out)
		}
		known := knownKeys([]byte(data))
		walkPair(t, nil, before, after, func(key toml.Key, v, w string) {
			name := key[len(key)-1]
			f, ok := configField(key)
			hidden := !known(key) || !ok || !configFieldRead(f)
			if !hidden || key.String() == "runners.environment" {
				return
			}
			d := redact.DescribeString(name, v)
			if !strings.Contains(w, "REDACTED-") && redact.DescribeString(name, w) != d {
				t.Fatalf("%s: %q is described %s, was %s", key, w, redact.DescribeString(name, w), d)
			}
			hiddenPieces(t, key.String(), name, v, w)
		})
		_ = md
	})
}

// walkPair calls f with each string of a and the one in its place in b,
// which must have the same shape.
func walkPair(t *testing.T, key toml.Key, a, b any, f func(toml.Key, string, string)) {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			t.Fatalf("%s: a table became %T", key, b)
		}
		for k, v := range x {
			walkPair(t, append(append(toml.Key{}, key...), k), v, y[k], f)
		}
	case []map[string]any:
		y, ok := b.([]map[string]any)
		if !ok || len(x) != len(y) {
			t.Fatalf("%s: an array of tables became %T", key, b)
		}
		for i := range x {
			walkPair(t, key, x[i], y[i], f)
		}
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			t.Fatalf("%s: an array became %T", key, b)
		}
		for i := range x {
			walkPair(t, key, x[i], y[i], f)
		}
	case string:
		y, ok := b.(string)
		if !ok {
			t.Fatalf("%s: a string became %T", key, b)
		}
		if len(key) > 0 {
			f(key, x, y)
		}
	default:
		if fmt.Sprintf("%T", a) != fmt.Sprintf("%T", b) {
			t.Fatalf("%s: %T became %T", key, a, b)
		}
	}
}

// FuzzStandInLike: a stand-in is described as the value was (or is the
// marked StandIn where no such one exists), and keeps nothing of the value
// its description hides.
func FuzzStandInLike(f *testing.F) {
	for _, s := range []string{"ak_Zq81PlnTdApiKey5520x", "https://hooks:WbhkPw9rQz7LmN2vX4@chat.example.invalid/x", "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMIK7MDENGbPxRfiCY",
		"glrt-Tk4Qm8Zp2Xw6Lc9Vb3Nh7", "hello world", "/etc/path", "!!!!!!!!!!!!!!!!", "-----BEGIN RSA PRIVATE KEY-----\nMIIE"} {
		f.Add("api_key", s)
		f.Add("notes", s)
	}
	f.Fuzz(func(t *testing.T, key, s string) {
		out := redact.StandInLike(key, s)
		d := redact.DescribeString(key, s)
		if !strings.Contains(out, "REDACTED-") && redact.DescribeString(key, out) != d {
			t.Fatalf("%q is described %s, %q was %s", out, redact.DescribeString(key, out), s, d)
		}
		if redact.StandInLike(key, s) != out {
			t.Fatal("not deterministic")
		}
		hiddenPieces(t, key, key, s, out)
	})
}

// FuzzRedactKubeconfig: a kubeconfig client-go loads is rewritten to one
// it loads, with no token, password, user name, exec argument or variable
// value kept, and the same contexts, clusters and users.
func FuzzRedactKubeconfig(f *testing.F) {
	doc, _ := kubeconfigShapes(f)
	f.Add(doc)
	f.Add("apiVersion: v1\nkind: Config\nusers:\n- {name: u, user: {token: Tok7Qw3Zp9Lx2Mc5Vb8Nh1 # c\n}}\n")
	f.Add(`{"apiVersion":"v1","kind":"Config","users":[{"name":"u","user":{"password":"JsonPw7Qz2Lm9Tx4Wb","username":"JsonUsr3Kq8Zm4Tx"}}]}`)
	f.Fuzz(func(t *testing.T, data string) {
		orig, err := clientcmd.Load([]byte(data))
		if err != nil {
			return
		}
		k, err := parseKubeconfig([]byte(data))
		if err != nil {
			return
		}
		names := mappingKeys(k)
		out, _, err := redactKubeconfig(newStandIns(), k)
		if err != nil {
			return // described in the bundle, not copied
		}
		got, err := clientcmd.Load(out)
		if err != nil {
			t.Fatalf("the rewrite does not load: %v", err)
		}
		if len(got.AuthInfos) != len(orig.AuthInfos) || len(got.Contexts) != len(orig.Contexts) || len(got.Clusters) != len(orig.Clusters) ||
			got.CurrentContext != orig.CurrentContext {
			t.Fatalf("the rewrite loads to another kubeconfig")
		}
		for name, u := range orig.AuthInfos {
			secrets := []string{u.Token, u.Password, u.Username}
			if e := u.Exec; e != nil {
				secrets = append(secrets, e.Args...)
				for _, v := range e.Env {
					secrets = append(secrets, v.Value)
				}
			}
			if a := u.AuthProvider; a != nil {
				for _, v := range a.Config {
					secrets = append(secrets, v)
				}
			}
			for _, s := range secrets {
				// A mapping key is a name, kept by design, whatever it spells.
				if len(s) >= 12 && !strings.Contains(s, "REDACTED-") && !inKey(names, s) && bytes.Contains(out, []byte(s)) {
					t.Fatalf("user %s: %q kept", name, s)
				}
			}
		}
	})
}

// mappingKeys are the keys of every mapping of k.
func mappingKeys(k *kubeDoc) map[string]bool {
	out := map[string]bool{}
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.MappingNode {
			for i := 0; i < len(n.Content); i += 2 {
				out[n.Content[i].Value] = true
			}
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	for _, d := range k.docs {
		walk(d)
	}
	return out
}

// inKey says s is part of one of the keys.
func inKey(keys map[string]bool, s string) bool {
	for k := range keys {
		if strings.Contains(k, s) {
			return true
		}
	}
	return false
}

// FuzzRedactEnviron: an environ keeps its entries, names and NULs; the
// values of variables no check reads are not kept.
func FuzzRedactEnviron(f *testing.F) {
	f.Add([]byte("KUBECONFIG=/etc/k.yaml\x00SMTP_RELAY=EnvSmtp8Kq2Zm6Tx1Lp\x00"))
	f.Add([]byte("A=\x00B=c=d\x00HOME=/root\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if hostfacts.CheckEnviron(b) != nil {
			return
		}
		out, _ := redactEnviron(b)
		if bytes.Count(out, []byte{0}) != bytes.Count(b, []byte{0}) {
			t.Fatalf("entries changed: %q", out)
		}
		// Entry by entry, the value only: a name may hold its own value
		// (0000E00000000000=E00000000000, FuzzRedactEnviron/a2439d5133a2dc67),
		// and names are kept.
		outs := bytes.Split(out, []byte{0})
		for i, kv := range bytes.Split(b, []byte{0}) {
			name, v, ok := strings.Cut(string(kv), "=")
			_, kept, _ := strings.Cut(string(outs[i]), "=")
			if ok && !hostfacts.ProcessVariableRead(name) && len(v) >= 12 && !strings.Contains(v, "REDACTED-") && strings.Contains(kept, v) {
				t.Fatalf("%s's value kept: %q", name, out)
			}
		}
	})
}
