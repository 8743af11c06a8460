package wrap

import (
	"reflect"
	"strings"
	"testing"
)

func TestTokens(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"a b  c", []string{"a", "b", "c"}},
		{"run `sudo systemctl edit gitlab-runner.service`, then", []string{"run", "`sudo systemctl edit gitlab-runner.service`,", "then"}},
		{"`one` and `two words`", []string{"`one`", "and", "`two words`"}},
		{"an odd ` backtick quotes nothing", []string{"an", "odd", "`", "backtick", "quotes", "nothing"}},
	} {
		if got := Tokens(c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Tokens(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestWords(t *testing.T) {
	for _, c := range []struct {
		in          string
		width       int
		first, rest string
		want        []string
	}{
		{"the quick brown fox", 10, "", "", []string{"the quick", "brown fox"}},
		{"the quick brown fox", 12, "  ", "    ", []string{"  the quick", "    brown", "    fox"}},
		// A token longer than the room keeps a line of its own, without
		// the indent that would push it over.
		{"see /a/very/long/path/name here", 12, "  ", "  ", []string{"  see", "/a/very/long/path/name", "  here"}},
		// A quoted command is one token.
		{"run `a b c` now", 8, "", "", []string{"run", "`a b c`", "now"}},
		// A prefix that is not an indent stays.
		{"# 1. a-very-long-check-name: fix", 10, "", "#   ", []string{"# 1.", "#   a-very-long-check-name:", "#   fix"}},
		{"", 10, "  ", "  ", []string{""}},
		{"no wrap at zero", 0, "> ", "", []string{"> no wrap at zero"}},
	} {
		if got := Words(c.in, c.width, c.first, c.rest); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Words(%q, %d) = %q, want %q", c.in, c.width, got, c.want)
		}
	}
}

func TestLayout(t *testing.T) {
	segs := []Segment{
		Prose("Give the service its environment with a drop-in, then reload it:"),
		Block("shell", "sudo systemctl daemon-reload && sudo systemctl restart gitlab-runner.service"),
		Prose("Nothing else changes."),
	}
	got := Layout(segs, 30, "  ")
	want := []string{
		"  Give the service its",
		"  environment with a drop-in,",
		"  then reload it:",
		"sudo systemctl daemon-reload && sudo systemctl restart gitlab-runner.service",
		"  Nothing else changes.",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Layout =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if b := Breaks(strings.Join(got, "\n"), 30, func(l string) bool { return strings.HasPrefix(l, "sudo ") }); len(b) != 0 {
		t.Errorf("Layout's own output has breaks: %v", b)
	}
}

func TestBreaks(t *testing.T) {
	out := strings.Join([]string{
		"short",
		"abcd efgh ijkl",   // folds at 8: "efg|h"
		"abcd efg ijkl",    // folds at 8, after "efg": at a space
		"/one/long/path/x", // one token, no indent: whole
		"  /one/long/path", // indented: the indent could have gone
		"sudo a b c d e f", // whole by the caller's word
		"# /a/long/path",   // a comment's one token: whole
		"#  /a/long/path",  // not one token after "# "
		"ab 日本語",           // the wide 語 does not fit at 7 of 8: 日本|語
	}, "\n")
	got := Breaks(out, 8, func(l string) bool { return strings.HasPrefix(l, "sudo") })
	want := []Break{{2, "efg|h"}, {5, "/one/l|ong/path"}, {8, "/a/lo|ng/path"}, {9, "日本|語"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Breaks = %v, want %v", got, want)
	}
	// Words never makes a break, at any width.
	s := "Download a new kubeconfig and install it: `sudo install -m 0600 -o root x.yaml /etc/gitlab-runner/tenant-ci/kubeconfig.yaml`. See https://docs.gitlab.com/runner/shells/#shell-profile-loading for more."
	for w := 10; w <= 200; w++ {
		lines := Words(s, w, "    ", "    ")
		if b := Breaks(strings.Join(lines, "\n"), w, nil); len(b) != 0 {
			t.Fatalf("width %d: %v in\n%s", w, b, strings.Join(lines, "\n"))
		}
	}
}

func TestHang(t *testing.T) {
	for _, c := range []struct {
		in    string
		width int
		want  []string
	}{
		{"12:00:00  ok  4 node-ready   +30s  short", 80, []string{"12:00:00  ok  4 node-ready   +30s  short"}},
		{"12:00:00  ok  4 node-ready   +30s  node rented-1 is Ready", 44, []string{"12:00:00  ok  4 node-ready   +30s  node", "      rented-1 is Ready"}},
		{"     5  run `a b c` now", 14, []string{"     5  run", "      `a b c`", "      now"}},
		{"  x /a/path/longer/than/the/width", 12, []string{"  x", "/a/path/longer/than/the/width"}},
	} {
		got := Hang(c.in, c.width, "      ")
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("Hang(%q, %d) = %q, want %q", c.in, c.width, got, c.want)
		}
		if b := Breaks(strings.Join(got, "\n"), c.width, nil); len(b) > 0 {
			t.Errorf("Hang(%q, %d) breaks %v", c.in, c.width, b)
		}
	}
}

func TestParagraphsKeepALinesIndent(t *testing.T) {
	got := Paragraphs("metadata:\n  name: gitlab-runner", 40, "    ", "    ")
	want := []string{"    metadata:", "      name: gitlab-runner"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Paragraphs = %q, want %q", got, want)
	}
}
