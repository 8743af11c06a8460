package e2e

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/socialwebcomputer/doctor/testkit/cmdtest"
	"github.com/socialwebcomputer/doctor/testkit/testroot"
)

// TestStandInsAreKeyedPerBundle: two runs of the binary on one host write
// two bundles whose stand-ins of the same secrets share nothing (each
// bundle's key is its own, drawn at random and never written), while in
// one bundle a secret that is there twice (two runners with one token, a
// password in two places) has one stand-in. The key itself is in no file
// of the bundle: no 64-hex-digit run is.
func TestStandInsAreKeyedPerBundle(t *testing.T) {
	bin := cmdtest.BuildDoctor(t)
	root := testroot.New(t)
	const token, password = "glrt-Zk4xq9RmTe2Wv7LpNs3Y", "Cq7Lm2Xv9Rt4Wp8Ns"
	config := `concurrent = 2
[[runners]]
  name = "one"
  url = "https://gitlab.example.invalid/"
  token = "` + token + `"
  executor = "docker"
  [runners.cache]
    Type = "s3"
    [runners.cache.s3]
      AccessKey = "AKIAQ7LM2XV9RT4WP8NS"
      SecretKey = "` + password + `"
[[runners]]
  name = "two"
  url = "https://gitlab.example.invalid/"
  token = "` + token + `"
  executor = "docker"
  [runners.docker]
    image = "alpine"
  [runners.cache]
    Type = "s3"
    [runners.cache.s3]
      SecretKey = "` + password + `"
`
	root.GuideRunner(config, nil)
	standIns := func(name string) (tokens, passwords []string, all string) {
		p := filepath.Join(t.TempDir(), name+".tar.gz")
		out, err := exec.Command(bin, "run", "--root", root.Dir, "--offline", "--now", "2026-11-29T12:00:00Z", "-o", "json", "--bundle", p).CombinedOutput()
		if ee, ok := err.(*exec.ExitError); err != nil && !ok || ok && ee.ExitCode() == 3 {
			t.Fatalf("doctor run: %v\n%.2000s", err, out)
		}
		var b strings.Builder
		for n, body := range bundleContents(t, p) {
			b.WriteString(n + "\n" + body + "\n")
			if strings.HasSuffix(n, "/etc/gitlab-runner/config.toml") {
				for _, m := range regexp.MustCompile(`token = "([^"]*)"`).FindAllStringSubmatch(body, -1) {
					tokens = append(tokens, m[1])
				}
				for _, m := range regexp.MustCompile(`SecretKey = "([^"]*)"`).FindAllStringSubmatch(body, -1) {
					passwords = append(passwords, m[1])
				}
			}
		}
		return tokens, passwords, b.String()
	}
	t1, p1, all1 := standIns("first")
	t2, p2, all2 := standIns("second")
	for _, c := range []struct {
		what   string
		one    []string
		other  []string
		secret string
	}{{"token", t1, t2, token}, {"SecretKey", p1, p2, password}} {
		if len(c.one) != 2 || len(c.other) != 2 {
			t.Fatalf("%s: want two stand-ins in each bundle's config.toml, got %q and %q", c.what, c.one, c.other)
		}
		if c.one[0] != c.one[1] || c.other[0] != c.other[1] {
			t.Errorf("%s: one secret, two stand-ins in one bundle: %q, %q", c.what, c.one, c.other)
		}
		if c.one[0] == c.other[0] {
			t.Errorf("%s: two bundles give the secret the same stand-in %q: it is not keyed per bundle", c.what, c.one[0])
		}
		if strings.Contains(c.one[0], c.secret) || !strings.Contains(c.one[0], "REDACTED-") {
			t.Errorf("%s: %q is no stand-in", c.what, c.one[0])
		}
	}
	if !strings.HasPrefix(t1[0], "glrt-REDACTED-") {
		t.Errorf("the token's kind prefix is gone: %q", t1[0])
	}
	for i, all := range []string{all1, all2} {
		if m := regexp.MustCompile(`[0-9a-fA-F]{64}`).FindString(all); m != "" {
			t.Errorf("bundle %d holds a 64-hex-digit run, a key's shape: %s", i+1, m)
		}
		if strings.Contains(all, token) || strings.Contains(all, password) {
			t.Errorf("bundle %d holds a secret", i+1)
		}
	}
}
