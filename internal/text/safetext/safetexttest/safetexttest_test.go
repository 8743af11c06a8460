package safetexttest

import (
	"strings"
	"testing"
)

// TestMarkdownFindsWhatGitLabForms: the checker itself finds each thing
// GitLab would form in prose, and none of them inside code.
func TestMarkdownFindsWhatGitLabForms(t *testing.T) {
	for _, c := range []struct {
		md   string
		want string // a word of the problem; "" for none
	}{
		{"see https://evil.invalid/x", "autolink"},
		{"also \\[\\[\\_TOC\\_\\]\\]", "table of contents"},
		{"see www.evil.invalid", "autolink"},
		{"mail me@evil.invalid", "autolink"},
		{"issue #1", "issue"},
		{"mr !1", "merge request"},
		{"cross group/project#3", "issue"},
		{"label ~bug", "label"},
		{`label ~"two words"`, "label"},
		{"milestone %v1", "milestone"},
		{"snippet $5", "snippet"},
		{"epic &6", "epic"},
		{"[[_TOC_]]", "table of contents"},
		{"[TOC]", "table of contents"},
		{"hi :smile:", "emoji"},
		{"commit deadbeef1", "commit"},
		{"jira ABC-123", "tracker"},
		{"ping @all", "mention"},
		{"alert ^alert#8", "alert"},
		{"a `#1` `www.x.invalid` `~bug` `:smile:` `deadbeef1` `ABC-123` `me@x.invalid` `[[_TOC_]]` b", ""},
		{"plain words, 51200 KB (ok): done.", ""},
	} {
		_, problems := Markdown([]byte(c.md+"\n"), nil)
		got := strings.Join(problems, "; ")
		switch {
		case c.want == "" && got != "":
			t.Errorf("%q: %s", c.md, got)
		case c.want != "" && !strings.Contains(got, c.want):
			t.Errorf("%q: want a problem naming %q, got %q", c.md, c.want, got)
		}
	}
}
