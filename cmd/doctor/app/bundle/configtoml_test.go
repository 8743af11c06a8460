package bundle

import (
	"sort"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"

	"github.com/socialwebcomputer/doctor/checks/facts/hostfacts"
	"github.com/socialwebcomputer/doctor/internal/redact"
)

// plantedTOML carries secrets in every string form TOML has, under keys
// the runner does not know, settings no check reads, secret-named keys,
// the job environment and comments; and settings checks read, which stay.
const plantedTOML = `concurrent = 2 # token: glrt-CmtTok8Qz2Lm5Tx9Wk3
# a comment with a password: CmtPw4Kq8Zm2Lx6Tn9
[[runners]]
  name = "planted runner"
  url = "https://gitlab.example.invalid/"
  token = 'glrt-Tk4Qm8Zp2Xw6Lc9Vb3Nh7'
  executor = "kubernetes"
  api_key = """
MlBasic7Qw3Zp9Lx2Mc5Vb8Nh1
second line \
  continued"""
  notes = '''
MlLiteral5Rz1Qm7Tx3Wl8Pn
'''
  pre_build_script = """
export DEPLOY_PASSWORD=ScriptPw2Tq9Lm6Xz3Wb8N
"""
  environment = ["KUBECONFIG=/etc/k.yaml", "FF_USE_FASTZIP=true", "GITHUB_PAT=ghp_EnvPat7Qz2Lm9Tx4Wb5Kd8", "SMTP=mail.example.invalid"]
  [runners.kubernetes]
    namespace = "gitlab-runner"
    helper_image = "registry.example.invalid/helper@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
  [runners.cache.s3]
    AccessKey = "AKIAZQ81PLNTDS3ACCES"
    SecretKey = "s3Sk7Qp2Wm9Xc4Vb6Nz1Ly8Ht3Rj5Fg0Dk"
`

var plantedTOMLSecrets = []string{"CmtTok8Qz2Lm5Tx9Wk3", "CmtPw4Kq8Zm2Lx6Tn9", "glrt-Tk4Qm8Zp2Xw6Lc9Vb3Nh7", "MlBasic7Qw3Zp9Lx2Mc5Vb8Nh1",
	"MlLiteral5Rz1Qm7Tx3Wl8Pn", "ScriptPw2Tq9Lm6Xz3Wb8N", "ghp_EnvPat7Qz2Lm9Tx4Wb5Kd8", "AKIAZQ81PLNTDS3ACCES", "s3Sk7Qp2Wm9Xc4Vb6Nz1Ly8Ht3Rj5Fg0Dk"}

// config.toml is redacted in place by its keys: every line where it was,
// the same keys of the same types, no planted secret in any string form
// or comment, the values checks read kept, and each config line described
// in evidence as it was (config-unknown-keys' evidence replays equal).
func TestRedactConfigTOML(t *testing.T) {
	out, what, err := redactConfigTOML([]byte(plantedTOML))
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	for _, secret := range plantedTOMLSecrets {
		if piece := sharedPiece(s, secret); piece != "" {
			t.Errorf("keeps %q of %q:\n%s", piece, secret, s)
		}
	}
	if strings.Count(s, "\n") != strings.Count(plantedTOML, "\n") {
		t.Errorf("lines moved:\n%s", s)
	}
	for _, keep := range []string{`name = "planted runner"`, `url = "https://gitlab.example.invalid/"`, `namespace = "gitlab-runner"`,
		`"KUBECONFIG=/etc/k.yaml"`, `"FF_USE_FASTZIP=true"`, `"SMTP=mail.example.invalid"`, "sha256:0123456789abcdef", `token = "glrt-REDACTED-`} {
		if !strings.Contains(s, keep) {
			t.Errorf("lost %q:\n%s", keep, s)
		}
	}
	before, after := decodeFlat(t, plantedTOML), decodeFlat(t, s)
	if len(before) != len(after) {
		t.Fatalf("keys differ: %v / %v", keysOf(before), keysOf(after))
	}
	lines := strings.Split(plantedTOML, "\n")
	outLines := strings.Split(s, "\n")
	for k, v := range before {
		w, ok := after[k]
		if !ok {
			t.Errorf("%s is gone", k)
			continue
		}
		if vs, isStr := v.(string); isStr {
			ws, _ := w.(string)
			last := k[strings.LastIndexByte(k, '.')+1:]
			if k != "runners.token" && k != "runners.cache.s3.AccessKey" && k != "runners.cache.s3.SecretKey" &&
				redact.DescribeString(last, vs) != redact.DescribeString(last, ws) {
				t.Errorf("%s is described %s, was %s", k, redact.DescribeString(last, ws), redact.DescribeString(last, vs))
			}
		}
	}
	for i := range lines {
		if strings.Contains(lines[i], "=") && !strings.Contains(lines[i], `"""`) && !strings.Contains(lines[i], "'''") &&
			strings.HasPrefix(strings.TrimSpace(lines[i]), "name") && lines[i] != outLines[i] {
			t.Errorf("line %d changed: %q -> %q", i+1, lines[i], outLines[i])
		}
	}
	if len(what) == 0 {
		t.Error("says nothing of what it replaced")
	}
}

