package gitlabreach_test

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/BurntSushi/toml"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/checks/client/gitlab/gitlabtest"
	hostilevalues "github.com/socialwebcomputer/doctor/testkit/hostile"
	"github.com/socialwebcomputer/doctor/testkit/testroot"
)

// A url no client is built for is a finding whose fix is sentences and
// the restart of the default unit: the url, whatever it holds, reaches no
// block.
func TestHostileURLReachesNoBlock(t *testing.T) {
	w := newWorld(t, gitlabtest.Options{})
	for _, v := range hostilevalues.Values {
		if !utf8.ValidString(v) {
			continue
		}
		url := "ftp://gitlab.example.invalid/" + v
		var b bytes.Buffer
		if err := toml.NewEncoder(&b).Encode(map[string]any{"runners": []map[string]any{
			{"name": "hostile", "url": url, "token": "glrt-test-token-0123456789", "executor": "kubernetes"}}}); err != nil {
			t.Fatal(err)
		}
		root := testroot.New(t)
		root.Runner(4242, 0, map[string]string{"PATH": "/usr/bin:/bin"})
		root.Write("/etc/gitlab-runner/config.toml", b.String(), 0o600)
		r := reach(t, root, w.settings())
		if len(r.Findings) != 1 {
			t.Errorf("%q: %d findings:\n%s", v, len(r.Findings), text(r))
			continue
		}
		blocks := r.Findings[0].Fix.Blocks()
		if len(blocks) != 1 || blocks[0] != (checks.Step{Kind: checks.KindShell, Text: "sudo systemctl restart gitlab-runner.service"}) {
			t.Errorf("%q: blocks %q", v, blocks)
		}
		if v != "plain" && v != "" && strings.Contains(blocks.String(), v) {
			t.Errorf("%q: the url in a block", v)
		}
	}
}