// A multi-line string keeps its line count whatever stands in for it, so
// the keys after it stay on their lines.
func TestRedactConfigTOMLKeepsLinesAfterMultiline(t *testing.T) {
	in := "[[runners]]\n  notes = \"\"\"a\\\n\n\n   b MlPad7Qw3Zp9Lx2Mc5Vb8Nh1\"\"\"\n  name = \"x\"\n"
	out, _, err := redactConfigTOML([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Split(string(out), "\n")[5] != `  name = "x"` || strings.Contains(string(out), "MlPad7Qw3Zp9") {
		t.Errorf("got:\n%s", out)
	}
}

func decodeFlat(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if _, err := toml.Decode(s, &m); err != nil {
		t.Fatal(err)
	}
	out := map[string]any{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				walk(strings.TrimPrefix(prefix+"."+k, "."), e)
			}
		case []map[string]any:
			for _, e := range x {
				walk(prefix, e)
			}
		case []any:
			for i, e := range x {
				walk(prefix+"["+string(rune('0'+i))+"]", e)
			}
		default:
			out[prefix] = v
		}
	}
	walk("", m)
	return out
}

func keysOf(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// sharedPiece is secret, or a 12-character piece of it, when s holds one.
func sharedPiece(s, secret string) string {
	if len(secret) <= 12 {
		if strings.Contains(s, secret) {
			return secret
		}
		return ""
	}
	for i := 0; i+12 <= len(secret); i++ {
		if strings.Contains(s, secret[i:i+12]) {
			return secret[i : i+12]
		}
	}
	return ""
}

// An environ keeps its names and shape; only the variables checks read
// keep their values, without URL userinfo.
func TestRedactEnviron(t *testing.T) {
	in := "KUBECONFIG=/etc/k.yaml\x00DOCKER_HOST=tcp://u:DkrPw5Qz2Lm9Tx4Wb@127.0.0.1:2376\x00SMTP_RELAY=EnvSmtp8Kq2Zm6Tx1Lp\x00EMPTY=\x00"
	out, _ := redactEnviron([]byte(in))
	s := string(out)
	for _, secret := range []string{"DkrPw5Qz2Lm9Tx4Wb", "EnvSmtp8Kq2Zm6Tx1Lp"} {
		if strings.Contains(s, secret) {
			t.Errorf("keeps %q: %q", secret, s)
		}
	}
	vars := hostfacts.ParseEnviron(out)
	if vars["KUBECONFIG"] != "/etc/k.yaml" || !strings.HasSuffix(vars["DOCKER_HOST"], "@127.0.0.1:2376") || vars["EMPTY"] != "" ||
		len(vars) != 4 || strings.Count(s, "\x00") != 4 {
		t.Errorf("shape or read values lost: %q", s)
	}
}
